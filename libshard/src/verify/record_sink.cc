#include "record_sink.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "faults.h"
#include "libshard/example/example_view.h"
#include "record_checks.h"
#include "util/catch_status.h"

namespace libshard::verify::internal {

void RecordSink::OnRecord(const record::RecordView& rec) {
  if (index_ != nullptr) index_->OnRecord(rec.offset, rec.framed_size());
  if (labels_ != nullptr) labels_->OnRecord(r_->records, rec.offset, rec.data);
  if (options_.check_examples) {
    if (options_.decode_images) {
      if (jobs_used_ == jobs_.size()) jobs_.emplace_back();
      Job& job = jobs_[jobs_used_++];
      job.offset = rec.offset;
      job.record = r_->records;
      job.payload.assign(rec.data.data(), rec.data.size());
      batch_bytes_ += rec.data.size();
      if (jobs_used_ >= kBatchRecords || batch_bytes_ >= kBatchBytes) Flush();
    } else {
      scratch_.clear();
      Check(rec.data, rec.offset, r_->records, /*decode=*/false, &scratch_);
      for (Fault& f : scratch_) AddFault(r_, options_, f.offset, f.record, f.kind, std::move(f.message));
    }
  }
  ++r_->records;
  r_->bytes += rec.framed_size();
}

void RecordSink::Flush() {
  if (jobs_used_ == 0) return;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, jobs_used_, 1), [&](const tbb::blocked_range<size_t>& range) {
    for (size_t i = range.begin(); i != range.end(); ++i) {
      Job& job = jobs_[i];
      job.faults.clear();
      Check(job.payload, job.offset, job.record, /*decode=*/true, &job.faults);
    }
  });
  for (size_t i = 0; i < jobs_used_; ++i) {
    for (Fault& f : jobs_[i].faults) AddFault(r_, options_, f.offset, f.record, f.kind, std::move(f.message));
  }
  jobs_used_ = 0;
  batch_bytes_ = 0;
}

void RecordSink::Check(std::string_view payload, uint64_t offset, uint64_t record, bool decode,
                       std::vector<Fault>* out) const {
  auto ex = example::ExampleView::Parse(payload);
  if (!ex.ok()) {
    out->push_back(
        Fault{offset, record, FaultKind::kNotAnExample,
              "payload of " + std::to_string(payload.size()) + " bytes is not a tf.Example: " + ex.status().message()});
    return;
  }
  const RecordFaults faults{offset, record, out};
  if (rules_ != nullptr) CheckRules(*ex, *rules_, faults);
  CheckBoxes(*ex, rules_, faults);
  if (!decode) return;
  // An image too large for the memory left is a fault of its record (the
  // walk goes on), never an abort.
  Status s = util::CatchAsStatus(
      [&] {
        CheckImages(*ex, options_, faults);
        return Status::OK();
      },
      [] { return "decoding the image (not necessarily damage: check it with more memory)"; });
  if (!s.ok()) faults.Add(FaultKind::kImageUndecodable, s.message());
}

}  // namespace libshard::verify::internal
