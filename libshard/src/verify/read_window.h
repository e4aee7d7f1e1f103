// Sequential reading of a plain shard's bytes for the verifier: from a
// buffer, or from a file with pread into one reused buffer (with the file's
// CRC-32C as it goes). Private to the verifier.
#ifndef LIBSHARD_SRC_VERIFY_READ_WINDOW_H_
#define LIBSHARD_SRC_VERIFY_READ_WINDOW_H_

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "libshard/crc32c.h"
#include "libshard/status.h"

namespace libshard::verify::internal {

// Sequential access to the bytes of a plain file: Ensure() gives the bytes
// from `offset` on, at least `need` of them unless the data ends first.
// Offsets never go backwards. The view is valid until the next call.
class Window {
 public:
  virtual ~Window() = default;
  virtual Status Ensure(uint64_t offset, uint64_t need, std::string_view* out) = 0;
  virtual uint64_t size() const = 0;
};

class BufferWindow : public Window {
 public:
  explicit BufferWindow(std::string_view data) : data_(data) {}
  Status Ensure(uint64_t offset, uint64_t need, std::string_view* out) override {
    *out = offset < data_.size() ? data_.substr(offset) : std::string_view();
    return Status::OK();
  }
  uint64_t size() const override { return data_.size(); }

 private:
  std::string_view data_;
};

// A file read with pread into one reusable buffer. Reading into a buffer
// that stays in the L2 cache and checking the records while they are there
// is faster than walking a fresh mmap of the file, whose page faults and
// unmapping cost more than the copy. The buffer grows only for a record
// longer than it. With `checksum`, a CRC-32C of the whole file is extended
// over each read as it lands (the reads are strictly sequential).
class FileWindow : public Window {
 public:
  static constexpr size_t kChunk = 256 << 10;

  FileWindow(int fd, uint64_t size, bool checksum) : fd_(fd), size_(size), checksum_(checksum) {
    // The thread's spare buffer, if it has one: a fresh one per file costs
    // an mmap, a page fault per page and an munmap, more than reading a
    // small file. Taken, not shared: a nested task on this thread (decode
    // batches) may open another window meanwhile and gets its own.
    Spare& spare = ThreadSpare();
    buf_ = spare.buf;
    capacity_ = spare.capacity;
    spare = Spare{};
  }
  ~FileWindow() override {
    Spare& spare = ThreadSpare();
    if (spare.buf == nullptr && capacity_ <= kKeepCapacity) {
      spare = Spare{buf_, capacity_};
    } else {
      std::free(buf_);
    }
  }
  FileWindow(const FileWindow&) = delete;
  FileWindow& operator=(const FileWindow&) = delete;

  uint64_t size() const override { return size_; }

  Status Ensure(uint64_t offset, uint64_t need, std::string_view* out) override {
    if (offset >= size_) {
      *out = std::string_view();
      return Status::OK();
    }
    const uint64_t want_end = offset + std::min(need, size_ - offset);
    const uint64_t have_end = base_ + filled_;
    if (want_end > have_end) {
      // Keep the bytes from `offset` on at the front, then read behind them.
      const size_t keep = static_cast<size_t>(have_end - offset);
      const uint64_t want = std::max<uint64_t>(kChunk, want_end - offset);
      if (want > capacity_) {
        const size_t capacity = static_cast<size_t>((want + 4095) & ~uint64_t{4095});
        char* grown = static_cast<char*>(std::aligned_alloc(4096, capacity));
        if (grown == nullptr) return ResourceExhaustedError("cannot allocate " + std::to_string(capacity) + " bytes");
        if (keep > 0) std::memcpy(grown, buf_ + (offset - base_), keep);
        std::free(buf_);
        buf_ = grown;
        capacity_ = capacity;
      } else if (keep > 0) {
        std::memmove(buf_, buf_ + (offset - base_), keep);
      }
      base_ = offset;
      filled_ = keep;
      while (base_ + filled_ < want_end) {
        LIBSHARD_RETURN_IF_ERROR(ReadMore());
        if (base_ + filled_ == size_) break;  // the file shrank under us
      }
    }
    *out = std::string_view(buf_ + (offset - base_), static_cast<size_t>(base_ + filled_ - offset));
    return Status::OK();
  }

  // The CRC-32C of the whole file, reading what the walk did not.
  std::optional<uint32_t> FinishChecksum() {
    while (base_ + filled_ < size_) {
      base_ += filled_;
      filled_ = 0;
      if (capacity_ == 0 && !Ensure(base_, 1, &scratch_).ok()) return std::nullopt;
      if (filled_ == 0 && !ReadMore().ok()) return std::nullopt;
    }
    return crc_;
  }

 private:
  // One pread into the free part of the buffer (as much as fits).
  Status ReadMore() {
    const uint64_t at = base_ + filled_;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(capacity_ - filled_, size_ - at));
    for (;;) {
      ssize_t got = ::pread(fd_, buf_ + filled_, n, static_cast<off_t>(at));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return ErrnoError("read at byte " + std::to_string(at), errno);
      if (got == 0) {
        size_ = at;  // shorter than it was: the walk sees the end here
        return Status::OK();
      }
      if (checksum_) crc_ = crc32c::Extend(crc_, buf_ + filled_, static_cast<size_t>(got));
      filled_ += static_cast<size_t>(got);
      return Status::OK();
    }
  }

  // A buffer kept for the thread's next file; larger ones (a record longer
  // than this) are freed.
  static constexpr size_t kKeepCapacity = 4 << 20;
  struct Spare {
    char* buf = nullptr;
    size_t capacity = 0;
  };
  struct SpareHolder {
    Spare spare;
    ~SpareHolder() { std::free(spare.buf); }
  };
  static Spare& ThreadSpare() {
    thread_local SpareHolder holder;
    return holder.spare;
  }

  int fd_;
  uint64_t size_;
  bool checksum_;
  uint32_t crc_ = 0;
  char* buf_ = nullptr;
  size_t capacity_ = 0;
  uint64_t base_ = 0;  // file offset of buf_[0]
  size_t filled_ = 0;  // bytes of buf_ read from the file
  std::string_view scratch_;
};

}  // namespace libshard::verify::internal

#endif  // LIBSHARD_SRC_VERIFY_READ_WINDOW_H_
