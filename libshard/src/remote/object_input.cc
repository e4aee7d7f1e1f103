// An input in a bucket (remote/object_input.h).
#include "libshard/remote/object_input.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "libshard/io/contained_path.h"
#include "libshard/store/object_store.h"
#include "libshard/store/store_config.h"
#include "libshard/text_escape.h"
#include "libshard/util/strings.h"

namespace libshard::remote {
namespace {

// Largest CSV read from a bucket (as a local one: 4 GiB).
constexpr uint64_t kMaxCsvBytes = uint64_t{1} << 32;

// Reads a listed sample as its object, the size the LIST gave.
class ObjectSource : public convert::SampleSource {
 public:
  ObjectSource(std::shared_ptr<store::ObjectStore> store, std::string prefix)
      : store_(std::move(store)), prefix_(std::move(prefix)) {}

  StatusOr<std::string> Read(const convert::SourceSample& s, uint64_t max_bytes) const override {
    const std::string key = prefix_ + s.path;
    if (s.size > max_bytes) {
      return InvalidArgumentError(store_->UrlOf(key) + ": " + std::to_string(s.size) + " bytes, over the limit of " +
                                  std::to_string(max_bytes));
    }
    // One byte more than listed: an object grown since (or a server that
    // says otherwise) is told apart from one of the listed size.
    StatusOr<std::string> bytes = store_->GetSmall(key, s.size + 1);
    if (!bytes.ok()) {
      if (bytes.status().code() == StatusCode::kResourceExhausted) {
        return IOError(store_->UrlOf(key) + ": larger than the " + std::to_string(s.size) +
                       " bytes the listing gave (changed since it was listed)");
      }
      return IOError(bytes.status().message());
    }
    if (bytes->size() != s.size) {
      return IOError(store_->UrlOf(key) + ": " + std::to_string(bytes->size()) + " bytes, the listing gave " +
                     std::to_string(s.size) + " (changed since it was listed, or a short answer)");
    }
    return bytes;
  }
  StatusOr<std::string> ReadMask(const convert::SourceSample& s, uint64_t) const override {
    return InvalidArgumentError(store_->UrlOf(prefix_ + s.path) + ": masks are read from a local input");
  }

 private:
  const std::shared_ptr<store::ObjectStore> store_;
  const std::string prefix_;
};

// The store of `where`, shared by the listing and its source.
StatusOr<std::shared_ptr<store::ObjectStore>> OpenShared(const store::Location& where) {
  LIBSHARD_ASSIGN_OR_RETURN(std::unique_ptr<store::ObjectStore> opened, store::OpenStore(where));
  return std::shared_ptr<store::ObjectStore>(std::move(opened));
}

StatusOr<convert::Listing> ListObjects(const store::Location& where, const convert::ListOptions& options) {
  LIBSHARD_ASSIGN_OR_RETURN(std::shared_ptr<store::ObjectStore> store, OpenShared(where));
  std::string prefix = where.key;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  const std::string root = store->UrlOf(prefix);
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<store::ObjectInfo> objects, store->List(prefix));
  if (objects.empty()) return NotFoundError(root + ": no object under this prefix");
  std::vector<std::pair<std::string, uint64_t>> keys;
  std::vector<convert::ListingReject> refused;
  keys.reserve(objects.size());
  for (store::ObjectInfo& o : objects) {
    // A folder marker ("prefix/a/", the prefix itself) is no file.
    if (o.key.size() > prefix.size() && o.key.back() == '/' && util::StartsWith(o.key, prefix)) continue;
    if (o.key == prefix) continue;
    StatusOr<std::string> rel = io::NameUnderPrefix(o.key, prefix, "key");
    if (!rel.ok()) {
      refused.push_back({EscapeText(o.key), rel.status().message() + " (not read)"});
      continue;
    }
    keys.emplace_back(std::move(*rel), o.size);
  }
  std::vector<store::ObjectInfo>().swap(objects);
  LIBSHARD_ASSIGN_OR_RETURN(convert::Listing listing, convert::ListObjectKeys(root, std::move(keys), options));
  listing.rejects.insert(listing.rejects.end(), refused.begin(), refused.end());
  std::sort(listing.rejects.begin(), listing.rejects.end(),
            [](const convert::ListingReject& a, const convert::ListingReject& b) { return a.path < b.path; });
  listing.source = std::make_shared<ObjectSource>(store, prefix);
  return listing;
}

bool IsCsvKey(const std::string& key) {
  auto ends = [&key](const char* tail) {
    const size_t n = std::strlen(tail);
    return key.size() >= n && key.compare(key.size() - n, n, tail) == 0;
  };
  return ends(".csv") || ends(".tsv") || ends(".CSV") || ends(".TSV");
}

// A CSV in a bucket: its rows name keys beside it (its folder's objects).
StatusOr<convert::Listing> ListCsvObject(const store::Location& where, const convert::ListOptions& options) {
  LIBSHARD_ASSIGN_OR_RETURN(std::shared_ptr<store::ObjectStore> store, OpenShared(where));
  const size_t slash = where.key.rfind('/');
  const std::string prefix = slash == std::string::npos ? "" : where.key.substr(0, slash + 1);
  const std::string url = store->UrlOf(where.key);
  LIBSHARD_ASSIGN_OR_RETURN(std::string text, store->GetSmall(where.key, kMaxCsvBytes));
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<store::ObjectInfo> objects, store->List(prefix));
  std::map<std::string, uint64_t> keys;
  for (const store::ObjectInfo& o : objects) {
    if (util::StartsWith(o.key, prefix) && o.key.size() > prefix.size()) keys[o.key.substr(prefix.size())] = o.size;
  }
  std::vector<store::ObjectInfo>().swap(objects);
  LIBSHARD_ASSIGN_OR_RETURN(convert::Listing listing,
                            convert::ReadCsvOfKeys(url, std::move(text), store->UrlOf(prefix), keys, options));
  listing.source = std::make_shared<ObjectSource>(store, prefix);
  return listing;
}

}  // namespace

bool IsRemoteInput(const std::string& input) { return input.find("://") != std::string::npos; }

Status UseObjectInput(convert::ConvertOptions* options) {
  LIBSHARD_ASSIGN_OR_RETURN(store::Location where, store::ParseLocation(options->input));
  if (where.scheme != store::Location::Scheme::kS3) {
    return InvalidArgumentError(options->input + ": only an s3:// prefix can be listed as an input (a web server "
                                                 "has no listing)");
  }
  if (IsCsvKey(where.key)) {
    options->list_input = [where](const convert::ConvertOptions& o) { return ListCsvObject(where, o.list); };
  } else {
    options->list_input = [where](const convert::ConvertOptions& o) { return ListObjects(where, o.list); };
  }
  return Status::OK();
}

}  // namespace libshard::remote
