// The file API: ValidateOptions, VerifyBuffer and VerifyFile. A file is
// opened, its compression detected, and its records walked (framing_walk.h)
// into the record sink (record_sink.h), with its index (index_check.h) and
// its whole-file checksum.
#include "libshard/verify/verifier.h"

#include <fcntl.h>

#include <memory>

#include "faults.h"
#include "framing_walk.h"
#include "index_check.h"
#include "libshard/crc32c.h"
#include "libshard/io/open_file.h"
#include "libshard/util/threads.h"
#include "read_window.h"
#include "record_sink.h"
#include "util/catch_status.h"

namespace libshard::verify {

namespace {

using internal::AddEmptyFault;
using internal::AddFault;
using internal::BufferWindow;
using internal::FileWindow;
using internal::IndexComparer;
using internal::RecordSink;
using record::Compression;

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
  // io's messages name the file (io/open_file.h): passed on as they are.
  if (!opened.ok()) return unreadable(opened.status().message());
  const int fd = opened->get();
  r.file_size = id.size;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);  // advisory only

  FileWindow window(fd, r.file_size, checks.checksum);
  std::string_view head;
  if (Status s = window.Ensure(0, record::kHeaderSize, &head); !s.ok()) {
    return unreadable(s.message());
  }
  Compression c = options.compression;
  if (c == Compression::kAuto) c = record::DetectCompression(head.substr(0, record::kHeaderSize));
  r.compression = c;
  if (c == Compression::kNone) {
    std::unique_ptr<IndexComparer> index = internal::OpenIndex(path, options, &r);
    std::unique_ptr<internal::LabelsComparer> labels = internal::OpenLabels(path, options, &r);
    RecordSink sink(options, checks.rules, index.get(), labels.get(), &r);
    internal::WalkPlain(&window, options, &sink, &r);
    AddEmptyFault(&r, options, checks, r.file_size == 0);
    internal::FinishIndex(index.get(), &r);
    internal::FinishLabels(labels.get(), &r);
    if (checks.checksum) r.crc32c = window.FinishChecksum();
    return r;
  }
  // gzip / zlib: inflated as read (read(2), no mapping: a file shrinking
  // meanwhile cuts the stream short, a fault, never SIGBUS). Unnamed: the
  // result names the file.
  auto reader = record::RecordStreamReader::OpenFd(std::move(*opened), "", c, internal::ReaderOptionsFor(options));
  if (!reader.ok()) return unreadable(reader.status().message());
  RecordSink sink(options, checks.rules, nullptr, nullptr, &r);
  internal::WalkStream(reader->get(), options, &sink, &r);
  AddEmptyFault(&r, options, checks, r.file_size == 0);
  if (checks.checksum) {
    auto crc = io::Crc32cOfFile(path);
    if (crc.ok()) {
      r.crc32c = *crc;
    } else {
      AddFault(&r, options, 0, r.records, FaultKind::kUnreadable, crc.status().message());
    }
  }
  return r;
}

}  // namespace

Status ValidateOptions(const VerifyOptions& options) {
  if (options.max_faults_per_file < 1) return InvalidArgumentError("max_faults_per_file must be at least 1");
  LIBSHARD_RETURN_IF_ERROR(util::CheckThreadCount(options.threads));
  if (options.decode_images && !options.check_examples) {
    return InvalidArgumentError("decode_images needs check_examples (images live in tf.Examples)");
  }
  if (options.max_pixels < 1) return InvalidArgumentError("max_pixels must be at least 1");
  return Status::OK();
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
  RecordSink sink(options, checks.rules, nullptr, nullptr, &r);
  if (c == Compression::kNone) {
    BufferWindow window(data);
    internal::WalkPlain(&window, options, &sink, &r);
  } else {
    auto reader = record::RecordStreamReader::OpenBuffer(data, "", c, internal::ReaderOptionsFor(options));
    internal::WalkStream(reader.get(), options, &sink, &r);
  }
  AddEmptyFault(&r, options, checks, data.empty());
  return r;
}

FileResult VerifyFile(const std::string& path, const VerifyOptions& options, const FileChecks& checks) {
  FileResult r;
  Status s = util::CatchAsStatus(
      [&] {
        r = VerifyFileUnguarded(path, options, checks);
        return Status::OK();
      },
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
