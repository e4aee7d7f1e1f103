#include "libshard/verify/verifier.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <system_error>

#include "libshard/crc32c.h"

#include "libshard/example/example_view.h"
#include "libshard/io/open_file.h"
#include "libshard/record/index.h"
#include "libshard/record/record_reader.h"
#include "read_window.h"
#include "record_checks.h"
#include "util/catch_status.h"

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

// Faults that stop the walk (or come instead of it).
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

record::ReaderOptions ReaderOptionsFor(const VerifyOptions& options) {
  record::ReaderOptions ro;
  ro.max_record_length = options.max_record_length;
  return ro;
}

// Compares a DALI index with the records as they are walked; at most one
// fault, held back until the walk ends (an index is compared only with
// intact framing).
class IndexComparer {
 public:
  // An index that does not parse gives its fault at Finish().
  static IndexComparer Parse(std::string_view text, std::string name) {
    IndexComparer c;
    auto parsed = record::ParseIndex(text);
    if (parsed.ok()) {
      c.entries_ = std::make_unique<std::vector<record::IndexEntry>>(std::move(*parsed));
    } else {
      c.entries_ = std::make_unique<std::vector<record::IndexEntry>>();
      c.fault_ = Fault{0, 0, FaultKind::kIndexMismatch, name + ": " + parsed.status().message()};
    }
    c.matcher_ = std::make_unique<record::IndexMatcher>(*c.entries_);
    c.name_ = std::move(name);
    return c;
  }

  void OnRecord(uint64_t offset, uint64_t framed_size) {
    if (!fault_) matcher_->OnRecord(offset, framed_size);
  }
  // After the last record, which ended at byte `end`.
  std::optional<Fault> Finish(uint64_t end) {
    if (fault_) return std::move(fault_);
    const std::optional<record::IndexMismatch> m = matcher_->Finish();
    if (!m) return std::nullopt;
    const uint64_t offset = m->kind == record::IndexMismatch::Kind::kEntryPastEnd ? end : m->actual.offset;
    return Fault{offset, m->entry, FaultKind::kIndexMismatch, record::IndexMismatchMessage(*m, name_)};
  }

 private:
  std::unique_ptr<std::vector<record::IndexEntry>> entries_;  // stable address for the matcher
  std::unique_ptr<record::IndexMatcher> matcher_;
  std::string name_;
  std::optional<Fault> fault_;
};

// The payload checks of every intact record, and the count. Without
// decoding, each record is checked as the walk reaches it (its bytes still
// in cache). With decoding, the records are copied into batches whose images
// are decoded in parallel (oneTBB, nested in the per-file tasks); faults are
// then added in record order, so the result does not depend on threads.
class RecordSink {
 public:
  RecordSink(const VerifyOptions& options, const RecordRules* rules, IndexComparer* index, FileResult* r)
      : options_(options), rules_(rules), index_(index), r_(r) {}

  void OnRecord(const RecordView& rec) {
    if (index_ != nullptr) index_->OnRecord(rec.offset, rec.framed_size());
    if (options_.check_examples) {
      if (options_.decode_images) {
        if (jobs_used_ == jobs_.size()) jobs_.emplace_back();
        Job& job = jobs_[jobs_used_++];
        job.faults.clear();
        job.offset = rec.offset;
        job.record = r_->records;
        job.example = Check(rec.data, job.offset, job.record, &job.faults);
        if (job.example) job.payload.assign(rec.data.data(), rec.data.size());
        batch_bytes_ += rec.data.size();
        if (jobs_used_ >= kBatchRecords || batch_bytes_ >= kBatchBytes) Flush();
      } else {
        scratch_.clear();
        Check(rec.data, rec.offset, r_->records, &scratch_);
        for (Fault& f : scratch_) AddFault(r_, options_, f.offset, f.record, f.kind, std::move(f.message));
      }
    }
    ++r_->records;
    r_->bytes += rec.framed_size();
  }

