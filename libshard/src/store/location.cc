// Object URLs: parsing, key joining, and the store a location names.
#include <cctype>

#include "libshard/store/local_store.h"
#include "libshard/store/object_store.h"
#include "libshard/store/s3_store.h"
#include "libshard/store/store_config.h"
#include "libshard/store/web_server_store.h"
#include "libshard/util/strings.h"

namespace libshard::store {
namespace {

using util::StartsWith;

}  // namespace

bool IsObjectUrl(std::string_view path) {
  return StartsWith(path, "s3://") || StartsWith(path, "https://") || StartsWith(path, "http://");
}

StatusOr<Location> ParseLocation(const std::string& url) {
  Location loc;
  loc.url = url;
  const size_t sep = url.find("://");
  bool has_scheme = sep != std::string::npos && sep > 0;
  for (size_t i = 0; has_scheme && i < sep; ++i) {
    const char c = url[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') has_scheme = false;
  }
  if (!has_scheme) {
    loc.scheme = Location::Scheme::kLocal;
    loc.key = url;
    return loc;
  }
  const std::string scheme = url.substr(0, sep);
  std::string rest = url.substr(sep + 3);
  const size_t slash = rest.find('/');
  std::string host = rest.substr(0, slash);
  std::string key = slash == std::string::npos ? "" : rest.substr(slash + 1);
  while (!key.empty() && key.front() == '/') key.erase(0, 1);
  if (scheme == "s3") {
    if (host.empty()) return InvalidArgumentError(url + ": no bucket (expected s3://BUCKET/PREFIX)");
    for (char c : host) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') {
        return InvalidArgumentError(url + ": '" + host + "' is not a bucket name");
      }
    }
    loc.scheme = Location::Scheme::kS3;
    loc.root = host;
    loc.key = key;
    return loc;
  }
  if (scheme == "https" || scheme == "http") {
    if (host.empty() || host.find('@') != std::string::npos) {
      return InvalidArgumentError(url + ": expected " + scheme + "://HOST[:PORT]/PATH");
    }
    loc.scheme = Location::Scheme::kHttps;
    loc.root = scheme + "://" + host;
    loc.key = key;
    return loc;
  }
  return InvalidArgumentError(url + ": unsupported scheme '" + scheme + "://' (s3://, https:// or a local path)");
}

std::string JoinKey(std::string_view prefix, std::string_view name) {
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  while (!name.empty() && name.front() == '/') name.remove_prefix(1);
  if (prefix.empty()) return std::string(name);
  if (name.empty()) return std::string(prefix);
  return std::string(prefix) + "/" + std::string(name);
}

Status ObjectStore::GetVerifiedParts(const std::string& key, const Expected& expected, const PartOptions&,
                                     const PositionalSink& sink) {
  uint64_t at = 0;
  return GetVerified(key, expected, [&](std::string_view bytes) {
    const Status s = sink(at, bytes);
    at += bytes.size();
    return s;
  });
}

StatusOr<std::unique_ptr<ObjectStore>> OpenStore(const Location& location, const StoreConfig& config) {
  switch (location.scheme) {
    case Location::Scheme::kS3:
      if (!config.endpoint.empty()) LIBSHARD_RETURN_IF_ERROR(CheckEndpoint(config.endpoint, "StoreConfig::endpoint"));
      return NewS3Store(config, location.root, NewCurlTransport(config));
    case Location::Scheme::kHttps:
      return NewWebServerStore(location.root, config.retry, NewCurlTransport(config));
    case Location::Scheme::kLocal:
      break;
  }
  return NewLocalStore("");
}

StatusOr<std::unique_ptr<ObjectStore>> OpenStore(const Location& location) {
  if (location.scheme == Location::Scheme::kLocal) return NewLocalStore("");
  LIBSHARD_ASSIGN_OR_RETURN(StoreConfig config, StoreConfig::FromEnvironment());
  return OpenStore(location, config);
}

}  // namespace libshard::store
