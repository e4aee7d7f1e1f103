#include "libshard/record/record_reader.h"

#include <cstdio>
#include <string>

#include "libshard/crc32c.h"

namespace libshard::record {

void EncodeHeader(uint64_t length, char out[kHeaderSize]) {
  EncodeFixed64(length, out);
  EncodeFixed32(crc32c::Mask(crc32c::Value(out, kLengthSize)), out + kLengthSize);
}

void EncodeFooter(std::string_view data, char out[kFooterSize]) {
  EncodeFixed32(crc32c::Mask(crc32c::Value(data.data(), data.size())), out);
}

const char* RecordFaultName(RecordFault fault) {
  switch (fault) {
    case RecordFault::kNone: return "none";
    case RecordFault::kEndOfData: return "end_of_data";
    case RecordFault::kTruncatedHeader: return "truncated_header";
    case RecordFault::kLengthCrcMismatch: return "length_crc_mismatch";
    case RecordFault::kLengthTooLarge: return "length_too_large";
    case RecordFault::kTruncatedData: return "truncated_data";
    case RecordFault::kDataCrcMismatch: return "data_crc_mismatch";
  }
  return "unknown";
}

RecordFault DecodeRecordAt(std::string_view buf, uint64_t offset, const ReaderOptions& options,
                           RecordView* out) {
  if (offset >= buf.size()) return RecordFault::kEndOfData;
  const uint64_t remaining = buf.size() - offset;
  if (remaining < kHeaderSize) return RecordFault::kTruncatedHeader;
  const char* header = buf.data() + offset;
  const uint32_t length_crc = crc32c::Mask(crc32c::Value(header, kLengthSize));
  if (length_crc != DecodeFixed32(header + kLengthSize)) return RecordFault::kLengthCrcMismatch;
  const uint64_t length = DecodeFixed64(header);
  if (length > options.max_record_length) return RecordFault::kLengthTooLarge;
  if (remaining - kHeaderSize < kFooterSize || length > remaining - kFramingOverhead) {
    return RecordFault::kTruncatedData;
  }
  std::string_view data(header + kHeaderSize, static_cast<size_t>(length));
  if (options.verify_data_crc) {
    uint32_t data_crc = crc32c::Mask(crc32c::Value(data.data(), data.size()));
    if (data_crc != DecodeFixed32(data.data() + data.size())) return RecordFault::kDataCrcMismatch;
  }
  out->data = data;
  out->offset = offset;
  return RecordFault::kNone;
}

namespace {
std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}
}  // namespace

Status FaultStatus(RecordFault fault, std::string_view buf, uint64_t offset,
                   const ReaderOptions& options) {
  const std::string at = "at byte " + std::to_string(offset);
  const uint64_t remaining = offset < buf.size() ? buf.size() - offset : 0;
  const char* header = buf.data() + offset;
  std::string msg;
  switch (fault) {
    case RecordFault::kNone:
      return Status::OK();
    case RecordFault::kEndOfData:
      return OutOfRangeError("end of data " + at);
    case RecordFault::kTruncatedHeader:
      msg = "truncated record " + at + ": header needs " + std::to_string(kHeaderSize) +
            " bytes, " + std::to_string(remaining) + " remain";
      break;
    case RecordFault::kLengthCrcMismatch:
      msg = "corrupted record " + at + ": length CRC mismatch (stored " +
            Hex32(DecodeFixed32(header + kLengthSize)) + ", computed " +
            Hex32(crc32c::Mask(crc32c::Value(header, kLengthSize))) + ")";
      break;
    case RecordFault::kLengthTooLarge:
      msg = "corrupted record " + at + ": length " + std::to_string(DecodeFixed64(header)) +
            " exceeds the limit of " + std::to_string(options.max_record_length) + " bytes";
      break;
    case RecordFault::kTruncatedData:
      msg = "truncated record " + at + ": length " + std::to_string(DecodeFixed64(header)) +
            " needs " + std::to_string(DecodeFixed64(header) + kFramingOverhead) + " bytes, " +
            std::to_string(remaining) + " remain";
      break;
    case RecordFault::kDataCrcMismatch: {
      uint64_t length = DecodeFixed64(header);
      const char* data = header + kHeaderSize;
      msg = "corrupted record " + at + ": data CRC mismatch (stored " +
            Hex32(DecodeFixed32(data + length)) + ", computed " +
            Hex32(crc32c::Mask(crc32c::Value(data, length))) + ")";
      break;
    }
  }
  if (offset == 0 && fault != RecordFault::kDataCrcMismatch) {
    msg += " (is this a TFRecord file?)";
  }
  return DataLossError(std::move(msg));
}

Status RecordReader::Next(RecordView* record) {
  fault_ = DecodeRecordAt(data_, offset_, options_, record);
  if (fault_ != RecordFault::kNone) return FaultStatus(fault_, data_, offset_, options_);
  offset_ = record->end_offset();
  ++records_read_;
  return Status::OK();
}

}  // namespace libshard::record
