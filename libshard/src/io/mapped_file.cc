#include "libshard/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace libshard::io {
namespace {

// Opens a regular file for reading; sets *size. The caller closes the fd.
StatusOr<int> OpenRegularFile(const std::string& path, uint64_t* size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open " + path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoError("stat " + path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgumentError(path + ": not a regular file");
  }
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

}  // namespace

StatusOr<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path, AccessPattern pattern) {
  uint64_t size = 0;
  LIBSHARD_ASSIGN_OR_RETURN(int fd, OpenRegularFile(path, &size));
  void* addr = nullptr;
  if (size > 0) {
    addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return ErrnoError("mmap " + path, err);
    }
    int advice = pattern == AccessPattern::kSequential ? MADV_SEQUENTIAL
                 : pattern == AccessPattern::kRandom   ? MADV_RANDOM
                                                       : MADV_NORMAL;
    ::madvise(addr, size, advice);  // advisory only; failure is harmless
  }
  ::close(fd);  // the mapping keeps the file referenced
  return std::unique_ptr<MappedFile>(new MappedFile(path, addr, size));
}

MappedFile::~MappedFile() {
  if (addr_ != nullptr) ::munmap(addr_, size_);
}

StatusOr<std::string> ReadFileToString(const std::string& path, uint64_t max_bytes) {
  uint64_t size = 0;
  LIBSHARD_ASSIGN_OR_RETURN(int fd, OpenRegularFile(path, &size));
  if (size > max_bytes) {
    ::close(fd);
    return ResourceExhaustedError(path + ": file of " + std::to_string(size) +
                                  " bytes exceeds the limit of " + std::to_string(max_bytes));
  }
  std::string out;
  out.resize(static_cast<size_t>(size));
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return ErrnoError("read " + path, err);
    }
    if (n == 0) break;  // file shrank meanwhile
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  ::close(fd);
  return out;
}

}  // namespace libshard::io
