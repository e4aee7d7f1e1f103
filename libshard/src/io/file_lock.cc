// FileLock (file_lock.h).
#include "libshard/io/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

namespace libshard::io {
namespace {

int FlockRetried(int fd, int op) {
  int rc;
  do {
    rc = ::flock(fd, op);
  } while (rc != 0 && errno == EINTR);
  return rc;
}

int FlockOp(LockKind kind) { return kind == LockKind::kExclusive ? LOCK_EX : LOCK_SH; }

}  // namespace

StatusOr<FileLock> FileLock::Open(const std::string& path, Create create) {
  const int flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create == Create::kYes ? O_CREAT : 0);
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) {
    const int e = errno;
    return ErrnoError(path + ": cannot open the lock file", e);
  }
  return FileLock(path, fd);
}

StatusOr<FileLock> FileLock::Acquire(const std::string& path, LockKind kind, Create create) {
  LIBSHARD_ASSIGN_OR_RETURN(FileLock lock, Open(path, create));
  if (FlockRetried(lock.fd_, FlockOp(kind)) != 0) {
    const int e = errno;
    return ErrnoError(path + ": cannot lock", e);
  }
  return lock;
}

StatusOr<std::optional<FileLock>> FileLock::TryAcquire(const std::string& path, LockKind kind, Create create) {
  LIBSHARD_ASSIGN_OR_RETURN(FileLock lock, Open(path, create));
  if (FlockRetried(lock.fd_, FlockOp(kind) | LOCK_NB) != 0) {
    const int e = errno;
    if (e == EWOULDBLOCK) return std::optional<FileLock>();
    return ErrnoError(path + ": cannot lock", e);
  }
  return std::optional<FileLock>(std::move(lock));
}

FileLock::FileLock(FileLock&& other) noexcept : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

Status FileLock::Change(LockKind kind) {
  if (fd_ < 0) return FailedPreconditionError(path_ + ": the lock is not held");
  if (kind == LockKind::kExclusive) FlockRetried(fd_, LOCK_UN);
  if (FlockRetried(fd_, FlockOp(kind)) != 0) {
    const int e = errno;
    return ErrnoError(path_ + ": cannot lock", e);
  }
  return Status::OK();
}

StatusOr<bool> FileLock::TryChange(LockKind kind) {
  if (fd_ < 0) return FailedPreconditionError(path_ + ": the lock is not held");
  FlockRetried(fd_, LOCK_UN);
  if (FlockRetried(fd_, FlockOp(kind) | LOCK_NB) == 0) return true;
  const int e = errno;
  if (e != EWOULDBLOCK) return ErrnoError(path_ + ": cannot lock", e);
  return false;
}

int FileLock::ReleaseDescriptor() { return std::exchange(fd_, -1); }

}  // namespace libshard::io
