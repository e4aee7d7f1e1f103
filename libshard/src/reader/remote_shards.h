// RemoteShards: a Dataset's shards in object storage, opened lazily from the
// verified cache (store/shard_cache.h). Private to the reader module.
//
// Each shard is idle (not resident), queued, loading (its object and .idx
// being fetched into the cache, then its ShardReader opened), ready (the
// reader and the cache pin held) or failed (the error, returned by every
// read until the next plan). Acquire() returns a ready shard's reader, waits
// for a loading one, and loads an idle or queued one on the calling thread;
// the returned pointer keeps the reader and its cache pin alive, so a shard
// released meanwhile stays readable until its last reader lets go.
//
// A plan (Plan(): a loader's reads in order) lists each shard's stretches of
// reads ("intervals": reads of one shard no more than `gap` reads apart),
// in the order of their first read. The download threads fetch the
// intervals' shards in that order, at most `window` intervals ahead of the
// reads (an interval is reached by its first read, counted in Acquire()).
// Streaming (a cache_limit below the bytes the plan reads): when an
// interval's reads are all done, its shard is released (its pin dropped, so
// the cache's LRU may evict it) unless its next interval is already due.
// The window is the largest (up to download_threads) whose peak -- the
// shards with reads in one batch plus the window's -- fits the limit; when
// even one ahead does not fit, the plan is refused (ResourceExhausted).
// Without a plan, shards stay resident once read, and under a limit the
// least recently read ones not in use are released to make room.
//
// Fork: a child process (a DataLoader worker) has none of the parent's
// download threads nor its locks: the first call in the child abandons the
// parent's state and starts afresh (complete cached files are reused).
//
// Thread-safety: every method may be called from several threads at once.
#ifndef LIBSHARD_SRC_READER_REMOTE_SHARDS_H_
#define LIBSHARD_SRC_READER_REMOTE_SHARDS_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "libshard/reader/dataset.h"
#include "libshard/reader/sample_order.h"
#include "libshard/reader/shard_reader.h"
#include "libshard/status.h"
#include "libshard/store/object_store.h"
#include "libshard/store/shard_cache.h"

namespace libshard::reader {

class RemoteShards {
 public:
  struct Shard {
    std::shared_ptr<store::ObjectStore> store;
    std::string key;        // the shard object
    std::string index_key;  // its .idx, "" when none (or not used)
    store::Expected expected;
    uint64_t records = 0;  // as the manifest says (checked on open)
    std::string path;      // where the cache keeps it
  };

  static StatusOr<std::unique_ptr<RemoteShards>> Create(const DatasetOptions& options);
  ~RemoteShards();
  RemoteShards(const RemoteShards&) = delete;
  RemoteShards& operator=(const RemoteShards&) = delete;

  store::ShardCache& cache() { return *cache_; }
  // Before any other call: adds a shard, returns its index.
  size_t Add(Shard shard);
  size_t size() const { return shards_.size(); }
  const Shard& shard(size_t i) const { return shards_[i]; }
  // The bytes shard i takes in the cache, its .idx included (an upper bound
  // for the .idx: the manifest does not give its size).
  uint64_t CacheBytes(size_t i) const;

  // The reader of shard i (see the file comment). `count_read`: one of the
  // plan's reads (advances the plan).
  StatusOr<std::shared_ptr<const ShardReader>> Acquire(size_t i, bool count_read);

  // A loader's reads: reads[p] is the remote shard read p-th (SIZE_MAX: a
  // local shard), `batch` reads at a time, `gap` as in the file comment.
  // `check_only`: refuse or accept the plan without starting it.
  // `shuffle`: a global shuffle (named in the refusal).
  Status Plan(const std::vector<size_t>& reads, size_t batch, size_t gap, bool shuffle, bool check_only);

  // Stops the download threads' work and ends the transfers in flight
  // (ObjectStore::Cancel on every shard's store): loads then fail with
  // "cancelled". Irreversible. The destructor does it too.
  void Cancel();

  // Objects this dataset downloaded so far (not reused from the cache).
  uint64_t downloads() const { return cache_->downloads(); }

 private:
  struct Core;
  explicit RemoteShards(const DatasetOptions& options) : options_(options) {}
  // The state of this process (see Fork in the file comment).
  Core& C();
  // Downloads and opens shard i (its state kQueued or kIdle, `lock` held on
  // c.mu), with the lock released meanwhile; then kReady or kFailed, waiters
  // woken.
  void LoadShard(Core& c, size_t i, std::unique_lock<std::mutex>& lock);

  const DatasetOptions options_;
  std::unique_ptr<store::ShardCache> cache_;
  std::vector<Shard> shards_;
  std::atomic<Core*> core_{nullptr};
};

}  // namespace libshard::reader

#endif  // LIBSHARD_SRC_READER_REMOTE_SHARDS_H_
