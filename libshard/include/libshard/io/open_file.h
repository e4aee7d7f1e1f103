// OpenForRead: the one way libshard opens a file for reading. Every reader in
// the library and the tools (shards, indices, manifests, CSVs, label files,
// source images) goes through it, so all of them share one policy:
//
//   * only regular files are read. A FIFO, directory, device or socket is
//     refused with InvalidArgument "PATH: is a FIFO, not a regular file"
//     (directory, character device, ...) and never blocks: the open uses
//     O_NONBLOCK (a FIFO without a writer would otherwise block in open(2)
//     for ever) and the type is checked with fstat on the opened descriptor,
//     so there is no window between a check and the open;
//   * descriptors are close-on-exec;
//   * errors name the path (NotFound for a missing file, IOError otherwise).
//
//   io::FileIdentity id;
//   LIBSHARD_ASSIGN_OR_RETURN(io::ScopedFd fd, io::OpenForRead(path, &id));
//   std::vector<char> buf(id.size);
//   int64_t n = io::PreadFull(fd.get(), buf.data(), buf.size(), 0);   // -errno on error
//
// Thread-safety: all functions are thread-safe; a ScopedFd is owned by one
// thread at a time.
#ifndef LIBSHARD_IO_OPEN_FILE_H_
#define LIBSHARD_IO_OPEN_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "libshard/status.h"

namespace libshard::io {

// Owns a file descriptor; closes it on destruction. Move-only.
class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() { reset(); }
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = other.release();
    }
    return *this;
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership; returns the descriptor.
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();

 private:
  int fd_ = -1;
};

// What an opened file is, from fstat.
struct FileIdentity {
  uint64_t size = 0;
  uint64_t device = 0;
  uint64_t inode = 0;
};

// Opens `path` read-only (see the file comment for the policy). `extra_flags`
// are added to O_RDONLY|O_CLOEXEC (e.g. O_DIRECT; EINVAL from it is returned
// as an IOError for the caller to retry without). When `identity` is given it
// receives the file's size, device and inode.
StatusOr<ScopedFd> OpenForRead(const std::string& path, FileIdentity* identity = nullptr, int extra_flags = 0);

// "is a FIFO, not a regular file" for a non-regular st_mode ("" for a
// regular file): the words OpenForRead uses, for callers that stat first.
std::string NotRegularFileReason(unsigned mode);

// pread(2) until `n` bytes or the end of the file; returns the bytes read, or
// -errno on an error (EINTR is retried).
int64_t PreadFull(int fd, char* dst, size_t n, uint64_t offset);

// Reads the whole of `path` (OpenForRead, then pread). ResourceExhausted when
// it is larger than `max_bytes`; a file that shrinks meanwhile gives what is
// left.
StatusOr<std::string> ReadFileToString(const std::string& path, uint64_t max_bytes = uint64_t{1} << 32);

// The CRC-32C of the whole of `path`, read with pread (no mapping, so a file
// shrinking meanwhile is an error or a short checksum, never a crash). A file
// that shrinks below the size it had when opened is DataLoss.
StatusOr<uint32_t> Crc32cOfFile(const std::string& path);

}  // namespace libshard::io

#endif  // LIBSHARD_IO_OPEN_FILE_H_