  // Decodes what is pending; call before a framing fault is added, and at
  // the end.
  void Flush() {
    if (jobs_used_ == 0) return;
    tbb::parallel_for(tbb::blocked_range<size_t>(0, jobs_used_, 1), [&](const tbb::blocked_range<size_t>& range) {
      for (size_t i = range.begin(); i != range.end(); ++i) {
        Job& job = jobs_[i];
        if (!job.example) continue;
        // An image too large for the memory left is a fault of its record
        // (the walk goes on), never an abort.
        Status s = util::CatchAsStatus(
            [&] {
              auto ex = example::ExampleView::Parse(job.payload);
              if (ex.ok()) internal::CheckImages(*ex, options_, internal::RecordFaults{job.offset, job.record, &job.faults});
              return Status::OK();
            },
            [] { return "decoding the image (not necessarily damage: check it with more memory)"; });
        if (!s.ok()) job.faults.push_back(Fault{job.offset, job.record, FaultKind::kImageUndecodable, s.message()});
      }
    });
    for (size_t i = 0; i < jobs_used_; ++i) {
      for (Fault& f : jobs_[i].faults) AddFault(r_, options_, f.offset, f.record, f.kind, std::move(f.message));
    }
    jobs_used_ = 0;
    batch_bytes_ = 0;
  }

 private:
  // Enough records to keep the threads busy; bounded memory.
  static constexpr size_t kBatchRecords = 256;
  static constexpr size_t kBatchBytes = 64 << 20;

  struct Job {
    uint64_t offset = 0;
    uint64_t record = 0;
    bool example = false;
    std::string payload;
    std::vector<Fault> faults;
  };

  // Parses the payload and applies the rules; true when it is an Example.
  bool Check(std::string_view payload, uint64_t offset, uint64_t record, std::vector<Fault>* out) {
    auto ex = example::ExampleView::Parse(payload);
    if (!ex.ok()) {
      out->push_back(Fault{offset, record, FaultKind::kNotAnExample,
                           "payload of " + std::to_string(payload.size()) + " bytes is not a tf.Example: " +
                               ex.status().message()});
      return false;
    }
    if (rules_ != nullptr) internal::CheckRules(*ex, *rules_, internal::RecordFaults{offset, record, out});
    return true;
  }

  const VerifyOptions& options_;
  const RecordRules* rules_;
  IndexComparer* index_;
  FileResult* r_;
  std::vector<Fault> scratch_;
  std::vector<Job> jobs_;
  size_t jobs_used_ = 0;
  size_t batch_bytes_ = 0;
};

using internal::BufferWindow;
using internal::FileWindow;
using internal::Window;

// Walks plain framing from byte 0. Returns after the last record or the
// first framing fault (recorded, with unchecked_bytes).
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
      return;
    }
    rec.offset = offset;
    sink->OnRecord(rec);
    offset = rec.end_offset();
  }
  sink->Flush();
}

void WalkStream(record::RecordStreamReader* reader, const VerifyOptions& options, RecordSink* sink,
                FileResult* r) {
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
    std::string message = StripPrefix(s.message(), r->path);
    RecordFault fault = reader->fault();
    if (fault == RecordFault::kNone) {
      AddFault(r, options, offset, r->records,
               s.code() == StatusCode::kDataLoss ? FaultKind::kCompressedStreamCorrupt : FaultKind::kUnreadable,
               std::move(message));
    } else {
      // The uncompressed head is gone; the message still says what is wrong.
      AddFramingFault(r, options, reader->framing_error(), std::string_view());
    }
    return;
  }
}

bool HasFramingFault(const FileResult& r) {
  return std::any_of(r.faults.begin(), r.faults.end(), [](const Fault& f) { return IsFramingFault(f.kind); });
}

void AddEmptyFault(FileResult* r, const VerifyOptions& options, const FileChecks& checks, bool no_bytes) {
  if (r->records == 0 && r->faults.empty() && !options.allow_empty && !checks.empty_listed) {
    AddFault(r, options, 0, 0, FaultKind::kEmptyFile,
             no_bytes ? "empty file: no records" : "no records in the uncompressed stream");
  }
}

// Adds the comparer's fault, if the framing was intact.
void FinishIndex(IndexComparer* index, FileResult* r) {
  if (index == nullptr || HasFramingFault(*r)) return;
  if (auto f = index->Finish(r->bytes)) r->faults.push_back(std::move(*f));  // beyond the cap: one at most
}

}  // namespace

FaultKind FramingFaultKind(RecordFault fault) {
  switch (fault) {
    case RecordFault::kTruncatedHeader: return FaultKind::kTruncatedHeader;
    case RecordFault::kLengthCrcMismatch: return FaultKind::kLengthCrcMismatch;
    case RecordFault::kLengthTooLarge: return FaultKind::kLengthTooLarge;
    case RecordFault::kTruncatedData: return FaultKind::kTruncatedData;
    case RecordFault::kDataCrcMismatch: return FaultKind::kDataCrcMismatch;
    case RecordFault::kNone:
    case RecordFault::kEndOfData: break;
  }
  return FaultKind::kUnreadable;
}

