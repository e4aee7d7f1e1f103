// The web-server store: objects read from an https:// (or http://) server,
// keys being paths below a base URL. OpenStore() in object_store.h makes it
// for https:// locations with libcurl; tests give it a fake transport.
#ifndef LIBSHARD_STORE_WEB_SERVER_STORE_H_
#define LIBSHARD_STORE_WEB_SERVER_STORE_H_

#include <memory>
#include <string>

#include "libshard/store/http_transport.h"
#include "libshard/store/object_store.h"
#include "libshard/store/store_config.h"

namespace libshard::store {

// A read-only store over `base` ("https://host[:port]"): keys are paths.
// Head, GetRange (Range requests), GetSmall, GetVerified and
// GetVerifiedParts; Put, PutFile and List are Unimplemented.
std::unique_ptr<ObjectStore> NewWebServerStore(const std::string& base, const RetryOptions& retry,
                                               std::shared_ptr<HttpTransport> transport);

}  // namespace libshard::store

#endif  // LIBSHARD_STORE_WEB_SERVER_STORE_H_
