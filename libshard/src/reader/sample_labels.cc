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
#include "libshard/example/image_keys.h"
#include "libshard/example/image_record.h"
#include "libshard/io/open_file.h"
#include "libshard/record/record_labels.h"
#include "libshard/util/threads.h"
#include "util/catch_status.h"

namespace libshard::reader {
namespace {

// Samples a thread takes at a time from records: runs of one shard, few
// enough claims.
constexpr uint64_t kChunk = 1024;

// A run of samples of one shard: [begin, end) of its samples (0 is its
// first), from its labels sidecar or its records.
struct Unit {
  size_t shard = 0;
  uint64_t begin = 0, end = 0;
  bool sidecar = false;
};

// Every shard's samples as units: one per shard with a sidecar (one small
// file), chunks of kChunk otherwise. The label key must be the converter's:
// the sidecar holds the labels of that key.
std::vector<Unit> UnitsOf(const Dataset& ds) {
  const bool default_key = ds.options().keys.label == keys::kLabel;
  std::vector<Unit> units;
  for (size_t i = 0; i < ds.num_shards(); ++i) {
    const uint64_t n = ds.shard_samples(i);
    if (default_key && ds.labels_file(i) != nullptr) {
      units.push_back({i, 0, n, true});
      continue;
    }
    for (uint64_t b = 0; b < n; b += kChunk) units.push_back({i, b, std::min(n, b + kChunk), false});
  }
  return units;
}

// The labels of a unit read from its shard's sidecar into out[]: checked
// whole (record/record_labels.h) and against the shard's record count.
Status ReadSidecar(const Dataset& ds, const Unit& u, int64_t* out) {
  const std::string& file = *ds.labels_file(u.shard);
  LIBSHARD_ASSIGN_OR_RETURN(std::shared_ptr<const ShardReader> shard, ds.OpenShard(u.shard));
  // 8 bytes a record at most: a larger file is refused unread.
  LIBSHARD_ASSIGN_OR_RETURN(std::string bytes,
                            io::ReadFileToString(file, record::kLabelsHeaderBytes + 4 + 8 * shard->size()));
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<int64_t> labels, record::ParseLabels(bytes, file));
  if (labels.size() != shard->size()) {
    return DataLossError(file + ": " + std::to_string(labels.size()) + " labels, its shard " +
                         ds.shard_path(u.shard) + " has " + std::to_string(shard->size()) + " records");
  }
  const uint64_t first = ds.first_record(u.shard), start = ds.shard_start(u.shard);
  for (uint64_t k = u.begin; k < u.end; ++k) out[start + k] = ds.MapLabel(start + k, labels[first + k]);
  return Status::OK();
}

// The labels of a unit read from its records into out[]; on an error, the
// sample it is about in *bad.
Status ReadRecords(const Dataset& ds, const Unit& u, RecordBuffer* buf, int64_t* out, uint64_t* bad) {
  // Held (remote: resident) while read.
  LIBSHARD_ASSIGN_OR_RETURN(std::shared_ptr<const ShardReader> shard, ds.OpenShard(u.shard));
  const uint64_t first = ds.first_record(u.shard), start = ds.shard_start(u.shard);
  for (uint64_t k = u.begin; k < u.end; ++k) {
    const uint64_t s = start + k, record = first + k;
    *bad = s;
    auto context = [&] {
      return ds.shard_path(u.shard) + ": record " + std::to_string(record) + " at byte " +
             std::to_string(shard->entry(record).offset);
    };
    std::string_view rec;
    LIBSHARD_RETURN_IF_ERROR(shard->ReadCopy(record, buf, &rec));
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
        const std::vector<Unit> units = UnitsOf(ds);
        std::atomic<size_t> next{0};
        std::mutex mu;
        Status error;  // of the lowest sample that failed
        uint64_t error_at = std::numeric_limits<uint64_t>::max();
        auto work = [&] {
          RecordBuffer buf;
          for (;;) {
            const size_t i = next.fetch_add(1);
            if (i >= units.size()) return;
            const Unit& u = units[i];
            uint64_t bad = ds.shard_start(u.shard) + u.begin;
            Status s = util::CatchAsStatus(
                [&] {
                  return u.sidecar ? ReadSidecar(ds, u, labels.data()) : ReadRecords(ds, u, &buf, labels.data(), &bad);
                },
                [&] { return "reading the labels of " + ds.shard_path(u.shard); });
            if (s.ok()) continue;
            std::lock_guard<std::mutex> lock(mu);
            if (bad < error_at) {
              error_at = bad;
              error = std::move(s);
            }
          }
        };
        const size_t count = std::min<size_t>(util::ThreadCount(threads), units.size());
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
