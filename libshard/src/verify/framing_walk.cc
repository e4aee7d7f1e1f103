#include "framing_walk.h"

#include <limits>
#include <string>
#include <string_view>

#include "faults.h"
#include "libshard/image/probe.h"
#include "libshard/util/strings.h"

namespace libshard::verify::internal {

namespace {

using record::RecordFault;
using record::RecordView;

// A guess at what a non-TFRecord file is, for the message: "looks like a
// PNG image", "looks like zstd data", "" (image::DescribeContent's words).
std::string WhatItLooksLike(std::string_view head) {
  const char* what = image::DescribeContent(head);
  if (what == nullptr) return "";
  const bool one = util::EndsWith(what, " image");  // "a PNG image", but "zstd data"
  return std::string("looks like ") + (one ? "a " : "") + what;
}

// Records a framing fault. A first header that is not framing at all (its
// CRC fails, or the file is shorter than a header) means the file is not a
// TFRecord file: a flipped bit in the first length reads the same, and the
// message keeps the detail.
void AddFramingFault(FileResult* r, const VerifyOptions& options, const record::FramingError& error,
                     std::string_view head) {
  const RecordFault fault = error.fault;
  const uint64_t offset = error.offset;
  std::string detail = record::FramingDetail(error);
  if (offset == 0 && (fault == RecordFault::kLengthCrcMismatch || fault == RecordFault::kTruncatedHeader)) {
    std::string what = WhatItLooksLike(head.substr(0, 64));
    AddFault(r, options, 0, 0, FaultKind::kNotTfrecord,
             "not a TFRecord file" + (what.empty() ? "" : " (" + what + ")") + ": first record's " + detail);
    return;
  }
  AddFault(r, options, offset, r->records, FramingFaultKind(fault), std::move(detail));
}

// After a data CRC fault the framing still holds: the records that follow
// the damaged one at `offset` (length CRC good, the whole record present),
// to the end or the next framing fault. Reads on sequentially (the file's
// checksum needs every byte anyway); each step moves at least one header on.
uint64_t CountFramesAfter(Window* window, uint64_t offset, const VerifyOptions& options) {
  uint64_t frames = 0;
  for (bool damaged = true;; damaged = false) {
    std::string_view win;
    if (!window->Ensure(offset, record::kHeaderSize, &win).ok() || win.size() < record::kHeaderSize) break;
    uint64_t length = 0;
    if (!record::DecodeHeader(win.data(), offset, std::numeric_limits<uint64_t>::max(), options.max_record_length,
                              &length)
             .ok()) {
      break;
    }
    const uint64_t size = length + record::kFramingOverhead;
    if (!window->Ensure(offset, size, &win).ok() || win.size() < size) break;
    if (!damaged) ++frames;
    offset += size;
  }
  return frames;
}

}  // namespace

record::ReaderOptions ReaderOptionsFor(const VerifyOptions& options) {
  record::ReaderOptions ro;
  ro.max_record_length = options.max_record_length;
  return ro;
}

void WalkPlain(Window* window, const VerifyOptions& options, RecordSink* sink, FileResult* r) {
  const record::ReaderOptions ro = ReaderOptionsFor(options);
  uint64_t offset = 0;
  for (;;) {
    std::string_view win;
    Status s = window->Ensure(offset, record::kHeaderSize, &win);
    if (s.ok() && win.size() >= record::kHeaderSize) {
      // The whole record, when its length can be trusted.
      uint64_t length = 0;
      // (Length CRC and limit only: whether the record fits is judged below.)
      if (record::DecodeHeader(win.data(), offset, std::numeric_limits<uint64_t>::max(), options.max_record_length,
                               &length)
              .ok() &&
          win.size() < length + record::kFramingOverhead) {
        s = window->Ensure(offset, length + record::kFramingOverhead, &win);
      }
    }
    if (!s.ok()) {
      sink->Flush();
      AddFault(r, options, offset, r->records, FaultKind::kUnreadable, s.message());
      r->unchecked_bytes = window->size() - offset;
      return;
    }
    RecordView rec;
    record::FramingError error;
    RecordFault fault = record::DecodeRecordAt(win, 0, ro, &rec, &error);
    if (fault == RecordFault::kEndOfData) break;
    if (fault != RecordFault::kNone) {
      sink->Flush();
      error.offset = offset;  // decoded from the window: where it is in the file
      // Only a fault at byte 0 looks at the head; `win` is still valid here.
      AddFramingFault(r, options, error, offset == 0 ? win : std::string_view());
      r->unchecked_bytes = window->size() - offset;
      if (fault == RecordFault::kDataCrcMismatch) r->frames_after_fault = CountFramesAfter(window, offset, options);
      return;
    }
    rec.offset = offset;
    sink->OnRecord(rec);
    offset = rec.end_offset();
  }
  sink->Flush();
}

void WalkStream(record::RecordStreamReader* reader, const VerifyOptions& options, RecordSink* sink, FileResult* r) {
  RecordView rec;
  for (;;) {
    const uint64_t offset = reader->offset();
    Status s = reader->Next(&rec);
    if (s.ok()) {
      sink->OnRecord(rec);
      continue;
    }
    sink->Flush();
    if (s.code() == StatusCode::kOutOfRange) return;
    r->unchecked_bytes = std::nullopt;
    RecordFault fault = reader->fault();
    if (fault == RecordFault::kNone) {
      // The reader is opened unnamed: its message is the fault's as it is.
      AddFault(r, options, offset, r->records,
               s.code() == StatusCode::kDataLoss ? FaultKind::kCompressedStreamCorrupt : FaultKind::kUnreadable,
               s.message());
    } else {
      // The uncompressed head is gone; the message still says what is wrong.
      AddFramingFault(r, options, reader->framing_error(), std::string_view());
    }
    return;
  }
}

void AddEmptyFault(FileResult* r, const VerifyOptions& options, const FileChecks& checks, bool no_bytes) {
  if (r->records == 0 && r->faults.empty() && !options.allow_empty && !checks.empty_listed) {
    AddFault(r, options, 0, 0, FaultKind::kEmptyFile,
             no_bytes ? "empty file: no records" : "no records in the uncompressed stream");
  }
}

}  // namespace libshard::verify::internal
