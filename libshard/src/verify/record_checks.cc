#include "record_checks.h"

#include <algorithm>
#include <optional>
#include <string>

#include "libshard/example/box_record.h"
#include "libshard/example/image_keys.h"
#include "libshard/example/image_record.h"
#include "libshard/image/image.h"

namespace libshard::verify::internal {

namespace {

using example::ExampleView;
using example::FeatureKind;
using example::FeatureView;

std::optional<int64_t> FirstInt64(const ExampleView& ex, std::string_view key) {
  FeatureView f;
  if (!ex.Find(key, &f) || f.kind() != FeatureKind::kInt64 || f.size() == 0) return std::nullopt;
  return f.int64(0);
}

std::string Size(int64_t w, int64_t h) { return std::to_string(w) + "x" + std::to_string(h); }

FaultKind KindOf(example::RecordPart part) {
  switch (part) {
    case example::RecordPart::kImage:
      return FaultKind::kImageUndecodable;
    case example::RecordPart::kRawArray:
      return FaultKind::kRawArrayInvalid;
    case example::RecordPart::kLabel:
      return FaultKind::kLabelInvalid;
    case example::RecordPart::kMask:
      return FaultKind::kMaskUndecodable;
    case example::RecordPart::kMaskSize:
      return FaultKind::kMaskSizeMismatch;
  }
  return FaultKind::kImageUndecodable;
}

}  // namespace

void RecordFaults::Add(FaultKind kind, std::string message) const {
  out->push_back(Fault{offset, record, kind, std::move(message)});
}

void CheckRules(const ExampleView& ex, const RecordRules& rules, const RecordFaults& faults) {
  for (const FeatureRule& rule : rules.schema) {
    FeatureView f;
    if (!ex.Find(rule.key, &f)) {
      if (rule.required) faults.Add(FaultKind::kManifestSchema, "required feature \"" + rule.key + "\" is missing");
      continue;
    }
    if (f.kind() != rule.kind) {
      faults.Add(FaultKind::kManifestSchema, "feature \"" + rule.key + "\" is " + example::FeatureKindName(f.kind()) +
                                                 ", the schema says " + example::FeatureKindName(rule.kind));
    }
  }
  if (rules.labels.empty()) return;
  FeatureView label;
  if (!ex.Find(keys::kLabel, &label) || label.kind() != FeatureKind::kInt64) return;  // the schema's business
  thread_local std::vector<int64_t> values;
  values.resize(label.size());
  label.CopyInt64s(values.data(), values.size());
  for (int64_t v : values) {
    if (!std::binary_search(rules.labels.begin(), rules.labels.end(), v)) {
      faults.Add(FaultKind::kManifestLabelOutOfRange,
                 std::string(keys::kLabel) + " " + std::to_string(v) + " is not in the label map (" +
                     std::to_string(rules.labels.size()) + " labels, " + std::to_string(rules.labels.front()) + ".." +
                     std::to_string(rules.labels.back()) + ")");
      return;  // one fault per record
    }
  }
}

void CheckBoxes(const ExampleView& ex, const RecordRules* rules, const RecordFaults& faults) {
  if (!example::HasBoxKeys(ex)) return;
  thread_local example::BoxRecord boxes;
  const Status s = example::ReadBoxes(ex, &boxes);
  if (!s.ok()) {
    faults.Add(FaultKind::kBoxInvalid, std::string(s.message()));
    return;
  }
  if (rules == nullptr || rules->object_labels.empty()) return;
  const std::vector<int64_t>& map = rules->object_labels;
  for (size_t i = 0; i < boxes.labels.size(); ++i) {
    if (!std::binary_search(map.begin(), map.end(), boxes.labels[i])) {
      faults.Add(FaultKind::kManifestBoxLabelOutOfRange,
                 "box " + std::to_string(i) + ": " + keys::kObjectLabel + " " + std::to_string(boxes.labels[i]) +
                     " is not in the object label map (" + std::to_string(map.size()) + " labels, " +
                     std::to_string(map.front()) + ".." + std::to_string(map.back()) + ")");
      return;  // one fault per record
    }
  }
}

void CheckImages(const ExampleView& ex, const VerifyOptions& options, const RecordFaults& faults) {
  FeatureView encoded;
  if (!ex.Find(keys::kEncoded, &encoded)) return;  // not an image record
  // The reader's contract (example/image_record.h), with the converter's keys.
  const example::ImageRecordKeys record_keys;
  example::ImageRecordLimits limits;
  limits.max_pixels = options.max_pixels;
  example::RecordPart part = example::RecordPart::kImage;
  auto rec = example::ParseImageRecord(ex, record_keys, limits, &part);
  if (!rec.ok()) {
    faults.Add(KindOf(part), rec.status().message());
    return;
  }
  thread_local image::Image img;  // reused: one decode buffer per thread
  Status s = example::DecodeStoredImage(*rec, limits, &img);
  if (!s.ok()) {
    faults.Add(rec->raw() ? FaultKind::kRawArrayInvalid : FaultKind::kImageUndecodable, s.message());
  } else {
    // Beyond the contract: the informational size features must agree.
    const auto height = FirstInt64(ex, keys::kHeight);
    const auto width = FirstInt64(ex, keys::kWidth);
    const auto channels = FirstInt64(ex, keys::kChannels);
    if ((height && *height != img.height()) || (width && *width != img.width())) {
      faults.Add(FaultKind::kImageSizeMismatch, "image is " + Size(img.width(), img.height()) + ", " + keys::kWidth +
                                                    " x " + keys::kHeight + " say " +
                                                    Size(width.value_or(img.width()), height.value_or(img.height())));
    } else if (channels && *channels != img.channels()) {
      faults.Add(FaultKind::kImageSizeMismatch, "image has " + std::to_string(img.channels()) + " channels, " +
                                                    keys::kChannels + " says " + std::to_string(*channels));
    }
  }
  if (!rec->mask.empty()) {
    thread_local image::Image mask;
    Status m = example::DecodeRecordMask(*rec, record_keys, limits, &mask, &part);
    if (!m.ok()) faults.Add(KindOf(part), m.message());
  }
}

}  // namespace libshard::verify::internal
