// Reading TFRecord framing from a byte span (a mapped file, a buffer). The
// record views point into the span: no copy, no allocation per record.
//
//   libshard::record::RecordReader reader(mapped->data());
//   libshard::record::RecordView rec;
//   libshard::Status s;
//   while ((s = reader.Next(&rec)).ok()) Use(rec.data);
//   if (s.code() != libshard::StatusCode::kOutOfRange) return s;  // damage
//
// Next() returns
//   OK           a record; rec.data is valid while the span is
//   OutOfRange   clean end: the previous record ended exactly at the end
//   DataLoss     a truncated or corrupt record; the message names the byte
//                offset and what is wrong, and fault() tells which fault.
// After an error the reader stays at the faulty offset (Next() repeats it).
//
// Thread-safety: a RecordReader is not thread-safe; DecodeRecordAt() is pure.
#ifndef LIBSHARD_RECORD_RECORD_READER_H_
#define LIBSHARD_RECORD_RECORD_READER_H_

#include <cstdint>
#include <string_view>

#include "libshard/record/format.h"
#include "libshard/status.h"

namespace libshard::record {

struct ReaderOptions {
  // Records whose stated length exceeds this are reported as corrupt, before
  // any allocation or read of that size. Default: kDefaultMaxRecordLength (1 GiB).
  uint64_t max_record_length = kDefaultMaxRecordLength;
  // Check the data CRC of every record (the length CRC is always checked).
  // Default: true.
  bool verify_data_crc = true;
};

// What is wrong with the bytes at an offset, most specific first.
enum class RecordFault {
  kNone = 0,
  kEndOfData,          // no bytes left: a clean end
  kTruncatedHeader,    // fewer than 12 bytes left
  kLengthCrcMismatch,  // the header's CRC does not match its length bytes
  kLengthTooLarge,     // the (CRC-valid) length exceeds max_record_length
  kTruncatedData,      // the data or its CRC runs past the end
  kDataCrcMismatch,    // the data's CRC does not match
};

// A stable lower-case name, e.g. "length_crc_mismatch" (used in JSON reports).
const char* RecordFaultName(RecordFault fault);

struct RecordView {
  std::string_view data;  // the payload, a slice of the input span
  uint64_t offset = 0;    // where the record's header starts
  uint64_t framed_size() const { return data.size() + kFramingOverhead; }
  uint64_t end_offset() const { return offset + framed_size(); }
};

// A framing fault with the values that explain it. Every framing decoder
// (RecordReader, RecordStreamReader, reader::ShardReader, verify's walk)
// reports one; it becomes text only at the edge (FramingStatus), so a caller
// can re-base the offset or name the file without editing a message.
struct FramingError {
  RecordFault fault = RecordFault::kNone;
  uint64_t offset = 0;  // where the record's header starts, in the caller's coordinates
  // kLengthCrcMismatch, kDataCrcMismatch: the stored and the computed masked CRC.
  // kLengthTooLarge: the stated length and the limit.
  // kTruncatedData: the stated length and the bytes that remain from `offset`.
  // kTruncatedHeader: stated 12 (the header size) and the bytes that remain.
  uint64_t stated = 0;
  uint64_t computed = 0;
  bool ok() const { return fault == RecordFault::kNone; }
};

// Checks the 12-byte header at `header` (the record starts at `offset` and
// `remaining` bytes of the file or buffer follow from there, headers
// included): enough bytes for the header, the length CRC, the length limit,
// and that the data and its CRC fit in `remaining`. Reads `header` only when
// remaining >= kHeaderSize. On success sets *length and returns an ok() error.
FramingError DecodeHeader(const char* header, uint64_t offset, uint64_t remaining, uint64_t max_record_length,
                          uint64_t* length);

// Decodes the record whose header starts at `offset` in `buf`. On kNone fills
// *out; otherwise *out is unchanged and *error (when given) says why.
RecordFault DecodeRecordAt(std::string_view buf, uint64_t offset, const ReaderOptions& options, RecordView* out,
                           FramingError* error = nullptr);

// The message of a framing error: "corrupted record at byte N: length CRC
// mismatch (stored 0x..., computed 0x...)", "truncated record at byte N:
// length L needs L+16 bytes, R remain", ...; at offset 0 (for all but a data
// CRC mismatch) a hint that the data may not be a TFRecord file at all.
std::string FramingMessage(const FramingError& error);
// What is wrong, without the offset or the hint: "length CRC mismatch
// (stored 0x..., computed 0x...)" (for reports that carry the offset apart).
std::string FramingDetail(const FramingError& error);
// OK for kNone, OutOfRange for kEndOfData, DataLoss with FramingMessage
// otherwise, prefixed with "FILE: " when `file` is not empty.
Status FramingStatus(const FramingError& error, std::string_view file = {});

class RecordReader {
 public:
  // `data` must stay valid while the reader and its record views are used.
  explicit RecordReader(std::string_view data, ReaderOptions options = {}) : data_(data), options_(options) {}

  Status Next(RecordView* record);

  // The offset of the next record to read (after an error: of the bad one).
  uint64_t offset() const { return offset_; }
  // Positions the reader at `offset`, which must be a record boundary.
  void Seek(uint64_t offset) { offset_ = offset; }
  // Number of records returned so far.
  uint64_t records_read() const { return records_read_; }
  // The fault of the last Next() call (kNone after a record).
  RecordFault fault() const { return error_.fault; }
  // The whole verdict of the last Next() call (the name RecordStreamReader
  // uses too).
  const FramingError& framing_error() const { return error_; }

 private:
  std::string_view data_;
  ReaderOptions options_;
  uint64_t offset_ = 0;
  uint64_t records_read_ = 0;
  FramingError error_;
};

}  // namespace libshard::record

#endif  // LIBSHARD_RECORD_RECORD_READER_H_
