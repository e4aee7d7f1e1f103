#include "libshard/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "libshard/io/fault_guard.h"
#include "libshard/io/open_file.h"

namespace libshard::io {

StatusOr<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path, AccessPattern pattern) {
  FileIdentity id;
  LIBSHARD_ASSIGN_OR_RETURN(ScopedFd fd, OpenForRead(path, &id));
  const uint64_t size = id.size;
  void* addr = nullptr;
  if (size > 0) {
    addr = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
    if (addr == MAP_FAILED) return ErrnoError("mmap " + path, errno);
    int advice = pattern == AccessPattern::kSequential ? MADV_SEQUENTIAL
                 : pattern == AccessPattern::kRandom   ? MADV_RANDOM
                                                       : MADV_NORMAL;
    ::madvise(addr, size, advice);  // advisory only; failure is harmless
    AddGuardedRange(addr, size);
  }
  // fd closes here: the mapping keeps the file referenced.
  return std::unique_ptr<MappedFile>(new MappedFile(path, addr, id));
}

MappedFile::~MappedFile() {
  if (addr_ != nullptr) {
    RemoveGuardedRange(addr_);
    ::munmap(addr_, size_);
  }
}

}  // namespace libshard::io
