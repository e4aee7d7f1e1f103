// Every sample's label from the Example views, no image decoded
// (reader/sample_labels.h).
#include "libshard/reader/sample_labels.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "libshard/example/example_view.h"
#include "libshard/example/image_record.h"
#include "libshard/util/threads.h"
#include "util/catch_status.h"

namespace libshard::reader {
namespace {

// Samples a thread takes at a time: runs of one shard, few enough claims.
constexpr uint64_t kChunk = 1024;

// The labels of samples [begin, end) into out[begin..end); on an error, the
// sample it is about in *bad.
Status ReadLabels(const Dataset& ds, uint64_t begin, uint64_t end, RecordBuffer* buf, int64_t* out, uint64_t* bad) {
  std::shared_ptr<const ShardReader> shard;  // the shard of the run, held (remote: resident) while read
  size_t shard_index = 0;
  for (uint64_t s = begin; s < end; ++s) {
    *bad = s;
    const Dataset::Location loc = ds.Locate(s);
    if (shard == nullptr || loc.shard != shard_index) {
      shard = nullptr;  // let the last one go first (a cache_limit may hold few)
      LIBSHARD_ASSIGN_OR_RETURN(shard, ds.OpenShard(loc.shard));
      shard_index = loc.shard;
    }
    auto context = [&] {
      return ds.shard_path(loc.shard) + ": record " + std::to_string(loc.record) + " at byte " +
             std::to_string(shard->entry(loc.record).offset);
    };
    std::string_view rec;
    LIBSHARD_RETURN_IF_ERROR(shard->ReadCopy(loc.record, buf, &rec));
    auto ex = example::ExampleView::Parse(rec);
    if (!ex.ok()) return ex.status().WithContext(context());
    StatusOr<std::optional<int64_t>> label = example::ParseRecordLabel(*ex, ds.options().keys.label);
    if (!label.ok()) return label.status().WithContext(context());
    out[s] = ds.MapLabel(s, label->value_or(-1));
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::vector<int64_t>> ReadSampleLabels(const Dataset& ds, int threads) {
  return util::CatchAsStatus(
      [&]() -> StatusOr<std::vector<int64_t>> {
        const uint64_t n = ds.size();
        std::vector<int64_t> labels(n, -1);
        std::atomic<uint64_t> next{0};
        std::mutex mu;
        Status error;  // of the lowest sample that failed
        uint64_t error_at = std::numeric_limits<uint64_t>::max();
        auto work = [&] {
          RecordBuffer buf;
          for (;;) {
            const uint64_t begin = next.fetch_add(kChunk);
            if (begin >= n) return;
            uint64_t bad = 0;
            Status s = util::CatchAsStatus(
                [&] { return ReadLabels(ds, begin, std::min(n, begin + kChunk), &buf, labels.data(), &bad); },
                [&] { return "reading the labels of " + ds.shard_path(ds.Locate(bad).shard); });
            if (s.ok()) continue;
            std::lock_guard<std::mutex> lock(mu);
            if (bad < error_at) {
              error_at = bad;
              error = std::move(s);
            }
          }
        };
        const uint64_t chunks = (n + kChunk - 1) / kChunk;
        const size_t count = static_cast<size_t>(std::min<uint64_t>(util::ThreadCount(threads), chunks));
        std::vector<std::thread> pool;
        for (size_t t = 1; t < count; ++t) {
          try {
            pool.emplace_back(work);
          } catch (const std::system_error&) {
            break;  // no more threads to be had: the others do the work
          }
        }
        work();
        for (std::thread& t : pool) t.join();
        if (!error.ok()) return error;
        return labels;
      },
      [] { return std::string("reading the sample labels"); });
}

}  // namespace libshard::reader
