// The record sink: what the framing walks hand each intact record to. It
// feeds the index and labels checks, runs the payload checks (record_checks.h) and
// counts records and bytes. Without decoding, each record is checked as the
// walk reaches it (its bytes still in cache). With decoding, the records are
// copied into batches checked in parallel (oneTBB, nested in the per-file
// tasks), each payload parsed once for the rules and its images; faults are
// then added in record order, so the result does not depend on threads.
// Private to the verifier.
#ifndef LIBSHARD_SRC_VERIFY_RECORD_SINK_H_
#define LIBSHARD_SRC_VERIFY_RECORD_SINK_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "index_check.h"
#include "labels_check.h"
#include "libshard/record/record_reader.h"
#include "libshard/verify/verifier.h"

namespace libshard::verify::internal {

class RecordSink {
 public:
  // `rules`, `index` and `labels` may be nullptr; all are borrowed for the sink's life.
  RecordSink(const VerifyOptions& options, const RecordRules* rules, IndexComparer* index, LabelsComparer* labels,
             FileResult* r)
      : options_(options), rules_(rules), index_(index), labels_(labels), r_(r) {}

  void OnRecord(const record::RecordView& rec);

  // Decodes what is pending; call before a framing fault is added, and at
  // the end.
  void Flush();

 private:
  // Enough records to keep the threads busy; bounded memory.
  static constexpr size_t kBatchRecords = 256;
  static constexpr size_t kBatchBytes = 64 << 20;

  struct Job {
    uint64_t offset = 0;
    uint64_t record = 0;
    std::string payload;
    std::vector<Fault> faults;
  };

  // Parses the payload once, applies the rules and, with `decode`, decodes
  // its images. Safe from many threads at once.
  void Check(std::string_view payload, uint64_t offset, uint64_t record, bool decode, std::vector<Fault>* out) const;

  const VerifyOptions& options_;
  const RecordRules* rules_;
  IndexComparer* index_;
  LabelsComparer* labels_;
  FileResult* r_;
  std::vector<Fault> scratch_;
  std::vector<Job> jobs_;
  size_t jobs_used_ = 0;
  size_t batch_bytes_ = 0;
};

}  // namespace libshard::verify::internal

#endif  // LIBSHARD_SRC_VERIFY_RECORD_SINK_H_
