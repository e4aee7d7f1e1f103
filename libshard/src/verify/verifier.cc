#include "libshard/verify/verifier.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <system_error>

#include "libshard/example/example_view.h"
#include "libshard/io/mapped_file.h"
#include "libshard/record/index.h"
#include "libshard/record/record_reader.h"

namespace libshard::verify {

namespace {

using record::Compression;
using record::RecordFault;
using record::RecordView;

void AddFault(FileResult* r, const VerifyOptions& options, uint64_t offset, uint64_t record, FaultKind kind,
              std::string message) {
  if (r->faults.size() >= options.max_faults_per_file) {
    ++r->faults_omitted;
    return;
  }
  r->faults.push_back(Fault{offset, record, kind, std::move(message)});
}

// Reader messages say "<what> record at byte N: <detail>" (the stream reader
// prefixes the name too); a fault carries the offset and file separately,
// so keep the detail only.
std::string DetailOf(const std::string& message, uint64_t offset) {
  const std::string at = "at byte " + std::to_string(offset) + ": ";
  size_t pos = message.find(at);
  return pos == std::string::npos ? message : message.substr(pos + at.size());
}

std::string StripPrefix(const std::string& message, const std::string& prefix) {
  const std::string p = prefix + ": ";
  return message.compare(0, p.size(), p) == 0 ? message.substr(p.size()) : message;
}

// A guess at what a non-TFRecord file is, for the message.
std::string WhatItLooksLike(std::string_view head) {
  auto starts = [&](std::string_view magic) { return head.substr(0, magic.size()) == magic; };
  if (starts("\x89PNG\r\n\x1a\n")) return "looks like a PNG image";
  if (starts("\xff\xd8\xff")) return "looks like a JPEG image";
  if (starts("(\xb5/\xfd")) return "looks like zstd data";
  if (!head.empty() && std::all_of(head.begin(), head.end(), [](char c) {
        auto u = static_cast<unsigned char>(c);
        return std::isprint(u) || std::isspace(u);
      })) {
    return "looks like text";
  }
  return "";
}

FaultKind KindOf(RecordFault fault) {
  switch (fault) {
    case RecordFault::kTruncatedHeader: return FaultKind::kTruncatedHeader;
    case RecordFault::kLengthCrcMismatch: return FaultKind::kLengthCrcMismatch;
    case RecordFault::kLengthTooLarge: return FaultKind::kLengthTooLarge;
    case RecordFault::kTruncatedData: return FaultKind::kTruncatedData;
    case RecordFault::kDataCrcMismatch: return FaultKind::kDataCrcMismatch;
    case RecordFault::kNone:
    case RecordFault::kEndOfData: break;
  }
  return FaultKind::kUnreadable;  // not reached: callers pass real faults
}

// Records a framing fault at `offset`. A first header that is not framing at
// all (its CRC fails, or the file is shorter than a header) means the file is
// not a TFRecord file: a flipped bit in the first length reads the same,
// and the message keeps the detail.
void AddFramingFault(FileResult* r, const VerifyOptions& options, RecordFault fault, uint64_t offset,
                     const std::string& message, std::string_view head) {
  std::string detail = DetailOf(message, offset);
  if (offset == 0 && (fault == RecordFault::kLengthCrcMismatch || fault == RecordFault::kTruncatedHeader)) {
    const std::string hint = " (is this a TFRecord file?)";
    size_t pos = detail.find(hint);
    if (pos != std::string::npos) detail.erase(pos, hint.size());
    std::string what = WhatItLooksLike(head.substr(0, 64));
    AddFault(r, options, 0, 0, FaultKind::kNotTfrecord,
             "not a TFRecord file" + (what.empty() ? "" : " (" + what + ")") + ": first record's " + detail);
    return;
  }
  AddFault(r, options, offset, r->records, KindOf(fault), std::move(detail));
}

// Checks one intact record; counts it.
void OnRecord(const RecordView& rec, const VerifyOptions& options, FileResult* r) {
  if (options.check_examples) {
    auto ex = example::ExampleView::Parse(rec.data);
    if (!ex.ok()) {
      AddFault(r, options, rec.offset, r->records, FaultKind::kNotAnExample,
               "payload of " + std::to_string(rec.data.size()) + " bytes is not a tf.Example: " +
                   ex.status().message());
    }
  }
  ++r->records;
  r->bytes += rec.framed_size();
}

record::ReaderOptions ReaderOptionsFor(const VerifyOptions& options) {
  record::ReaderOptions ro;
  ro.max_record_length = options.max_record_length;
  return ro;
}

void WalkPlain(std::string_view data, const VerifyOptions& options, FileResult* r) {
  const record::ReaderOptions ro = ReaderOptionsFor(options);
  uint64_t offset = 0;
  for (;;) {
    RecordView rec;
    RecordFault fault = record::DecodeRecordAt(data, offset, ro, &rec);
    if (fault == RecordFault::kEndOfData) break;
    if (fault != RecordFault::kNone) {
      AddFramingFault(r, options, fault, offset, record::FaultStatus(fault, data, offset, ro).message(), data);
      r->unchecked_bytes = data.size() - offset;
      return;
    }
    OnRecord(rec, options, r);
    offset = rec.end_offset();
  }
}

void WalkStream(std::string_view data, Compression compression, const VerifyOptions& options, FileResult* r) {
  auto reader = record::RecordStreamReader::OpenBuffer(data, r->path, compression, ReaderOptionsFor(options));
  RecordView rec;
  for (;;) {
    const uint64_t offset = reader->offset();
    Status s = reader->Next(&rec);
    if (s.ok()) {
      OnRecord(rec, options, r);
      continue;
    }
    if (s.code() == StatusCode::kOutOfRange) return;
    r->unchecked_bytes = std::nullopt;
    std::string message = StripPrefix(s.message(), r->path);
    RecordFault fault = reader->fault();
    if (fault == RecordFault::kNone) {
      AddFault(r, options, offset, r->records,
               s.code() == StatusCode::kDataLoss ? FaultKind::kCompressedStreamCorrupt : FaultKind::kUnreadable,
               std::move(message));
    } else {
      // The uncompressed head is gone; the message still says what is wrong.
      AddFramingFault(r, options, fault, offset, message, std::string_view());
    }
    return;
  }
}

bool HasFramingFault(const FileResult& r) {
  return std::any_of(r.faults.begin(), r.faults.end(), [](const Fault& f) {
    return f.kind != FaultKind::kNotAnExample && f.kind != FaultKind::kIndexMismatch;
  });
}

}  // namespace

const char* FaultKindName(FaultKind kind) {
  switch (kind) {
    case FaultKind::kLengthCrcMismatch: return "length_crc_mismatch";
    case FaultKind::kLengthTooLarge: return "length_too_large";
    case FaultKind::kTruncatedHeader: return "truncated_header";
    case FaultKind::kTruncatedData: return "truncated_data";
    case FaultKind::kDataCrcMismatch: return "data_crc_mismatch";
    case FaultKind::kNotAnExample: return "not_an_example";
    case FaultKind::kEmptyFile: return "empty_file";
    case FaultKind::kIndexMismatch: return "index_mismatch";
    case FaultKind::kNotTfrecord: return "not_tfrecord";
    case FaultKind::kUnreadable: return "unreadable";
    case FaultKind::kCompressedStreamCorrupt: return "compressed_stream_corrupt";
  }
  return "unknown";
}

Status ValidateOptions(const VerifyOptions& options) {
  if (options.max_faults_per_file < 1) return InvalidArgumentError("max_faults_per_file must be at least 1");
  if (options.threads < 0) return InvalidArgumentError("threads must be 0 (automatic) or positive");
  return Status::OK();
}

bool FileResult::Has(FaultKind kind) const {
  return std::any_of(faults.begin(), faults.end(), [kind](const Fault& f) { return f.kind == kind; });
}

FileResult VerifyBuffer(std::string_view data, std::string name, const VerifyOptions& options) {
  FileResult r;
  r.path = std::move(name);
  Compression c = options.compression;
  if (c == Compression::kAuto) c = record::DetectCompression(data.substr(0, record::kHeaderSize));
  r.compression = c;
  if (c == Compression::kNone) {
    WalkPlain(data, options, &r);
  } else {
    WalkStream(data, c, options, &r);
  }
  if (r.records == 0 && r.faults.empty() && !options.allow_empty) {
    AddFault(&r, options, 0, 0, FaultKind::kEmptyFile,
             data.empty() ? "empty file: no records" : "no records in the uncompressed stream");
  }
  return r;
}

void CheckIndexText(std::string_view shard, std::string_view index_text, const std::string& index_name,
                    FileResult* result) {
  if (HasFramingFault(*result)) return;
  VerifyOptions options;
  options.max_faults_per_file = ~uint64_t{0};  // the caller's cap was applied to the walk already
  auto parsed = record::ParseIndex(index_text);
  if (!parsed.ok()) {
    AddFault(result, options, 0, 0, FaultKind::kIndexMismatch, index_name + ": " + parsed.status().message());
    return;
  }
  const std::vector<record::IndexEntry>& entries = *parsed;
  record::ReaderOptions ro;
  ro.verify_data_crc = false;  // the walk checked them
  ro.max_record_length = ~uint64_t{0};
  uint64_t offset = 0;
  for (uint64_t i = 0;; ++i) {
    RecordView rec;
    RecordFault fault = record::DecodeRecordAt(shard, offset, ro, &rec);
    if (fault != RecordFault::kNone) {
      if (i < entries.size()) {
        AddFault(result, options, offset, i, FaultKind::kIndexMismatch,
                 index_name + " line " + std::to_string(i + 1) + ": entry \"" + std::to_string(entries[i].offset) +
                     " " + std::to_string(entries[i].size) + "\" is past the last record (the shard has " +
                     std::to_string(i) + " records, the index " + std::to_string(entries.size()) + " lines)");
      }
      return;
    }
    if (i >= entries.size()) {
      AddFault(result, options, offset, i, FaultKind::kIndexMismatch,
               index_name + " has " + std::to_string(entries.size()) + " lines, but the shard has more records: "
               "record " + std::to_string(i) + " at byte " + std::to_string(offset) + " is not indexed (stale index?)");
      return;
    }
    if (entries[i].offset != rec.offset || entries[i].size != rec.framed_size()) {
      AddFault(result, options, offset, i, FaultKind::kIndexMismatch,
               index_name + " line " + std::to_string(i + 1) + ": says \"" + std::to_string(entries[i].offset) + " " +
                   std::to_string(entries[i].size) + "\", but record " + std::to_string(i) + " is \"" +
                   std::to_string(rec.offset) + " " + std::to_string(rec.framed_size()) + "\"");
      return;
    }
    offset = rec.end_offset();
  }
}

FileResult VerifyFile(const std::string& path, const VerifyOptions& options) {
  auto unreadable = [&](std::string message) {
    FileResult r;
    r.path = path;
    r.unchecked_bytes = std::nullopt;
    AddFault(&r, options, 0, 0, FaultKind::kUnreadable, std::move(message));
    return r;
  };
  // Opening a FIFO or a device could block for ever: look before opening.
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    return unreadable("not a regular file");
  }
  auto mapped = io::MappedFile::Open(path, io::AccessPattern::kSequential);
  if (!mapped.ok()) return unreadable(StripPrefix(mapped.status().message(), path));
  std::string_view data = (*mapped)->data();
  FileResult r = VerifyBuffer(data, path, options);
  if (options.check_index && r.compression == Compression::kNone) {
    const std::string idx = record::IndexPathFor(path);
    std::error_code ec;
    if (std::filesystem::exists(idx, ec)) {
      auto text = io::ReadFileToString(idx);
      if (!text.ok()) {
        AddFault(&r, options, 0, 0, FaultKind::kUnreadable, "index " + text.status().message());
      } else {
        CheckIndexText(data, *text, idx, &r);
      }
    }
  }
  return r;
}

}  // namespace libshard::verify
