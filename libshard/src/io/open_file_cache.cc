#include "libshard/io/open_file_cache.h"

#include <algorithm>

namespace libshard::io {

OpenFileCache::OpenFileCache(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

void OpenFileCache::InsertLocked(uint64_t key, std::shared_ptr<const ScopedFd> fd) {
  auto it = index_.find(key);
  if (it != index_.end()) {
    lru_.erase(it->second);
    index_.erase(it);
  }
  lru_.emplace_front(key, std::move(fd));
  index_[key] = lru_.begin();
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();  // closes unless a read holds it; then the read closes it
  }
}

void OpenFileCache::Put(uint64_t key, ScopedFd fd) {
  auto shared = std::make_shared<const ScopedFd>(std::move(fd));
  std::lock_guard<std::mutex> lock(mu_);
  InsertLocked(key, std::move(shared));
}

StatusOr<std::shared_ptr<const ScopedFd>> OpenFileCache::Get(uint64_t key, const std::string& path,
                                                             const FileIdentity& identity, int extra_flags) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return lru_.front().second;
    }
  }
  // Evicted: reopen outside the lock (open may be slow on a network file system).
  FileIdentity now;
  LIBSHARD_ASSIGN_OR_RETURN(ScopedFd fd, OpenForRead(path, &now, extra_flags));
  if (now.device != identity.device || now.inode != identity.inode) {
    return DataLossError(path + ": the file was replaced since it was opened");
  }
  auto shared = std::make_shared<const ScopedFd>(std::move(fd));
  std::lock_guard<std::mutex> lock(mu_);
  InsertLocked(key, shared);
  return shared;
}

void OpenFileCache::Erase(uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return;
  lru_.erase(it->second);
  index_.erase(it);
}

size_t OpenFileCache::open_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

}  // namespace libshard::io
