// OpenFileCache: a bounded set of open read-only descriptors shared by many
// readers, so a dataset of thousands of files needs only `capacity` of the
// process's open-file limit (RLIMIT_NOFILE). Descriptors are kept in
// least-recently-used order and closed when evicted; a reader whose file was
// evicted reopens it by path on its next read, and the reopened file must be
// the same one (device and inode), else DataLoss "PATH: the file was
// replaced since it was opened".
//
//   auto cache = std::make_shared<io::OpenFileCache>(64);
//   cache->Put(key, std::move(fd));                 // after opening
//   LIBSHARD_ASSIGN_OR_RETURN(auto fd, cache->Get(key, path, identity, flags));
//   io::PreadFull(fd->get(), ...);                  // `fd` stays open while held
//
// A descriptor handed out stays open while the caller holds it, even when
// evicted meanwhile, so at most `capacity` plus the number of reads in flight
// are open at once.
//
// Thread-safety: all methods are thread-safe.
#ifndef LIBSHARD_IO_OPEN_FILE_CACHE_H_
#define LIBSHARD_IO_OPEN_FILE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "libshard/io/open_file.h"
#include "libshard/status.h"

namespace libshard::io {

class OpenFileCache {
 public:
  // `capacity` >= 1 descriptors kept open.
  explicit OpenFileCache(size_t capacity);
  OpenFileCache(const OpenFileCache&) = delete;
  OpenFileCache& operator=(const OpenFileCache&) = delete;

  // Adds an open descriptor for `key` (a reader's unique id) as the most
  // recently used, evicting the least recently used beyond capacity.
  void Put(uint64_t key, ScopedFd fd);
  // The descriptor for `key`, reopening `path` (OpenForRead with
  // `extra_flags`) when it was evicted; `identity` is the file as first
  // opened. Errors name the path.
  StatusOr<std::shared_ptr<const ScopedFd>> Get(uint64_t key, const std::string& path, const FileIdentity& identity,
                                                int extra_flags);
  // Closes `key`'s descriptor (when the reader goes away).
  void Erase(uint64_t key);

  size_t capacity() const { return capacity_; }
  // Descriptors the cache holds now (<= capacity()).
  size_t open_count() const;

 private:
  void InsertLocked(uint64_t key, std::shared_ptr<const ScopedFd> fd);

  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<std::pair<uint64_t, std::shared_ptr<const ScopedFd>>> lru_;  // front: most recent
  std::unordered_map<uint64_t, decltype(lru_)::iterator> index_;
};

}  // namespace libshard::io

#endif  // LIBSHARD_IO_OPEN_FILE_CACHE_H_
