// MappedFile: a whole file mapped read-only into memory. The bytes are a
// std::string_view valid for the MappedFile's lifetime; views of records are
// slices of it (no copies).
//
//   LIBSHARD_ASSIGN_OR_RETURN(auto file, libshard::io::MappedFile::Open(path));
//   std::string_view bytes = file->data();
//
// Only regular files are opened (io/open_file.h: a FIFO or device is refused,
// never waited on); the descriptor is closed once the file is mapped.
// A file that another process shrinks while mapped makes touching the lost
// pages raise SIGBUS. Each mapping is registered with the fault guard
// (io/fault_guard.h): reads made through WithFaultGuard/GuardedCopy turn that
// into DataLoss; plain reads of data() still fault. Empty files map to an
// empty view.
//
// Thread-safety: const methods may be called concurrently.
#ifndef LIBSHARD_IO_MAPPED_FILE_H_
#define LIBSHARD_IO_MAPPED_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "libshard/io/open_file.h"
#include "libshard/status.h"

namespace libshard::io {

enum class AccessPattern { kNormal, kSequential, kRandom };

class MappedFile {
 public:
  // Maps `path`. Errors (missing file, not a regular file) name the path.
  static StatusOr<std::unique_ptr<MappedFile>> Open(const std::string& path,
                                                    AccessPattern pattern = AccessPattern::kNormal);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view data() const { return {static_cast<const char*>(addr_), size_}; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Size, device and inode of the file when it was mapped.
  const FileIdentity& identity() const { return identity_; }

 private:
  MappedFile(std::string path, void* addr, const FileIdentity& identity)
      : path_(std::move(path)), addr_(addr), size_(identity.size), identity_(identity) {}
  std::string path_;
  void* addr_;
  uint64_t size_;
  FileIdentity identity_;
};

}  // namespace libshard::io

#endif  // LIBSHARD_IO_MAPPED_FILE_H_