const char* FaultKindName(FaultKind kind) {
  switch (kind) {
    // The framing kinds: the record module's names.
    case FaultKind::kLengthCrcMismatch: return record::RecordFaultName(RecordFault::kLengthCrcMismatch);
    case FaultKind::kLengthTooLarge: return record::RecordFaultName(RecordFault::kLengthTooLarge);
    case FaultKind::kTruncatedHeader: return record::RecordFaultName(RecordFault::kTruncatedHeader);
    case FaultKind::kTruncatedData: return record::RecordFaultName(RecordFault::kTruncatedData);
    case FaultKind::kDataCrcMismatch: return record::RecordFaultName(RecordFault::kDataCrcMismatch);
    case FaultKind::kNotAnExample: return "not_an_example";
    case FaultKind::kEmptyFile: return "empty_file";
    case FaultKind::kIndexMismatch: return "index_mismatch";
    case FaultKind::kNotTfrecord: return "not_tfrecord";
    case FaultKind::kUnreadable: return "unreadable";
    case FaultKind::kCompressedStreamCorrupt: return "compressed_stream_corrupt";
    case FaultKind::kManifestUnreadable: return "manifest_unreadable";
    case FaultKind::kManifestInvalid: return "manifest_invalid";
    case FaultKind::kManifestFormat: return "manifest_format";
    case FaultKind::kManifestShardMissing: return "manifest_shard_missing";
    case FaultKind::kManifestShardUnlisted: return "manifest_shard_unlisted";
    case FaultKind::kManifestRecordCount: return "manifest_record_count";
    case FaultKind::kManifestSize: return "manifest_size";
    case FaultKind::kManifestChecksum: return "manifest_checksum";
    case FaultKind::kManifestLabelOutOfRange: return "manifest_label_out_of_range";
    case FaultKind::kManifestSchema: return "manifest_schema";
    case FaultKind::kSetIncomplete: return "set_incomplete";
    case FaultKind::kImageUndecodable: return "image_undecodable";
    case FaultKind::kImageSizeMismatch: return "image_size_mismatch";
    case FaultKind::kRawArrayInvalid: return "raw_array_invalid";
    case FaultKind::kMaskUndecodable: return "mask_undecodable";
    case FaultKind::kMaskSizeMismatch: return "mask_size_mismatch";
    case FaultKind::kLabelInvalid: return "label_invalid";
  }
  return "unknown";
}

Status ValidateOptions(const VerifyOptions& options) {
  if (options.max_faults_per_file < 1) return InvalidArgumentError("max_faults_per_file must be at least 1");
  if (options.threads < 0 || options.threads > 256) {
    return InvalidArgumentError("threads must be in 0..256 (0: one per core)");
  }
  if (options.decode_images && !options.check_examples) {
    return InvalidArgumentError("decode_images needs check_examples (images live in tf.Examples)");
  }
  if (options.max_pixels < 1) return InvalidArgumentError("max_pixels must be at least 1");
  return Status::OK();
}

bool FileResult::Has(FaultKind kind) const {
  return std::any_of(faults.begin(), faults.end(), [kind](const Fault& f) { return f.kind == kind; });
}

FileResult VerifyBuffer(std::string_view data, std::string name, const VerifyOptions& options,
                        const FileChecks& checks) {
  FileResult r;
  r.path = std::move(name);
  r.file_size = data.size();
  if (checks.checksum) r.crc32c = crc32c::Value(data.data(), data.size());
  Compression c = options.compression;
  if (c == Compression::kAuto) c = record::DetectCompression(data.substr(0, record::kHeaderSize));
  r.compression = c;
  RecordSink sink(options, checks.rules, nullptr, &r);
  if (c == Compression::kNone) {
    BufferWindow window(data);
    WalkPlain(&window, options, &sink, &r);
  } else {
    auto reader = record::RecordStreamReader::OpenBuffer(data, r.path, c, ReaderOptionsFor(options));
    WalkStream(reader.get(), options, &sink, &r);
  }
  AddEmptyFault(&r, options, checks, data.empty());
  return r;
}

