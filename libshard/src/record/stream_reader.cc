#include "libshard/record/stream_reader.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <limits>

#include "libshard/crc32c.h"
#include "libshard/io/open_file.h"
#include "libshard/record/format.h"

namespace libshard::record {

const char* CompressionName(Compression c) {
  switch (c) {
    case Compression::kAuto:
      return "auto";
    case Compression::kNone:
      return "none";
    case Compression::kGzip:
      return "gzip";
    case Compression::kZlib:
      return "zlib";
  }
  return "unknown";
}

StatusOr<Compression> ParseCompression(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "auto") return Compression::kAuto;
  if (lower.empty() || lower == "none") return Compression::kNone;
  if (lower == "gzip") return Compression::kGzip;
  if (lower == "zlib") return Compression::kZlib;
  return InvalidArgumentError("unknown compression \"" + std::string(name) + "\" (expected auto, none, gzip or zlib)");
}

Compression DetectCompression(std::string_view head) {
  if (head.size() >= kHeaderSize &&
      crc32c::Mask(crc32c::Value(head.data(), kLengthSize)) == DecodeFixed32(head.data() + kLengthSize)) {
    return Compression::kNone;
  }
  const auto* u = reinterpret_cast<const unsigned char*>(head.data());
  if (head.size() >= 2 && u[0] == 0x1f && u[1] == 0x8b) return Compression::kGzip;
  if (head.size() >= 2 && (u[0] & 0x0f) == 8 && (u[0] >> 4) <= 7 && ((u[0] << 8) | u[1]) % 31 == 0) {
    return Compression::kZlib;
  }
  return Compression::kNone;
}

namespace {

// A source of uncompressed bytes.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to n bytes; 0 at the end.
  virtual StatusOr<size_t> Read(char* dst, size_t n) = 0;
};

// The compressed input: counts the bytes it has handed out so corruption can
// be reported by compressed offset.
class InputSource : public ByteSource {
 public:
  virtual uint64_t consumed() const = 0;
};

class FdSource final : public InputSource {
 public:
  FdSource(std::string path, io::ScopedFd fd) : path_(std::move(path)), fd_(std::move(fd)) {}
  StatusOr<size_t> Read(char* dst, size_t n) override {
    for (;;) {
      ssize_t r = ::read(fd_.get(), dst, n);
      if (r >= 0) {
        consumed_ += static_cast<uint64_t>(r);
        return static_cast<size_t>(r);
      }
      if (errno != EINTR) return ErrnoError(path_.empty() ? "read" : "read " + path_, errno);
    }
  }
  uint64_t consumed() const override { return consumed_; }

 private:
  std::string path_;
  io::ScopedFd fd_;
  uint64_t consumed_ = 0;
};

// Bytes borrowed from the caller (must outlive the reader).
class MemorySource final : public InputSource {
 public:
  explicit MemorySource(std::string_view data) : data_(data) {}
  StatusOr<size_t> Read(char* dst, size_t n) override {
    size_t got = std::min<size_t>(n, data_.size() - pos_);
    if (got > 0) std::memcpy(dst, data_.data() + pos_, got);
    pos_ += got;
    return got;
  }
  uint64_t consumed() const override { return pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// Inflates a gzip (possibly multi-member) or zlib stream.
class InflateSource final : public ByteSource {
 public:
  InflateSource(std::unique_ptr<InputSource> in, Compression c) : in_(std::move(in)), gzip_(c == Compression::kGzip) {
    std::memset(&z_, 0, sizeof z_);
    ok_ = inflateInit2(&z_, gzip_ ? 16 + MAX_WBITS : MAX_WBITS) == Z_OK;
    inbuf_.resize(1 << 16);
  }
  ~InflateSource() override {
    if (ok_) inflateEnd(&z_);
  }

  StatusOr<size_t> Read(char* dst, size_t n) override {
    if (!deferred_.ok()) return deferred_;
    if (!ok_) return InternalError("inflateInit2 failed");
    z_.next_out = reinterpret_cast<Bytef*>(dst);
    z_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    Status s = Inflate();
    const size_t produced = n - z_.avail_out;
    if (!s.ok()) {
      // Hand out the good bytes before the damage first; the error follows
      // on the next call, so records before it are still read.
      if (produced == 0) return s;
      deferred_ = s;
    }
    return produced;
  }

 private:
  // Inflates into z_.next_out until it is full or the input ends.
  Status Inflate() {
    while (z_.avail_out > 0 && !done_) {
      if (z_.avail_in == 0) {
        LIBSHARD_ASSIGN_OR_RETURN(size_t got, in_->Read(inbuf_.data(), inbuf_.size()));
        if (got == 0) {
          if (!member_done_) {
            return DataLossError(std::string("truncated ") + (gzip_ ? "gzip" : "zlib") +
                                 " stream: compressed data ends at byte " + std::to_string(in_->consumed()));
          }
          done_ = true;
          break;
        }
        z_.next_in = reinterpret_cast<Bytef*>(inbuf_.data());
        z_.avail_in = static_cast<uInt>(got);
      }
      if (member_done_) {
        // Bytes after a finished member: another gzip member, or garbage.
        if (!gzip_) {
          return DataLossError("data after the end of the zlib stream at compressed byte " +
                               std::to_string(in_->consumed() - z_.avail_in));
        }
        inflateReset(&z_);
        member_done_ = false;
      }
      int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_done_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return DataLossError(std::string("corrupt ") + (gzip_ ? "gzip" : "zlib") + " stream near compressed byte " +
                             std::to_string(in_->consumed() - z_.avail_in) + ": " +
                             (z_.msg ? z_.msg : "inflate error"));
      }
    }
    return Status::OK();
  }

  std::unique_ptr<InputSource> in_;
  bool gzip_;
  z_stream z_;
  bool ok_ = false;
  bool member_done_ = false;
  bool done_ = false;
  std::string inbuf_;
  Status deferred_;  // an error met after good bytes were handed out
};

class StreamReaderImpl final : public RecordStreamReader {
 public:
  StreamReaderImpl(std::string path, std::unique_ptr<ByteSource> src, Compression c, ReaderOptions options)
      : path_(std::move(path)), src_(std::move(src)), compression_(c), options_(options) {}

