// The S3 store on a chosen transport (normally OpenStore() in
// object_store.h does this with libcurl). Tests give it a fake transport.
#ifndef LIBSHARD_STORE_S3_STORE_H_
#define LIBSHARD_STORE_S3_STORE_H_

#include <memory>
#include <string>

#include "libshard/store/http_transport.h"
#include "libshard/store/object_store.h"
#include "libshard/store/store_config.h"

namespace libshard::store {

// The bucket `bucket` as configured by `config`, through `transport`.
// Requests carry x-amz-content-sha256 (the hex SHA-256 of the body; that of
// the empty string for requests without one) and x-amz-security-token when
// there is a session token, and are signed by libcurl. Every method of
// ObjectStore is implemented.
std::unique_ptr<ObjectStore> NewS3Store(const StoreConfig& config, const std::string& bucket,
                                        std::shared_ptr<HttpTransport> transport);

}  // namespace libshard::store

#endif  // LIBSHARD_STORE_S3_STORE_H_
