#include "libshard/io/open_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "libshard/crc32c.h"

namespace libshard::io {

void ScopedFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string NotRegularFileReason(unsigned mode) {
  const char* what = S_ISFIFO(mode)   ? "a FIFO"
                     : S_ISDIR(mode)  ? "a directory"
                     : S_ISCHR(mode)  ? "a character device"
                     : S_ISBLK(mode)  ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                     : S_ISREG(mode)  ? nullptr
                                      : "a special file";
  if (what == nullptr) return "";
  return std::string("is ") + what + ", not a regular file";
}

StatusOr<ScopedFd> OpenForRead(const std::string& path, FileIdentity* identity, int extra_flags) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of
  // waiting for one; the fstat below then refuses it.
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | extra_flags));
  if (!fd.valid()) return ErrnoError("open " + path, errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoError("stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return InvalidArgumentError(path + ": " + NotRegularFileReason(st.st_mode));
  const int fl = ::fcntl(fd.get(), F_GETFL);
  if (fl < 0 || ::fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK) != 0) return ErrnoError("fcntl " + path, errno);
  if (identity != nullptr) {
    identity->size = static_cast<uint64_t>(st.st_size);
    identity->device = static_cast<uint64_t>(st.st_dev);
    identity->inode = static_cast<uint64_t>(st.st_ino);
  }
  return fd;
}

int64_t PreadFull(int fd, char* dst, size_t n, uint64_t offset) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, dst + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  return static_cast<int64_t>(done);
}

StatusOr<uint32_t> Crc32cOfFile(const std::string& path) {
  FileIdentity id;
  LIBSHARD_ASSIGN_OR_RETURN(ScopedFd fd, OpenForRead(path, &id));
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);  // advisory only
  constexpr size_t kChunk = size_t{1} << 20;
  std::unique_ptr<char[]> buf(new char[kChunk]);
  uint32_t crc = 0;
  for (uint64_t at = 0; at < id.size;) {
    const int64_t n = PreadFull(fd.get(), buf.get(), static_cast<size_t>(std::min<uint64_t>(kChunk, id.size - at)), at);
    if (n < 0) return ErrnoError("read " + path, static_cast<int>(-n));
    if (n == 0) {
      return DataLossError(path + ": file shrank while being read (" + std::to_string(id.size) +
                           " bytes when opened, " + std::to_string(at) + " now)");
    }
    crc = crc32c::Extend(crc, buf.get(), static_cast<size_t>(n));
    at += static_cast<uint64_t>(n);
  }
  return crc;
}

StatusOr<std::string> ReadFileToString(const std::string& path, uint64_t max_bytes) {
  FileIdentity id;
  LIBSHARD_ASSIGN_OR_RETURN(ScopedFd fd, OpenForRead(path, &id));
  if (id.size > max_bytes) {
    return ResourceExhaustedError(path + ": file of " + std::to_string(id.size) + " bytes exceeds the limit of " +
                                  std::to_string(max_bytes));
  }
  std::string out;
  out.resize(static_cast<size_t>(id.size));
  const int64_t n = PreadFull(fd.get(), out.data(), out.size(), 0);
  if (n < 0) return ErrnoError("read " + path, static_cast<int>(-n));
  out.resize(static_cast<size_t>(n));  // shorter when the file shrank meanwhile
  return out;
}

}  // namespace libshard::io
