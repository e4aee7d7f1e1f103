// Sequential reading of TFRecord files from disk, plain or compressed as
// TensorFlow writes them with compression_type "GZIP" or "ZLIB" (the whole
// framed stream is compressed, not each record).
//
//   LIBSHARD_ASSIGN_OR_RETURN(auto reader, libshard::record::RecordStreamReader::Open(path));
//   libshard::record::RecordView rec;
//   libshard::Status s;
//   while ((s = reader->Next(&rec)).ok()) Use(rec.data);
//   if (s.code() != libshard::StatusCode::kOutOfRange) return s;
//
// Next() has RecordReader's contract (OK / OutOfRange at a clean end /
// DataLoss with the offset), except that rec.data is only valid until the
// next call, and offsets count bytes of the uncompressed stream. Corrupt
// compressed data is DataLoss naming the compressed byte offset. Messages are
// prefixed with the file name (the `name` given; none when it is empty, for a
// caller that reports the file itself, as the verifier does). Files are read with read(2), never mapped, so
// a file shrinking meanwhile ends the stream early (DataLoss for the record
// cut short) instead of raising SIGBUS; only regular files are opened
// (io::OpenForRead: a FIFO is refused, never waited on).
//
// Thread-safety: not thread-safe.
#ifndef LIBSHARD_RECORD_STREAM_READER_H_
#define LIBSHARD_RECORD_STREAM_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "libshard/io/open_file.h"
#include "libshard/record/record_reader.h"
#include "libshard/status.h"

namespace libshard::record {

enum class Compression { kAuto, kNone, kGzip, kZlib };

// "auto", "none", "gzip", "zlib".
const char* CompressionName(Compression c);
// Parses a CompressionName (case-insensitive; "" is "none").
StatusOr<Compression> ParseCompression(std::string_view name);

// Guesses the compression from the first bytes of a file: a valid TFRecord
// length CRC means none; else the gzip magic (1f 8b) means gzip; else a zlib
// header means zlib; else none (and reading will report the damage).
Compression DetectCompression(std::string_view head);

class RecordStreamReader {
 public:
  static StatusOr<std::unique_ptr<RecordStreamReader>> Open(const std::string& path,
                                                            Compression compression = Compression::kAuto,
                                                            ReaderOptions options = {});
  // Reads an open file from its current position (taking ownership); `name`
  // prefixes messages ("" none). kAuto looks at the first bytes with pread.
  static StatusOr<std::unique_ptr<RecordStreamReader>> OpenFd(io::ScopedFd fd, const std::string& name,
                                                              Compression compression = Compression::kAuto,
                                                              ReaderOptions options = {});
  // Reads the file held in `data` (e.g. a mapped file or a fuzzer's input),
  // which must stay valid while the reader is used; `name` prefixes
  // messages ("" none). Never fails to open: damage surfaces from Next().
  static std::unique_ptr<RecordStreamReader> OpenBuffer(std::string_view data, std::string name,
                                                        Compression compression = Compression::kAuto,
                                                        ReaderOptions options = {});
  virtual ~RecordStreamReader() = default;

  virtual Status Next(RecordView* record) = 0;
  // The compression in use (never kAuto).
  virtual Compression compression() const = 0;
  // Offset in the uncompressed stream of the next record.
  virtual uint64_t offset() const = 0;
  // The framing fault of the last Next() call: kNone after a record and
  // after an error of the compressed stream or of I/O, kEndOfData at a
  // clean end, else what is wrong with the record at offset().
  virtual RecordFault fault() const = 0;
  // The whole verdict of the last Next() call, offset in stream coordinates.
  virtual const FramingError& framing_error() const = 0;
};

}  // namespace libshard::record

#endif  // LIBSHARD_RECORD_STREAM_READER_H_
