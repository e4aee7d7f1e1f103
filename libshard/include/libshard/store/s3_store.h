// The S3 and https stores on a chosen transport (normally OpenStore() in
// object_store.h does this with libcurl). Tests give them a fake transport.
#ifndef LIBSHARD_STORE_S3_STORE_H_
#define LIBSHARD_STORE_S3_STORE_H_

#include <memory>
#include <string>

#include "libshard/store/http_transport.h"
#include "libshard/store/object_store.h"
#include "libshard/store/s3_config.h"

namespace libshard::store {

// The bucket `bucket` as configured by `config`, through `transport`.
// Requests carry x-amz-content-sha256 (the hex SHA-256 of the body; that of
// the empty string for requests without one) and x-amz-security-token when
// there is a session token, and are signed by libcurl.
std::unique_ptr<ObjectStore> NewS3Store(const S3Config& config, const std::string& bucket,
                                        std::shared_ptr<HttpTransport> transport);

// A read-only store over `base` ("https://host[:port]"): keys are paths.
// Head, GetRange (Range requests), GetSmall and GetVerified; Put, PutFile and
// List are Unimplemented.
std::unique_ptr<ObjectStore> NewHttpsStore(const std::string& base, const RetryOptions& retry,
                                           std::shared_ptr<HttpTransport> transport);

// A local folder: keys are paths below `root` ("" = keys are paths as given).
std::unique_ptr<ObjectStore> NewLocalStore(const std::string& root);

}  // namespace libshard::store

#endif  // LIBSHARD_STORE_S3_STORE_H_
