// FileLock: an flock(2) lock on a lock file, the one way the library takes
// one: the output folder's lock (convert/output_lock.h) and the shard
// cache's per-object locks (store/shard_cache.h).
//
//   LIBSHARD_ASSIGN_OR_RETURN(std::optional<io::FileLock> lock,
//                             io::FileLock::TryAcquire(dir + "/lock", io::LockKind::kExclusive));
//   if (!lock) return FailedPreconditionError(dir + ": another writer holds it");
//   ... work ...                          // released when `lock` is destroyed
//
// The file is opened read-write with O_CLOEXEC and O_NOFOLLOW (a symbolic
// link planted at the name is refused, never followed), created 0644 when
// missing unless the call says not to; flock is retried on EINTR. The lock
// is advisory and belongs to the open file description: two FileLocks on one
// path exclude each other within a process as across processes, and the
// kernel drops it when the process exits, however it exits.
//
// Errors: ErrnoError naming the file ("PATH: cannot open the lock file: ...",
// NotFound for a missing file with Create::kNo; "PATH: cannot lock: ...").
// Ownership: the object owns its descriptor; destruction closes it, which
// releases the lock. Movable, not copyable. Thread-safety: one object per
// thread; the static calls may run on many threads at once.
#ifndef LIBSHARD_IO_FILE_LOCK_H_
#define LIBSHARD_IO_FILE_LOCK_H_

#include <optional>
#include <string>

#include "libshard/status.h"

namespace libshard::io {

enum class LockKind { kShared, kExclusive };

class FileLock {
 public:
  enum class Create { kYes, kNo };

  // Opens `path` and takes `kind`, waiting while another holder's lock
  // conflicts.
  static StatusOr<FileLock> Acquire(const std::string& path, LockKind kind, Create create = Create::kYes);
  // The same without waiting: nullopt when another holder's lock conflicts.
  static StatusOr<std::optional<FileLock>> TryAcquire(const std::string& path, LockKind kind,
                                                      Create create = Create::kYes);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  // Changes the held lock to `kind`, waiting. flock's conversion is not
  // atomic (the old lock goes first, so another may take the file in
  // between); to exclusive the shared lock is dropped explicitly first, as
  // two shared holders that both upgrade in place would wait for each other.
  Status Change(LockKind kind);
  // Change() without waiting for the new lock: true when it is held; false
  // when another holder's lock conflicts, and then no lock is held (the old
  // one was dropped first) until Change() takes one again.
  StatusOr<bool> TryChange(LockKind kind);
  // The locked descriptor, handed over still locked (a CachedFile keeps it
  // for as long as the file is pinned); the object holds nothing after.
  int ReleaseDescriptor();

 private:
  FileLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  static StatusOr<FileLock> Open(const std::string& path, Create create);
  std::string path_;
  int fd_ = -1;
};

}  // namespace libshard::io

#endif  // LIBSHARD_IO_FILE_LOCK_H_
