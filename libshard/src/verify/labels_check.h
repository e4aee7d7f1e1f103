// The labels check: a `<shard>.labels` sidecar (record/record_labels.h)
// compared with the label of each record of a plain shard as the walk meets
// it (example::ParseRecordLabel on the converter's key, -1 for none). At
// most one fault per sidecar, held back until the walk ends and dropped when
// the framing is broken, as the index check's. Private to the verifier.
#ifndef LIBSHARD_SRC_VERIFY_LABELS_CHECK_H_
#define LIBSHARD_SRC_VERIFY_LABELS_CHECK_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/verify/verifier.h"

namespace libshard::verify::internal {

class LabelsComparer {
 public:
  // A sidecar that does not parse gives its fault at Finish(). `name` (the
  // sidecar file) starts the fault's message.
  static LabelsComparer Parse(std::string_view bytes, std::string name);

  // Each intact record, in file order: its payload (a record that is not an
  // Example, or whose label is not int64, counts as no label: the payload
  // checks report it).
  void OnRecord(uint64_t record, uint64_t offset, std::string_view payload);
  // After the last of `records` records, which ended at byte `end`.
  std::optional<Fault> Finish(uint64_t records, uint64_t end);

 private:
  std::vector<int64_t> labels_;
  std::string name_;
  std::optional<Fault> fault_;
};

// The sidecar beside the plain shard at `path`, as a comparer; a fault in `r`
// when it cannot be read. nullptr when there is none (or options.check_index
// is off: the index and the labels are the shard's companions).
std::unique_ptr<LabelsComparer> OpenLabels(const std::string& path, const VerifyOptions& options, FileResult* r);

// Adds the comparer's fault to `r`, unless the framing is broken. `labels`
// may be nullptr.
void FinishLabels(LabelsComparer* labels, FileResult* r);

}  // namespace libshard::verify::internal

#endif  // LIBSHARD_SRC_VERIFY_LABELS_CHECK_H_
