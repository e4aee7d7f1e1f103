// The conversion's encode pipeline (converter_internal.h): read and encode
// samples in parallel, write them strictly in plan order.
#include <oneapi/tbb/concurrent_queue.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

#include <atomic>
#include <memory>

#include "convert/converter_internal.h"
#include "libshard/io/open_file.h"
#include "util/catch_status.h"

namespace libshard::convert::internal {
namespace {

// One run of the pipeline: its three stages and what they share.
class EncodePipeline {
 public:
  EncodePipeline(const Listing& listing, const EncodeOptions& encode, const std::vector<Work>& work,
                 uint32_t shards_total, int threads, bool fail_on_error, const PreRejects* pre,
                 const ProgressFn& progress, ShardSink* sink)
      : listing_(listing),
        encode_(encode),
        work_(work),
        threads_(threads),
        fail_on_error_(fail_on_error),
        pre_(pre),
        progress_(progress),
        sink_(sink) {
    prog_.total = work.size();
    prog_.shards_total = shards_total;
  }

  Status Run() {
    tbb::task_arena arena(threads_);
    // What escapes a filter (out of memory outside a sample's decode) reaches
    // here through TBB and ends the run with an error.
    Status pipeline = util::CatchAsStatus(
        [&] {
          arena.execute([&] {
            tbb::parallel_pipeline(
                static_cast<size_t>(threads_) * 4,
                tbb::make_filter<void, size_t>(tbb::filter_mode::serial_in_order, [this](tbb::flow_control& fc) {
                  return Next(fc);
                }) & tbb::make_filter<size_t, Item*>(tbb::filter_mode::parallel, [this](size_t i) {
                  return Encode(&work_[i]);
                }) & tbb::make_filter<Item*, void>(tbb::filter_mode::serial_in_order, [this](Item* item) {
                  Write(std::unique_ptr<Item>(item));
                }));
          });
          return Status::OK();
        },
        [] { return "converting (the shard being written is removed)"; });
    return failure_.ok() ? pipeline : failure_;
  }

  uint64_t gray_expanded() const { return prog_.gray_sources; }

 private:
  // Stage 1 (serial): the next sample in plan order (its index in work_).
  size_t Next(tbb::flow_control& fc) {
    if (next_ >= work_.size() || stop_.load(std::memory_order_relaxed)) {
      fc.stop();
      return 0;
    }
    return next_++;
  }

  // Stage 2 (parallel): the sample's record, or why it is rejected.
  Item* Encode(const Work* w) {
    auto item = std::make_unique<Item>();
    item->work = w;
    if (stop_.load(std::memory_order_relaxed)) return item.release();
    if (pre_ != nullptr) {
      if (auto it = pre_->find(w->sample); it != pre_->end()) {
        item->reject = it->second.reason;
        item->transient = it->second.transient;
        item->duplicate = it->second.duplicate;
        return item.release();
      }
    }
    // A huge image (or a low ulimit -v) is a reject, never an abort.
    Status st = util::CatchAsStatus([&] { return EncodeInto(item.get()); }, [] { return "decoding the image"; });
    if (!st.ok()) {
      item->reject = st.message();
      item->transient = IsTransient(st);
    }
    return item.release();
  }

  Status EncodeInto(Item* item) {
    EncodedSample out;
    spare_records_.try_pop(out.record);  // a written record's buffer, capacity kept
    LIBSHARD_RETURN_IF_ERROR(
        EncodeListedSample(listing_, encode_, item->work->sample, &out, &item->stats, &item->bytes_read));
    item->record = std::move(out.record);
    item->gray_source = out.source.channels <= 2;
    item->fingerprint = std::move(out.fingerprint);
    return Status::OK();
  }

  // Stage 3 (serial, plan order): into the shard, then the progress.
  void Write(std::unique_ptr<Item> item) {
    if (!failure_.ok()) return;
    // Nothing may escape this stage: an exception here would cancel the
    // pipeline with the items in flight unowned.
    failure_ = util::CatchAsStatus([&] { return Add(*item); }, [] { return "(writing the shards)"; });
    if (!failure_.ok()) {
      stop_ = true;
      return;
    }
    // The record's buffer goes back for the next sample: a raw array's
    // record is ~100 KB+, and a fresh one per sample cost page faults (a
    // quarter of a raw conversion's time).
    if (spare_records_.unsafe_size() < static_cast<size_t>(threads_) * 4) {
      item->record.clear();
      spare_records_.push(std::move(item->record));
    }
  }

  Status Add(Item& item) {
    if (!item.reject.empty() && !item.duplicate && fail_on_error_) {
      const SourceSample& s = listing_.samples[item.work->sample];
      return FailedPreconditionError((s.origin.empty() ? "" : s.origin + ": ") + SourceFilePath(listing_.root, s.path) +
                                     ": " + item.reject);
    }
    LIBSHARD_RETURN_IF_ERROR(sink_->Add(item));
    ++prog_.done;
    prog_.rejected += item.reject.empty() ? 0 : 1;
    prog_.gray_sources += item.reject.empty() && item.gray_source ? 1 : 0;
    prog_.bytes_read += item.bytes_read;
    prog_.bytes_written += item.record.size();
    prog_.shards_done += item.work->last ? 1 : 0;
    if (progress_) progress_(prog_);
    return Status::OK();
  }

  const Listing& listing_;
  const EncodeOptions& encode_;
  const std::vector<Work>& work_;
  const int threads_;
  const bool fail_on_error_;
  const PreRejects* const pre_;
  const ProgressFn& progress_;
  ShardSink* const sink_;
  size_t next_ = 0;  // stage 1's
  std::atomic<bool> stop_{false};
  // Record buffers handed from the writer back to the encoders (at most as
  // many as the pipeline has samples in flight, plus a few).
  tbb::concurrent_queue<std::string> spare_records_;
  // Stage 3's.
  Status failure_;
  Progress prog_;
};

}  // namespace

Status EncodeListedSample(const Listing& listing, const EncodeOptions& encode, uint32_t sample, EncodedSample* out,
                          StatsAccumulator* stats, uint64_t* bytes_read) {
  const SourceSample& s = listing.samples[sample];
  StatusOr<std::string> bytes = ReadSourceBytes(listing, s, kMaxSourceBytes);
  if (!bytes.ok()) return bytes.status();
  *bytes_read = bytes->size();
  std::string mask;
  if (!s.mask_path.empty()) {
    StatusOr<std::string> m = ReadMaskBytes(listing, s, kMaxSourceBytes);
    if (!m.ok()) return m.status().WithContext("mask");
    mask = std::move(*m);
  }
  return EncodeSample(s, ClassName(listing, s.label), *bytes, mask, encode, out, stats);
}

Status EncodeAndWrite(const Listing& listing, const EncodeOptions& encode, const std::vector<Work>& work,
                      size_t shards_total, int threads, bool fail_on_error, const PreRejects* pre,
                      const ProgressFn& progress, ShardSink* sink, uint64_t* gray_expanded) {
  EncodePipeline pipeline(listing, encode, work, static_cast<uint32_t>(shards_total), threads, fail_on_error, pre,
                          progress, sink);
  Status st = pipeline.Run();
  if (!st.ok()) {
    sink->Abort();
    return st;
  }
  *gray_expanded = pipeline.gray_expanded();
  return Status::OK();
}

}  // namespace libshard::convert::internal
