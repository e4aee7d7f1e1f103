// Checks of one record's payload beyond its framing: that it is a
// tf.Example, the manifest's rules (schema, label map), and with --decode its
// image, raw array and mask. Private to the verifier.
#ifndef LIBSHARD_SRC_VERIFY_RECORD_CHECKS_H_
#define LIBSHARD_SRC_VERIFY_RECORD_CHECKS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "libshard/example/example_view.h"
#include "libshard/verify/verifier.h"

namespace libshard::verify::internal {

// Where the faults of one record go: appended in the order found.
struct RecordFaults {
  uint64_t offset = 0;
  uint64_t record = 0;
  std::vector<Fault>* out = nullptr;
  void Add(FaultKind kind, std::string message) const;
};

// Schema and label map of `rules` on a parsed Example.
void CheckRules(const example::ExampleView& ex, const RecordRules& rules, const RecordFaults& faults);

// The detection boxes of `ex` (example/box_record.h), when it has box keys,
// and their labels against rules->object_labels (rules may be null).
void CheckBoxes(const example::ExampleView& ex, const RecordRules* rules, const RecordFaults& faults);

// Decodes the image (or raw array) and the segmentation mask of `ex`, and
// compares their sizes with the size features. Nothing to do without
// `image/encoded`. Safe from many threads at once.
void CheckImages(const example::ExampleView& ex, const VerifyOptions& options, const RecordFaults& faults);

}  // namespace libshard::verify::internal

#endif  // LIBSHARD_SRC_VERIFY_RECORD_CHECKS_H_
