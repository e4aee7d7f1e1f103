// Dataset sources in object storage (s3://, https://): the manifest is
// fetched and planned from; the chosen shards are downloaded whole into the
// verified cache (store/shard_cache.h) when the reads (or a loader's plan)
// reach them, and opened from there by the ordinary shard reader
// (remote_shards.h).
#include <algorithm>

#include "libshard/manifest.pb.h"
#include "libshard/manifest/manifest_checks.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/reader/dataset.h"
#include "libshard/store/object_store.h"
#include "libshard/store/shard_cache.h"
#include "libshard/util/strings.h"
#include "remote_shards.h"

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
  const std::string manifest_key = manifest::ManifestOf(loc.key);
  LIBSHARD_ASSIGN_OR_RETURN(std::unique_ptr<store::ObjectStore> st, store::OpenStore(loc));
  const std::string manifest_url = st->UrlOf(manifest_key);
  LIBSHARD_ASSIGN_OR_RETURN(std::string text, st->GetSmall(manifest_key, manifest::kMaxBytes));
  libshard::Manifest m;
  if (Status s = manifest::FromJson(text, &m); !s.ok()) return InvalidArgumentError(manifest_url + ": " + s.message());
  LIBSHARD_RETURN_IF_ERROR(manifest::CheckFormat(m).WithContext(manifest_url));
  // Every key is made from a name the manifest gives: none may leave its
  // prefix (a "../otherbucket/x" would be fetched signed with the user's keys).
  LIBSHARD_RETURN_IF_ERROR(manifest::CheckContents(m).WithContext(manifest_url));
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<const libshard::SplitEntry*> splits, SelectSplits(manifest_url, m));
  // A sliced split: only the shards the slice reaches are planned (and downloaded).
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<ShardPart> parts, SelectShards(manifest_url, splits));

  if (remote_ == nullptr) {
    LIBSHARD_ASSIGN_OR_RETURN(remote_, RemoteShards::Create(options_));
  }
  // Planned from the manifest, nothing downloaded: each shard is fetched
  // when the reads reach it (or the loader's plan, ahead of them).
  const std::string dir = KeyDir(manifest_key);
  std::shared_ptr<store::ObjectStore> shared(std::move(st));
  uint64_t largest = 0;
  std::string largest_name;
  for (const ShardPart& part : parts) {
    const libshard::ShardEntry* sh = part.shard;
    StatusOr<uint32_t> crc = manifest::ParseChecksum(sh->checksum());
    if (!crc.ok()) return InvalidArgumentError(manifest_url + ": shard " + sh->file() + ": " + crc.status().message());
    RemoteShards::Shard r;
    r.store = shared;
    r.key = store::JoinKey(dir, sh->file());
    if (options_.shard.use_index && !sh->index_file().empty()) r.index_key = store::JoinKey(dir, sh->index_file());
    r.expected = {sh->bytes(), *crc};
    r.records = sh->records();
    LIBSHARD_ASSIGN_OR_RETURN(r.path, remote_->cache().PathFor(*shared, r.key, *crc));
    const std::string here = url + " (" + shared->UrlOf(r.key) + ")";
    auto [it, fresh] = remote_files_.emplace(r.path, here);
    if (!fresh) {
      return InvalidArgumentError(here + " and " + it->second +
                                  " are the same object: each shard may be named once (drop one of the sources)");
    }
    const size_t index = remote_->Add(std::move(r));
    if (remote_->CacheBytes(index) > largest) {
      largest = remote_->CacheBytes(index);
      largest_name = shared->UrlOf(remote_->shard(index).key);
    }
    if (starts_.empty()) starts_.push_back(0);
    starts_.push_back(starts_.back() + part.count);
    first_.push_back(part.first);
    shards_.push_back(nullptr);
    paths_.push_back(remote_->shard(index).path);
    remote_index_.push_back(index);
  }
  // The least a cache_limit must hold (a loader's plan may need more: see
  // CheckReadOrder()). Too small a limit is a configuration error.
  const Status fits = remote_->cache().CheckFits(
      largest, "the largest shard of " + manifest_url + ", " + largest_name + " with its index,");
  if (fits.code() == StatusCode::kResourceExhausted) return InvalidArgumentError(std::string(fits.message()));
  LIBSHARD_RETURN_IF_ERROR(fits);
  AddManifestMetadata(manifest_url, m, splits);
  return Status::OK();
}

}  // namespace libshard::reader
