// ShardCache: whole objects (shards and their .idx) downloaded into a local
// folder, so that the mmap reader reads remote shards as local files.
//
//   LIBSHARD_ASSIGN_OR_RETURN(auto cache, store::ShardCache::Open({}));   // $LIBSHARD_CACHE_DIR or ~/.cache/libshard
//   LIBSHARD_ASSIGN_OR_RETURN(auto file, cache->Fetch(*s3, "ds/train-00000-of-00004.tfrecord", {bytes, crc}));
//   ShardReader::Open(file->path(), ...);   // `file` pins it: not evicted while alive
//
// Guarantees:
//   * A file under its final name is complete and was checked, as its bytes
//     arrived, against the manifest's size and CRC-32C: it is written to a
//     temporary name (NAME.libshard-partial-PID) and renamed only then. A
//     half-downloaded or mismatching object is never taken as complete
//     (DataLoss naming the URL; the temporary file is removed). A large
//     object comes in ranged parts, several at once, each retried on its
//     own, and is checked as a whole all the same (GetVerifiedParts).
//   * Complete files are reused by later calls and later runs. Each version
//     of an object (its CRC-32C) has its own folder, so a re-converted dataset
//     never mixes old and new bytes:
//       DIR/<store's CacheName()>/<key's folder>/<crc32c hex>/<key's name>
//   * One download per object per node: a lock file beside it
//     (NAME.libshard-lock, flock) makes other threads and processes wait for
//     the download in progress and then reuse its result. Partial files left
//     by a killed process are removed by the next download of that object.
//   * Under a limit, partial files count: another process's download in
//     progress (the object's lock held, its pid alive) is counted, and one
//     whose writer is gone (nobody holds the lock, or its pid has exited) is
//     removed.
//   * With a limit, complete files not in use (no live CachedFile in any
//     process: a shared flock) are evicted least recently used first to make
//     room; a download that cannot fit even then is ResourceExhausted.
//     Nothing outside DIR is ever deleted, and keys with ".." are refused.
//
// Thread-safety: all methods may be called from several threads at once.
#ifndef LIBSHARD_STORE_SHARD_CACHE_H_
#define LIBSHARD_STORE_SHARD_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "libshard/status.h"
#include "libshard/store/object_store.h"

namespace libshard::store {

struct CacheOptions {
  // The cache folder (created). Default: "" = DefaultCacheDir().
  std::string dir;
  // Most bytes of complete files the cache may hold; 0 = no limit. Default: 0.
  uint64_t limit = 0;
  // How a large object is downloaded: ranged parts, several at once
  // (ObjectStore::GetVerifiedParts). Default: 16 MiB parts, 4 at once.
  PartOptions parts;
};

// $LIBSHARD_CACHE_DIR, else $XDG_CACHE_HOME/libshard, else ~/.cache/libshard.
std::string DefaultCacheDir();

// A complete cached file, pinned (not evicted) while this object lives.
class CachedFile {
 public:
  CachedFile(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}
  CachedFile(const CachedFile&) = delete;
  CachedFile& operator=(const CachedFile&) = delete;
  ~CachedFile();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int lock_fd_;
};

class ShardCache {
 public:
  // Creates the folder. InvalidArgument when it cannot be created or written.
  // A pinned file holds a descriptor, so the first Open() raises the
  // process's soft limit of open files (RLIMIT_NOFILE) to its hard limit.
  static StatusOr<std::unique_ptr<ShardCache>> Open(const CacheOptions& options);
  ShardCache(const ShardCache&) = delete;
  ShardCache& operator=(const ShardCache&) = delete;

  // The object `key` of `store`, complete and verified against `expected`:
  // reused when already cached, else downloaded (store.GetVerified).
  StatusOr<std::unique_ptr<CachedFile>> Fetch(ObjectStore& store, const std::string& key, const Expected& expected);

  // A small object the manifest has no checksum for (a shard's .idx, which
  // the reader checks against its shard), stored at `local_path` (a path
  // inside the cache, normally beside a Fetch()ed shard): reused when
  // present, else downloaded whole (at most max_bytes) and renamed into place.
  StatusOr<std::unique_ptr<CachedFile>> FetchUnverified(ObjectStore& store, const std::string& key,
                                                        const std::string& local_path, uint64_t max_bytes);

  // Where Fetch() keeps `key` of `store` at version `crc32c`.
  StatusOr<std::string> PathFor(const ObjectStore& store, const std::string& key, uint32_t crc32c) const;

  // ResourceExhausted, naming the limit and `what`, when `bytes` that must be
  // resident at once cannot fit under the limit.
  Status CheckFits(uint64_t bytes, const std::string& what) const;

  const std::string& dir() const { return dir_; }
  uint64_t limit() const { return limit_; }
  // This object's counts: objects downloaded, reused, evicted.
  uint64_t downloads() const { return downloads_; }
  uint64_t reused() const { return reused_; }
  uint64_t evicted() const { return evicted_; }

 private:
  ShardCache(std::string dir, uint64_t limit, PartOptions parts) : dir_(std::move(dir)), limit_(limit), parts_(parts) {}
  // Evicts unpinned files, oldest first, until `incoming` more bytes fit,
  // and reserves them (Get() gives them back when the download ends).
  Status MakeRoom(uint64_t incoming, const std::string& url);
  StatusOr<std::unique_ptr<CachedFile>> Get(ObjectStore& store, const std::string& key, const std::string& path,
                                            const Expected* expected, uint64_t max_bytes);

  const std::string dir_;
  const uint64_t limit_;
  const PartOptions parts_;
  std::atomic<uint64_t> downloads_{0}, reused_{0}, evicted_{0};
  std::mutex room_mu_;     // MakeRoom() decisions
  uint64_t reserved_ = 0;  // bytes of downloads in progress (room_mu_)
};

}  // namespace libshard::store

#endif  // LIBSHARD_STORE_SHARD_CACHE_H_
