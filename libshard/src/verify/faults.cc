// The fault vocabulary: the kinds' stable names (per file and per set), the framing kinds shared
// with the record module, and the per-file cap.
#include "faults.h"

#include <algorithm>

#include "libshard/record/record_reader.h"

namespace libshard::verify {

using record::RecordFault;

FaultKind FramingFaultKind(RecordFault fault) {
  switch (fault) {
    case RecordFault::kTruncatedHeader:
      return FaultKind::kTruncatedHeader;
    case RecordFault::kLengthCrcMismatch:
      return FaultKind::kLengthCrcMismatch;
    case RecordFault::kLengthTooLarge:
      return FaultKind::kLengthTooLarge;
    case RecordFault::kTruncatedData:
      return FaultKind::kTruncatedData;
    case RecordFault::kDataCrcMismatch:
      return FaultKind::kDataCrcMismatch;
    case RecordFault::kNone:
    case RecordFault::kEndOfData:
      break;
  }
  return FaultKind::kUnreadable;
}

const char* FaultKindName(FaultKind kind) {
  switch (kind) {
    // The framing kinds: the record module's names.
    case FaultKind::kLengthCrcMismatch:
      return record::RecordFaultName(RecordFault::kLengthCrcMismatch);
    case FaultKind::kLengthTooLarge:
      return record::RecordFaultName(RecordFault::kLengthTooLarge);
    case FaultKind::kTruncatedHeader:
      return record::RecordFaultName(RecordFault::kTruncatedHeader);
    case FaultKind::kTruncatedData:
      return record::RecordFaultName(RecordFault::kTruncatedData);
    case FaultKind::kDataCrcMismatch:
      return record::RecordFaultName(RecordFault::kDataCrcMismatch);
    case FaultKind::kNotAnExample:
      return "not_an_example";
    case FaultKind::kEmptyFile:
      return "empty_file";
    case FaultKind::kIndexMismatch:
      return "index_mismatch";
    case FaultKind::kLabelsMismatch:
      return "labels_mismatch";
    case FaultKind::kNotTfrecord:
      return "not_tfrecord";
    case FaultKind::kUnreadable:
      return "unreadable";
    case FaultKind::kCompressedStreamCorrupt:
      return "compressed_stream_corrupt";
    case FaultKind::kManifestLabelOutOfRange:
      return "manifest_label_out_of_range";
    case FaultKind::kManifestSchema:
      return "manifest_schema";
    case FaultKind::kImageUndecodable:
      return "image_undecodable";
    case FaultKind::kImageSizeMismatch:
      return "image_size_mismatch";
    case FaultKind::kRawArrayInvalid:
      return "raw_array_invalid";
    case FaultKind::kMaskUndecodable:
      return "mask_undecodable";
    case FaultKind::kMaskSizeMismatch:
      return "mask_size_mismatch";
    case FaultKind::kLabelInvalid:
      return "label_invalid";
    case FaultKind::kBoxInvalid:
      return "box_invalid";
    case FaultKind::kManifestBoxLabelOutOfRange:
      return "manifest_box_label_out_of_range";
  }
  return "unknown";
}

const char* FaultKindName(SetFaultKind kind) {
  switch (kind) {
    case SetFaultKind::kManifestUnreadable:
      return "manifest_unreadable";
    case SetFaultKind::kManifestInvalid:
      return "manifest_invalid";
    case SetFaultKind::kManifestFormat:
      return "manifest_format";
    case SetFaultKind::kManifestShardMissing:
      return "manifest_shard_missing";
    case SetFaultKind::kManifestShardUnlisted:
      return "manifest_shard_unlisted";
    case SetFaultKind::kManifestRecordCount:
      return "manifest_record_count";
    case SetFaultKind::kManifestSize:
      return "manifest_size";
    case SetFaultKind::kManifestChecksum:
      return "manifest_checksum";
    case SetFaultKind::kManifestEmpty:
      return "manifest_empty";
    case SetFaultKind::kSetIncomplete:
      return "set_incomplete";
  }
  return "unknown";
}

bool FileResult::Has(FaultKind kind) const {
  return std::any_of(faults.begin(), faults.end(), [kind](const Fault& f) { return f.kind == kind; });
}

namespace internal {

void AddFault(FileResult* r, const VerifyOptions& options, uint64_t offset, uint64_t record, FaultKind kind,
              std::string message) {
  if (r->faults.size() >= options.max_faults_per_file) {
    ++r->faults_omitted;
    return;
  }
  r->faults.push_back(Fault{offset, record, kind, std::move(message)});
}

bool IsFramingFault(FaultKind kind) {
  switch (kind) {
    case FaultKind::kLengthCrcMismatch:
    case FaultKind::kLengthTooLarge:
    case FaultKind::kTruncatedHeader:
    case FaultKind::kTruncatedData:
    case FaultKind::kDataCrcMismatch:
    case FaultKind::kNotTfrecord:
    case FaultKind::kUnreadable:
    case FaultKind::kCompressedStreamCorrupt:
    case FaultKind::kEmptyFile:
      return true;
    default:
      return false;
  }
}

bool HasFramingFault(const FileResult& r) {
  return std::any_of(r.faults.begin(), r.faults.end(), [](const Fault& f) { return IsFramingFault(f.kind); });
}

}  // namespace internal
}  // namespace libshard::verify
