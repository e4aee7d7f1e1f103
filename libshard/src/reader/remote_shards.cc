// RemoteShards: see remote_shards.h.
#include "remote_shards.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <set>
#include <thread>

#include "libshard/manifest/manifest_json.h"
#include "libshard/record/index.h"

namespace libshard::reader {
namespace {

constexpr size_t kNone = std::numeric_limits<size_t>::max();

// A resident shard: the reader and the cache pin that keeps its file from
// eviction. Held by the shard's state and by every reader of it.
struct Resident {
  std::unique_ptr<store::CachedFile> pin;
  std::unique_ptr<ShardReader> reader;
};

enum class Phase { kIdle, kQueued, kLoading, kReady, kFailed };

struct ShardState {
  Phase phase = Phase::kIdle;
  std::shared_ptr<Resident> res;  // kReady
  Status error;                   // kFailed
  uint64_t last_use = 0;          // unplanned LRU
  std::vector<size_t> intervals;  // the plan's intervals of this shard, in order
  size_t cursor = 0;              // the current one
};

struct Interval {
  size_t shard = 0;
  uint64_t first = 0, last = 0;  // read positions
  uint64_t reads = 0, done = 0;
  bool reached = false;
};

std::string Str(uint64_t v) { return std::to_string(v); }

}  // namespace

struct RemoteShards::Core {
  explicit Core(size_t n) : st(n) {}
  pid_t pid = ::getpid();
  std::mutex mu;
  std::condition_variable cv;       // a shard's phase changed
  std::condition_variable work_cv;  // the download queue
  std::deque<size_t> queue;
  std::vector<ShardState> st;
  std::vector<std::thread> threads;
  bool stop = false;
  uint64_t tick = 0;
  // The plan.
  bool planned = false;
  bool streaming = false;
  std::vector<Interval> iv;  // in the order of their first read
  size_t window = 1;
  size_t reached = 0;       // intervals with a read
  size_t next_due = 0;      // intervals [0, next_due) are queued or resident
  uint64_t generation = 0;  // plans installed so far
};

StatusOr<std::unique_ptr<RemoteShards>> RemoteShards::Create(const DatasetOptions& options) {
  std::unique_ptr<RemoteShards> r(new RemoteShards(options));
  store::CacheOptions copt;
  copt.dir = options.cache_dir;
  copt.limit = options.cache_limit;
  LIBSHARD_ASSIGN_OR_RETURN(r->cache_, store::ShardCache::Open(copt));
  return r;
}

void RemoteShards::Cancel() {
  std::set<store::ObjectStore*> stores;
  for (const Shard& s : shards_) stores.insert(s.store.get());
  for (store::ObjectStore* s : stores) s->Cancel();
  Core* c = core_.load();
  if (c == nullptr || c->pid != ::getpid()) return;
  {
    std::lock_guard<std::mutex> lock(c->mu);
    c->stop = true;
  }
  c->work_cv.notify_all();
}

RemoteShards::~RemoteShards() {
  Core* c = core_.load();
  if (c == nullptr) return;
  if (c->pid != ::getpid()) return;  // a fork child: the parent's state is abandoned (see C())
  Cancel();
  for (std::thread& t : c->threads) t.join();
  delete c;
}

size_t RemoteShards::Add(Shard shard) {
  shards_.push_back(std::move(shard));
  return shards_.size() - 1;
}

uint64_t RemoteShards::CacheBytes(size_t i) const {
  const Shard& s = shards_[i];
  // An .idx line is "<offset> <size>\n": at most 2 x 20 digits + 2.
  return s.expected.size + (s.index_key.empty() ? 0 : s.records * 42);
}

RemoteShards::Core& RemoteShards::C() {
  Core* c = core_.load();
  if (c != nullptr && c->pid == ::getpid()) return *c;
  // First use, or the first call in a fork child: the parent's threads are
  // gone and its lock may have been held at fork, so its state is left as
  // it is (never destroyed here) and a fresh one starts.
  Core* fresh = new Core(shards_.size());
  if (core_.compare_exchange_strong(c, fresh)) return *fresh;
  delete fresh;
  return *core_.load();
}

namespace {

// Fetches shard `s` (and its .idx) into `cache` and opens it.
StatusOr<std::shared_ptr<Resident>> Load(store::ShardCache& cache, const RemoteShards::Shard& s,
                                         const DatasetOptions& options) {
  // Under a cache_limit the files to evict may still be pinned for a moment
  // by reads of shards just released (the plan counts them out once their
  // reads are handed out, not once they return): a full cache is retried
  // for a while before it is an error.
  auto retry_full = [](auto&& fetch) {
    for (int attempt = 0;; ++attempt) {
      auto r = fetch();
      if (r.ok() || r.status().code() != StatusCode::kResourceExhausted || attempt >= 100) return r;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  };
  auto res = std::make_shared<Resident>();
  LIBSHARD_ASSIGN_OR_RETURN(res->pin, retry_full([&] { return cache.Fetch(*s.store, s.key, s.expected); }));
  if (!s.index_key.empty()) {
    // Not pinned: the reader reads the index once, when it opens; it checks
    // the index against its shard, and scans the shard when it is missing
    // or disagrees.
    StatusOr<std::unique_ptr<store::CachedFile>> idx = retry_full([&] {
      return cache.FetchUnverified(*s.store, s.index_key, record::IndexPathFor(res->pin->path()), manifest::kMaxBytes);
    });
    if (!idx.ok() && idx.status().code() != StatusCode::kNotFound) return idx.status();
  }
  LIBSHARD_ASSIGN_OR_RETURN(res->reader, ShardReader::Open(res->pin->path(), options.shard));
  if (res->reader->size() != s.records) {
    return DataLossError(res->pin->path() + " (" + s.store->UrlOf(s.key) + "): " + Str(res->reader->size()) +
                         " records, the manifest says " + Str(s.records));
  }
  return res;
}

void Release(ShardState& s) {
  if (s.phase == Phase::kReady) {
    s.res.reset();  // readers holding it keep it until they let go
    s.phase = Phase::kIdle;
  }
}

}  // namespace

void RemoteShards::LoadShard(Core& c, size_t i, std::unique_lock<std::mutex>& lock) {
  ShardState& s = c.st[i];
  s.phase = Phase::kLoading;
  lock.unlock();
  StatusOr<std::shared_ptr<Resident>> r = Load(*cache_, shards_[i], options_);
  lock.lock();
  if (r.ok()) {
    s.res = std::move(*r);
    s.phase = Phase::kReady;
  } else {
    s.error = r.status();
    s.phase = Phase::kFailed;
  }
  c.cv.notify_all();
}

StatusOr<std::shared_ptr<const ShardReader>> RemoteShards::Acquire(size_t i, bool count_read) {
  Core& c = C();
  std::unique_lock<std::mutex> lock(c.mu);
  ShardState& s = c.st[i];
  s.last_use = ++c.tick;
  // The plan's interval this read belongs to (kNone: none), and the plan
  // it belongs to (another may be installed while this waits).
  size_t iv = kNone;
  const uint64_t generation = c.generation;
  if (count_read && c.planned && s.cursor < s.intervals.size()) {
    iv = s.intervals[s.cursor];
    if (!c.iv[iv].reached) {  // the reads reached it: the window moves on
      c.iv[iv].reached = true;
      ++c.reached;
    }
  }
  // Queue what is due now.
  auto pump = [&] {
    if (!c.planned) return;
    bool queued = false;
    while (c.next_due < c.iv.size() && c.next_due < c.reached + c.window) {
      ShardState& due = c.st[c.iv[c.next_due++].shard];
      if (due.phase == Phase::kIdle) {
        due.phase = Phase::kQueued;
        c.queue.push_back(c.iv[c.next_due - 1].shard);
        queued = true;
      }
    }
    if (queued) c.work_cv.notify_all();
  };
  pump();
  std::shared_ptr<Resident> res;
  for (;;) {
    if (s.phase == Phase::kReady) {
      res = s.res;
      break;
    }
    if (s.phase == Phase::kFailed) return s.error;
    if (s.phase == Phase::kLoading) {
      c.cv.wait(lock);
      continue;
    }
    // Idle or queued: load it here (a queued one is taken off the queue's
    // hands: its thread skips it).
    if (!c.planned && options_.cache_limit > 0) {
      // Without a plan: release the least recently read shards not in use
      // until this one fits.
      uint64_t held = CacheBytes(i);
      for (size_t k = 0; k < c.st.size(); ++k) {
        if (c.st[k].phase == Phase::kReady || c.st[k].phase == Phase::kLoading) held += CacheBytes(k);
      }
      while (held > options_.cache_limit) {
        size_t lru = kNone;
        for (size_t k = 0; k < c.st.size(); ++k) {
          if (k != i && c.st[k].phase == Phase::kReady && c.st[k].res.use_count() == 1 &&
              (lru == kNone || c.st[k].last_use < c.st[lru].last_use)) {
            lru = k;
          }
        }
        if (lru == kNone) break;  // the cache says what does not fit
        Release(c.st[lru]);
        held -= CacheBytes(lru);
      }
    }
    LoadShard(c, i, lock);
  }
  // Count the read; when the interval is done, a streaming plan lets the
  // shard go unless its next interval is already due.
  if (iv != kNone && c.generation == generation && s.cursor < s.intervals.size() && s.intervals[s.cursor] == iv &&
      ++c.iv[iv].done >= c.iv[iv].reads) {
    ++s.cursor;
    const size_t next = s.cursor < s.intervals.size() ? s.intervals[s.cursor] : kNone;
    if (c.streaming && (next == kNone || next >= c.next_due)) Release(s);
  }
  return std::shared_ptr<const ShardReader>(res, res->reader.get());
}

Status RemoteShards::Plan(const std::vector<size_t>& reads, size_t batch, size_t gap, bool shuffle, bool check_only) {
  batch = std::max<size_t>(batch, 1);
  // Intervals of one shard never share a batch (batches are read one after
  // the other, so an interval is done before the shard's next one begins).
  gap = std::max(gap, batch);
  std::vector<Interval> iv;
  std::vector<size_t> cur(shards_.size(), kNone);
  std::vector<uint64_t> last(shards_.size(), 0);
  for (uint64_t p = 0; p < reads.size(); ++p) {
    const size_t r = reads[p];
    if (r == kNone) continue;
    if (cur[r] == kNone || p - last[r] > gap) {
      cur[r] = iv.size();
      iv.push_back({r, p, p, 0, 0, false});
    }
    iv[cur[r]].last = p;
    ++iv[cur[r]].reads;
    last[r] = p;
  }
  uint64_t total = 0;
  size_t touched = 0;
  for (size_t r = 0; r < shards_.size(); ++r) {
    if (cur[r] != kNone) {
      total += CacheBytes(r);
      ++touched;
    }
  }
  const uint64_t limit = options_.cache_limit;
  const bool streaming = limit > 0 && total > limit;
  const size_t threads = static_cast<size_t>(std::max(1, options_.download_threads));
  size_t window = 2 * threads;
  if (streaming) {
    const std::string what = "the " + Str(touched) + " shards this loader reads (" + Str(total) + " bytes)";
    if (shuffle) {
      return ResourceExhaustedError(
          "cache " + cache_->dir() + ": cache_limit " + Str(limit) + " bytes cannot hold " + what +
          ", and a global shuffle reads every shard throughout the epoch; stream them with block shuffle "
          "(OrderKind::kBlockShuffle; Python order=\"block-shuffle\"), or raise cache_limit");
    }
    // Peak bytes resident with `w` intervals ahead: per batch, the shards
    // with reads in it (or around it) plus the next w intervals to start.
    const size_t nb = (reads.size() + batch - 1) / batch;
    std::vector<int64_t> diff(nb + 1, 0);
    std::vector<uint64_t> prefix(iv.size() + 1, 0);
    for (size_t j = 0; j < iv.size(); ++j) {
      const uint64_t b = CacheBytes(iv[j].shard);
      diff[iv[j].first / batch] += static_cast<int64_t>(b);
      diff[iv[j].last / batch + 1] -= static_cast<int64_t>(b);
      prefix[j + 1] = prefix[j] + b;
    }
    auto peak = [&](size_t w) {
      uint64_t best = 0;
      int64_t in_use = 0;
      size_t j = 0;
      for (size_t k = 0; k < nb; ++k) {
        in_use += diff[k];
        while (j < iv.size() && iv[j].first / batch <= k) ++j;
        const uint64_t ahead = prefix[std::min(j + w, iv.size())] - prefix[j];
        best = std::max(best, static_cast<uint64_t>(in_use) + ahead);
      }
      return best;
    };
    const uint64_t least = peak(1);
    if (least > limit) {
      return ResourceExhaustedError("cache " + cache_->dir() + ": cache_limit " + Str(limit) +
                                    " bytes cannot hold the " + Str(least) +
                                    " bytes that must be resident at once to stream " + what +
                                    " in this order (the shards a batch reads plus one downloading ahead); "
                                    "raise cache_limit to at least " +
                                    Str(least));
    }
    window = 1;
    while (window < threads && peak(window + 1) <= limit) ++window;
  }
  if (check_only) return Status::OK();

  Core& c = C();
  std::lock_guard<std::mutex> lock(c.mu);
  for (size_t r = 0; r < c.st.size(); ++r) {
    ShardState& s = c.st[r];
    s.intervals.clear();
    s.cursor = 0;
    if (s.phase == Phase::kFailed || s.phase == Phase::kQueued) {
      s.phase = Phase::kIdle;  // a failure is retried under the new plan
      s.error = Status::OK();
    }
  }
  c.queue.clear();
  for (size_t j = 0; j < iv.size(); ++j) c.st[iv[j].shard].intervals.push_back(j);
  if (streaming) {
    // What the new plan does not read soon may go.
    for (size_t r = 0; r < c.st.size(); ++r) {
      if (c.st[r].intervals.empty() || c.st[r].intervals.front() >= window) Release(c.st[r]);
    }
  }
  c.iv = std::move(iv);
  ++c.generation;
  c.planned = true;
  c.streaming = streaming;
  c.window = window;
  c.reached = 0;
  c.next_due = 0;
  bool queued = false;
  while (c.next_due < c.iv.size() && c.next_due < c.window) {
    ShardState& due = c.st[c.iv[c.next_due++].shard];
    if (due.phase == Phase::kIdle) {
      due.phase = Phase::kQueued;
      c.queue.push_back(c.iv[c.next_due - 1].shard);
      queued = true;
    }
  }
  if (c.threads.empty()) {
    for (size_t t = 0; t < threads; ++t) {
      c.threads.emplace_back([this, &c] {
        std::unique_lock<std::mutex> lk(c.mu);
        for (;;) {
          c.work_cv.wait(lk, [&] { return c.stop || !c.queue.empty(); });
          if (c.stop) return;
          const size_t i = c.queue.front();
          c.queue.pop_front();
          if (c.st[i].phase != Phase::kQueued) continue;
          LoadShard(c, i, lk);
        }
      });
    }
  }
  if (queued) c.work_cv.notify_all();
  return Status::OK();
}

}  // namespace libshard::reader
