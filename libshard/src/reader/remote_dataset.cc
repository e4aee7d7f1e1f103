// Dataset sources in object storage (s3://, https://): the manifest is
// fetched and planned from, the chosen shards are downloaded whole into the
// verified cache (store/shard_cache.h), several at once, and opened from
// there by the ordinary shard reader.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

#include "libshard/manifest.pb.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/reader/dataset.h"
#include "libshard/record/index.h"
#include "libshard/store/object_store.h"
#include "libshard/store/shard_cache.h"
#include "libshard/util/strings.h"

namespace libshard::reader {
namespace {

using util::EndsWith;

// The folder part of a key ("a/b/manifest.json" -> "a/b").
std::string KeyDir(const std::string& key) {
  const size_t slash = key.rfind('/');
  return slash == std::string::npos ? "" : key.substr(0, slash);
}

}  // namespace

Status Dataset::AddRemote(const std::string& url) {
  LIBSHARD_ASSIGN_OR_RETURN(store::Location loc, store::ParseLocation(url));
  const std::string manifest_key = EndsWith(loc.key, ".json") ? loc.key : store::JoinKey(loc.key, "manifest.json");
  LIBSHARD_ASSIGN_OR_RETURN(std::unique_ptr<store::ObjectStore> st, store::OpenStore(loc));
  const std::string manifest_url = st->UrlOf(manifest_key);
  LIBSHARD_ASSIGN_OR_RETURN(std::string text, st->GetSmall(manifest_key, manifest::kMaxBytes));
  libshard::Manifest m;
  if (Status s = manifest::FromJson(text, &m); !s.ok()) return InvalidArgumentError(manifest_url + ": " + s.message());
  if (m.format() != manifest::kFormat) {
    return InvalidArgumentError(manifest_url + ": format \"" + m.format() + "\", expected \"" + manifest::kFormat +
                                "\"");
  }
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<const libshard::SplitEntry*> splits, SelectSplits(manifest_url, m));
  std::vector<const libshard::ShardEntry*> shards;
  for (const libshard::SplitEntry* split : splits) {
    for (const auto& sh : split->shards()) shards.push_back(&sh);
  }

  store::CacheOptions copt;
  copt.dir = options_.cache_dir;
  copt.limit = options_.cache_limit;
  LIBSHARD_ASSIGN_OR_RETURN(std::unique_ptr<store::ShardCache> cache, store::ShardCache::Open(copt));
  uint64_t total = 0;
  for (const libshard::ShardEntry* sh : shards) total += sh->bytes();
  LIBSHARD_RETURN_IF_ERROR(cache->CheckFits(
      total, "the " + std::to_string(shards.size()) + " shards of " + manifest_url +
                 " (a Dataset keeps every shard of the opened split resident; streaming a dataset larger "
                 "than the cache is not supported yet)"));

  // Download (or reuse) every shard and its index, several at once; keep
  // the pins; then add them in manifest order.
  const std::string dir = KeyDir(manifest_key);
  std::vector<std::string> paths(shards.size());
  std::vector<std::shared_ptr<void>> pins;
  std::mutex mu;
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  Status first_error;
  auto worker = [&] {
    for (size_t i; !failed.load() && (i = next.fetch_add(1)) < shards.size();) {
      const libshard::ShardEntry& sh = *shards[i];
      const std::string key = store::JoinKey(dir, sh.file());
      Status s;
      StatusOr<uint32_t> crc = manifest::ParseChecksum(sh.checksum());
      if (!crc.ok()) {
        s = InvalidArgumentError(manifest_url + ": shard " + sh.file() + ": " + crc.status().message());
      } else {
        StatusOr<std::unique_ptr<store::CachedFile>> f = cache->Fetch(*st, key, {sh.bytes(), *crc});
        if (!f.ok()) {
          s = f.status();
        } else {
          std::lock_guard<std::mutex> lock(mu);
          paths[i] = (*f)->path();
          pins.push_back(std::shared_ptr<void>(std::move(*f)));
        }
        if (s.ok() && options_.shard.use_index && !sh.index_file().empty()) {
          // The reader checks the index against its shard, and scans the
          // shard when it is missing or disagrees.
          StatusOr<std::unique_ptr<store::CachedFile>> idx =
              cache->FetchUnverified(*st, store::JoinKey(dir, sh.index_file()), record::IndexPathFor(paths[i]),
                                     manifest::kMaxBytes);
          // Not pinned: the reader reads the index once, at open (one
          // descriptor per shard is enough).
          if (!idx.ok() && idx.status().code() != StatusCode::kNotFound) {
            s = idx.status();
          }
        }
      }
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = s;
        failed = true;
      }
    }
  };
  const size_t n = std::min<size_t>(std::max(1, options_.download_threads), shards.size());
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  LIBSHARD_RETURN_IF_ERROR(first_error);
  for (size_t i = 0; i < shards.size(); ++i) {
    LIBSHARD_RETURN_IF_ERROR(AddShard(paths[i], static_cast<int64_t>(shards[i]->records()), url));
  }
  for (auto& p : pins) pins_.push_back(std::move(p));
  AddManifestMetadata(manifest_url, m, splits);
  return Status::OK();
}

}  // namespace libshard::reader
