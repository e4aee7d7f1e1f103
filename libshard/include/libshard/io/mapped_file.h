// MappedFile: a whole file mapped read-only into memory. The bytes are a
// std::string_view valid for the MappedFile's lifetime; views of records are
// slices of it (no copies).
//
//   LIBSHARD_ASSIGN_OR_RETURN(auto file, libshard::io::MappedFile::Open(path));
//   std::string_view bytes = file->data();
//
// A file that another process shrinks while mapped makes touching the lost
// pages raise SIGBUS; callers that must survive that (the training reader)
// re-check size() against the file system before handing out views, or read
// through pread instead. Empty files map to an empty view.
//
// Thread-safety: const methods may be called concurrently.
#ifndef LIBSHARD_IO_MAPPED_FILE_H_
#define LIBSHARD_IO_MAPPED_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

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

 private:
  MappedFile(std::string path, void* addr, uint64_t size)
      : path_(std::move(path)), addr_(addr), size_(size) {}
  std::string path_;
  void* addr_;
  uint64_t size_;
};

// Reads a whole file. Fails with ResourceExhausted when it is larger than
// `max_bytes`.
StatusOr<std::string> ReadFileToString(const std::string& path, uint64_t max_bytes = uint64_t{1} << 32);

}  // namespace libshard::io

#endif  // LIBSHARD_IO_MAPPED_FILE_H_
