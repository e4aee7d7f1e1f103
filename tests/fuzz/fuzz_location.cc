// Fuzzes the object URL parser (store/object_store.h): s3://, https:// and
// local paths come from users and from manifests. ParseLocation must never
// crash; what it accepts keeps its word: an object URL (IsObjectUrl) is
// never taken for a local path, a bucket holds only the characters S3
// allows, a web server's root has no user-info, keys carry no leading '/'.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "libshard/store/object_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace store = libshard::store;
  const std::string url(reinterpret_cast<const char*>(data), size);
  const libshard::StatusOr<store::Location> loc = store::ParseLocation(url);
  if (!loc.ok()) {
    if (loc.status().code() != libshard::StatusCode::kInvalidArgument) std::abort();
    return 0;
  }
  if (loc->url != url) std::abort();
  const bool local = loc->scheme == store::Location::Scheme::kLocal;
  if (store::IsObjectUrl(url) == local) std::abort();
  if (local) {
    if (loc->key != url || !loc->root.empty()) std::abort();
    return 0;
  }
  if (loc->root.empty() || (!loc->key.empty() && loc->key.front() == '/')) std::abort();
  if (loc->scheme == store::Location::Scheme::kS3) {
    for (char c : loc->root) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '-' || c == '_';
      if (!ok) std::abort();
    }
  } else if (loc->root.find('@') != std::string::npos ||
             loc->root.find('/', loc->root.find("://") + 3) != std::string::npos) {
    std::abort();
  }
  const std::string joined = store::JoinKey(loc->key, "x");
  if (joined.empty() || joined.front() == '/') std::abort();
  return 0;
}
