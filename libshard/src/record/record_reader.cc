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
    case RecordFault::kNone:
      return "none";
    case RecordFault::kEndOfData:
      return "end_of_data";
    case RecordFault::kTruncatedHeader:
      return "truncated_header";
    case RecordFault::kLengthCrcMismatch:
      return "length_crc_mismatch";
    case RecordFault::kLengthTooLarge:
      return "length_too_large";
    case RecordFault::kTruncatedData:
      return "truncated_data";
    case RecordFault::kDataCrcMismatch:
      return "data_crc_mismatch";
  }
  return "unknown";
}

FramingError DecodeHeader(const char* header, uint64_t offset, uint64_t remaining, uint64_t max_record_length,
                          uint64_t* length) {
  FramingError e;
  e.offset = offset;
  if (remaining < kHeaderSize) {
    e.fault = RecordFault::kTruncatedHeader;
    e.stated = kHeaderSize;
    e.computed = remaining;
    return e;
  }
  const uint32_t stored = DecodeFixed32(header + kLengthSize);
  const uint32_t computed = crc32c::Mask(crc32c::Value(header, kLengthSize));
  if (stored != computed) {
    e.fault = RecordFault::kLengthCrcMismatch;
    e.stated = stored;
    e.computed = computed;
    return e;
  }
  const uint64_t len = DecodeFixed64(header);
  if (len > max_record_length) {
    e.fault = RecordFault::kLengthTooLarge;
    e.stated = len;
    e.computed = max_record_length;
    return e;
  }
  if (remaining - kHeaderSize < kFooterSize || len > remaining - kFramingOverhead) {
    e.fault = RecordFault::kTruncatedData;
    e.stated = len;
    e.computed = remaining;
    return e;
  }
  *length = len;
  return e;
}

RecordFault DecodeRecordAt(std::string_view buf, uint64_t offset, const ReaderOptions& options, RecordView* out,
                           FramingError* error) {
  FramingError local;
  FramingError& e = error != nullptr ? *error : local;
  if (offset >= buf.size()) {
    e = FramingError{RecordFault::kEndOfData, offset, 0, 0};
    return e.fault;
  }
  const char* header = buf.data() + offset;
  uint64_t length = 0;
  e = DecodeHeader(header, offset, buf.size() - offset, options.max_record_length, &length);
  if (!e.ok()) return e.fault;
  std::string_view data(header + kHeaderSize, static_cast<size_t>(length));
  if (options.verify_data_crc) {
    const uint32_t stored = DecodeFixed32(data.data() + data.size());
    const uint32_t computed = crc32c::Mask(crc32c::Value(data.data(), data.size()));
    if (stored != computed) {
      e = FramingError{RecordFault::kDataCrcMismatch, offset, stored, computed};
      return e.fault;
    }
  }
  out->data = data;
  out->offset = offset;
  return RecordFault::kNone;
}

namespace {
std::string Hex32(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%08llx", static_cast<unsigned long long>(v));
  return buf;
}
}  // namespace

std::string FramingDetail(const FramingError& e) {
  switch (e.fault) {
    case RecordFault::kNone:
    case RecordFault::kEndOfData:
      return "";
    case RecordFault::kTruncatedHeader:
      return "header needs " + std::to_string(e.stated) + " bytes, " + std::to_string(e.computed) + " remain";
    case RecordFault::kLengthCrcMismatch:
      return "length CRC mismatch (stored " + Hex32(e.stated) + ", computed " + Hex32(e.computed) + ")";
    case RecordFault::kLengthTooLarge:
      return "length " + std::to_string(e.stated) + " exceeds the limit of " + std::to_string(e.computed) + " bytes";
    case RecordFault::kTruncatedData:
      return "length " + std::to_string(e.stated) + " needs " + std::to_string(e.stated + kFramingOverhead) +
             " bytes, " + std::to_string(e.computed) + " remain";
    case RecordFault::kDataCrcMismatch:
      return "data CRC mismatch (stored " + Hex32(e.stated) + ", computed " + Hex32(e.computed) + ")";
  }
  return "";
}

std::string FramingMessage(const FramingError& e) {
  const std::string at = "at byte " + std::to_string(e.offset);
  switch (e.fault) {
    case RecordFault::kNone:
      return "";
    case RecordFault::kEndOfData:
      return "end of data " + at;
    default:
      break;
  }
  const bool truncated = e.fault == RecordFault::kTruncatedHeader || e.fault == RecordFault::kTruncatedData;
  std::string msg = (truncated ? "truncated record " : "corrupted record ") + at + ": " + FramingDetail(e);
  if (e.offset == 0 && e.fault != RecordFault::kDataCrcMismatch) msg += " (is this a TFRecord file?)";
  return msg;
}

Status FramingStatus(const FramingError& error, std::string_view file) {
  if (error.ok()) return Status::OK();
  std::string msg = file.empty() ? FramingMessage(error) : std::string(file) + ": " + FramingMessage(error);
  if (error.fault == RecordFault::kEndOfData) return OutOfRangeError(std::move(msg));
  return DataLossError(std::move(msg));
}

Status RecordReader::Next(RecordView* record) {
  if (DecodeRecordAt(data_, offset_, options_, record, &error_) != RecordFault::kNone) return FramingStatus(error_);
  offset_ = record->end_offset();
  ++records_read_;
  return Status::OK();
}

}  // namespace libshard::record