  Compression compression() const override { return compression_; }
  uint64_t offset() const override { return offset_; }
  RecordFault fault() const override { return framing_.fault; }
  const FramingError& framing_error() const override { return framing_; }

  Status Next(RecordView* record) override {
    if (!error_.ok()) return error_;
    framing_ = FramingError{};
    Status s = ReadOne(record);
    if (!s.ok() && s.code() != StatusCode::kOutOfRange) {
      if (!path_.empty()) s = s.WithContext(path_);
      error_ = s;
    }
    return s;
  }

 private:
  // Reads until `n` bytes are buffered or the stream ends; returns bytes buffered.
  StatusOr<size_t> Fill(size_t n) {
    while (buf_.size() < n) {
      size_t old = buf_.size();
      // Grow geometrically rather than to n at once: a corrupt length that
      // passes its CRC must not allocate more than the stream really holds.
      size_t want = std::max<size_t>(std::min(n - old, std::max<size_t>(old, 1 << 16)), 1 << 16);
      buf_.resize(old + want);
      StatusOr<size_t> got = src_->Read(buf_.data() + old, want);
      if (!got.ok()) {
        buf_.resize(old);
        return got.status();
      }
      buf_.resize(old + *got);
      if (*got == 0) break;
    }
    return buf_.size();
  }

  Status ReadOne(RecordView* record) {
    buf_.erase(0, consumed_);
    consumed_ = 0;
    LIBSHARD_ASSIGN_OR_RETURN(size_t have, Fill(kHeaderSize));
    if (have == 0) {
      framing_ = FramingError{RecordFault::kEndOfData, offset_, 0, 0};
      return FramingStatus(framing_);
    }
    // Decode against the buffered bytes, then re-base the verdict on the
    // stream offset.
    uint64_t length = 0;
    if (have >= kHeaderSize &&
        DecodeHeader(buf_.data(), 0, std::numeric_limits<uint64_t>::max(), options_.max_record_length, &length).ok()) {
      LIBSHARD_ASSIGN_OR_RETURN(have, Fill(kFramingOverhead + static_cast<size_t>(length)));
    }
    RecordView view;
    if (DecodeRecordAt(std::string_view(buf_.data(), have), 0, options_, &view, &framing_) == RecordFault::kNone) {
      record->data = view.data;
      record->offset = offset_;
      offset_ += view.framed_size();
      consumed_ = view.framed_size();
      return Status::OK();
    }
    framing_.offset = offset_;
    return FramingStatus(framing_);
  }

  std::string path_;
  std::unique_ptr<ByteSource> src_;
  Compression compression_;
  ReaderOptions options_;
  std::string buf_;
  size_t consumed_ = 0;
  uint64_t offset_ = 0;
  FramingError framing_;
  Status error_;
};

std::unique_ptr<RecordStreamReader> MakeReader(std::string name, std::unique_ptr<InputSource> input,
                                               Compression compression, ReaderOptions options) {
  std::unique_ptr<ByteSource> source;
  if (compression == Compression::kNone) {
    source = std::move(input);
  } else {
    source = std::make_unique<InflateSource>(std::move(input), compression);
  }
  return std::make_unique<StreamReaderImpl>(std::move(name), std::move(source), compression, options);
}

}  // namespace

StatusOr<std::unique_ptr<RecordStreamReader>> RecordStreamReader::Open(const std::string& path, Compression compression,
                                                                       ReaderOptions options) {
  LIBSHARD_ASSIGN_OR_RETURN(io::ScopedFd fd, io::OpenForRead(path));
  return OpenFd(std::move(fd), path, compression, options);
}

StatusOr<std::unique_ptr<RecordStreamReader>> RecordStreamReader::OpenFd(io::ScopedFd fd, const std::string& name,
                                                                         Compression compression,
                                                                         ReaderOptions options) {
  if (compression == Compression::kAuto) {
    char head[kHeaderSize];
    const int64_t n = io::PreadFull(fd.get(), head, sizeof head, 0);
    if (n < 0) return ErrnoError(name.empty() ? "read" : "read " + name, static_cast<int>(-n));
    compression = DetectCompression(std::string_view(head, static_cast<size_t>(n)));
  }
  return MakeReader(name, std::make_unique<FdSource>(name, std::move(fd)), compression, options);
}

std::unique_ptr<RecordStreamReader> RecordStreamReader::OpenBuffer(std::string_view data, std::string name,
                                                                   Compression compression, ReaderOptions options) {
  if (compression == Compression::kAuto) compression = DetectCompression(data.substr(0, kHeaderSize));
  return MakeReader(std::move(name), std::make_unique<MemorySource>(data), compression, options);
}

}  // namespace libshard::record