void CheckIndexText(std::string_view shard, std::string_view index_text, const std::string& index_name,
                    FileResult* result) {
  if (HasFramingFault(*result)) return;
  IndexComparer index = IndexComparer::Parse(index_text, index_name);
  record::ReaderOptions ro;
  ro.verify_data_crc = false;  // the walk checked them
  ro.max_record_length = ~uint64_t{0};
  uint64_t offset = 0;
  RecordView rec;
  while (record::DecodeRecordAt(shard, offset, ro, &rec) == RecordFault::kNone) {
    index.OnRecord(rec.offset, rec.framed_size());
    offset = rec.end_offset();
  }
  if (auto f = index.Finish(offset)) result->faults.push_back(std::move(*f));
}

namespace {

// The index beside a plain shard, as a comparer; a fault when it cannot be
// read or parsed. nullptr when there is none (or it is not to be checked).
std::unique_ptr<IndexComparer> OpenIndex(const std::string& path, const VerifyOptions& options, FileResult* r) {
  if (!options.check_index) return nullptr;
  const std::string idx = record::IndexPathFor(path);
  std::error_code ec;
  if (!std::filesystem::exists(idx, ec)) return nullptr;
  auto text = io::ReadFileToString(idx);
  if (!text.ok()) {
    r->faults.push_back(Fault{0, 0, FaultKind::kUnreadable, "index " + text.status().message()});
    return nullptr;
  }
  return std::make_unique<IndexComparer>(IndexComparer::Parse(*text, idx));
}

}  // namespace

namespace {

FileResult VerifyFileUnguarded(const std::string& path, const VerifyOptions& options, const FileChecks& checks) {
  FileResult r;
  r.path = path;
  auto unreadable = [&](std::string message) {
    r.unchecked_bytes = std::nullopt;
    AddFault(&r, options, 0, 0, FaultKind::kUnreadable, std::move(message));
    return std::move(r);
  };
  // Regular files only; a FIFO or device is refused without blocking.
  io::FileIdentity id;
  auto opened = io::OpenForRead(path, &id);
  if (!opened.ok()) return unreadable(StripPrefix(opened.status().message(), path));
  const int fd = opened->get();
  r.file_size = id.size;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);  // advisory only

  FileWindow window(fd, r.file_size, checks.checksum);
  std::string_view head;
  if (Status s = window.Ensure(0, record::kHeaderSize, &head); !s.ok()) {
    return unreadable(StripPrefix(s.message(), path));
  }
  Compression c = options.compression;
  if (c == Compression::kAuto) c = record::DetectCompression(head.substr(0, record::kHeaderSize));
  r.compression = c;
  if (c == Compression::kNone) {
    std::unique_ptr<IndexComparer> index = OpenIndex(path, options, &r);
    RecordSink sink(options, checks.rules, index.get(), &r);
    WalkPlain(&window, options, &sink, &r);
    AddEmptyFault(&r, options, checks, r.file_size == 0);
    FinishIndex(index.get(), &r);
    if (checks.checksum) r.crc32c = window.FinishChecksum();
    return r;
  }
  // gzip / zlib: inflated as read (read(2), no mapping: a file shrinking
  // meanwhile cuts the stream short, a fault, never SIGBUS).
  auto reader = record::RecordStreamReader::OpenFd(std::move(*opened), path, c, ReaderOptionsFor(options));
  if (!reader.ok()) return unreadable(StripPrefix(reader.status().message(), path));
  RecordSink sink(options, checks.rules, nullptr, &r);
  WalkStream(reader->get(), options, &sink, &r);
  AddEmptyFault(&r, options, checks, r.file_size == 0);
  if (checks.checksum) {
    auto crc = io::Crc32cOfFile(path);
    if (crc.ok()) {
      r.crc32c = *crc;
    } else {
      AddFault(&r, options, 0, r.records, FaultKind::kUnreadable, StripPrefix(crc.status().message(), path));
    }
  }
  return r;
}

}  // namespace

FileResult VerifyFile(const std::string& path, const VerifyOptions& options, const FileChecks& checks) {
  FileResult r;
  Status s = util::CatchAsStatus([&] { r = VerifyFileUnguarded(path, options, checks); return Status::OK(); },
                                 [] { return "checking the file"; });
  if (!s.ok()) {
    r = FileResult();
    r.path = path;
    r.unchecked_bytes = std::nullopt;
    AddFault(&r, options, 0, 0, FaultKind::kUnreadable, s.message());
  }
  return r;
}

}  // namespace libshard::verify
