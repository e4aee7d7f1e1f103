#include "labels_check.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "faults.h"
#include "libshard/example/example_view.h"
#include "libshard/example/image_keys.h"
#include "libshard/example/image_record.h"
#include "libshard/io/open_file.h"
#include "libshard/record/record_labels.h"

namespace libshard::verify::internal {

LabelsComparer LabelsComparer::Parse(std::string_view bytes, std::string name) {
  LabelsComparer c;
  StatusOr<std::vector<int64_t>> parsed = record::ParseLabels(bytes, name);
  if (parsed.ok()) {
    c.labels_ = std::move(*parsed);
  } else {
    c.fault_ = Fault{0, 0, FaultKind::kLabelsMismatch, parsed.status().message()};
  }
  c.name_ = std::move(name);
  return c;
}

void LabelsComparer::OnRecord(uint64_t record, uint64_t offset, std::string_view payload) {
  if (fault_) return;
  if (record >= labels_.size()) {
    fault_ = Fault{offset, record, FaultKind::kLabelsMismatch,
                   name_ + " has " + std::to_string(labels_.size()) +
                       " labels, but the shard has more records: record " + std::to_string(record) + " at byte " +
                       std::to_string(offset) + " has none"};
    return;
  }
  int64_t label = -1;
  if (StatusOr<example::ExampleView> ex = example::ExampleView::Parse(payload); ex.ok()) {
    StatusOr<std::optional<int64_t>> l = example::ParseRecordLabel(*ex, keys::kLabel);
    if (l.ok()) label = l->value_or(-1);
  }
  if (label != labels_[record]) {
    fault_ = Fault{offset, record, FaultKind::kLabelsMismatch,
                   name_ + " says label " + std::to_string(labels_[record]) + " for record " + std::to_string(record) +
                       " at byte " + std::to_string(offset) + ", whose label is " + std::to_string(label)};
  }
}

std::optional<Fault> LabelsComparer::Finish(uint64_t records, uint64_t end) {
  if (!fault_ && records < labels_.size()) {
    fault_ = Fault{end, records, FaultKind::kLabelsMismatch,
                   name_ + " has " + std::to_string(labels_.size()) + " labels, but the shard has " +
                       std::to_string(records) + " records"};
  }
  return std::move(fault_);
}

std::unique_ptr<LabelsComparer> OpenLabels(const std::string& path, const VerifyOptions& options, FileResult* r) {
  if (!options.check_index) return nullptr;
  const std::string file = record::LabelsPathFor(path);
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return nullptr;
  // A sidecar holds at most 8 bytes for each record, and a record takes at
  // least 16: a larger file is refused unread (ParseLabels names its size).
  StatusOr<std::string> bytes = io::ReadFileToString(file, record::kLabelsHeaderBytes + 4 + r->file_size / 2);
  if (!bytes.ok()) {
    r->faults.push_back(Fault{0, 0, FaultKind::kUnreadable, "labels " + bytes.status().message()});
    return nullptr;
  }
  return std::make_unique<LabelsComparer>(LabelsComparer::Parse(*bytes, file));
}

void FinishLabels(LabelsComparer* labels, FileResult* r) {
  if (labels == nullptr || HasFramingFault(*r)) return;
  if (auto f = labels->Finish(r->records, r->bytes)) r->faults.push_back(std::move(*f));
}

}  // namespace libshard::verify::internal
