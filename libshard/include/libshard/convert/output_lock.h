// One writer per output folder: `shard convert` and `shard merge` hold an
// flock(2) on OUT/.libshard/lock for their whole run, so that a second
// conversion into the same folder fails at once instead of corrupting the
// first one's shards and manifest.
//
//   kExclusive  a single-task conversion, and `shard merge`: nobody else.
//   kTask       task I of N of a split conversion: the tasks of one split run
//               share the folder (a shared lock on OUT/.libshard/lock), each
//               task exclusive to itself (OUT/.libshard/lock.task-IIIII-of-
//               NNNNN); a single run or a merge excludes them all.
//
//   LIBSHARD_ASSIGN_OR_RETURN(OutputLock lock, OutputLock::Acquire(out, LockMode::kExclusive));
//   ... write ...                       // released when `lock` is destroyed
//
// The lock is advisory and per open file description: it is released when
// the process exits, however it exits (kill -9 included), so a killed run
// never leaves a folder locked. flock on NFS is emulated with POSIX locks by
// Linux (since 2.6.12) and holds across clients that mount with locking.
//
// Errors: kFailedPrecondition naming the folder when another writer holds
// the lock (never waits); IOError when the lock file cannot be created.
// Thread-safety: one object per acquisition; movable, not copyable. The
// locks are io::FileLock's (io/file_lock.h).
#ifndef LIBSHARD_CONVERT_OUTPUT_LOCK_H_
#define LIBSHARD_CONVERT_OUTPUT_LOCK_H_

#include <cstdint>
#include <optional>
#include <string>

#include "libshard/io/file_lock.h"
#include "libshard/status.h"

namespace libshard::convert {

enum class LockMode { kExclusive, kTask };

class OutputLock {
 public:
  // Creates OUT/.libshard/ if needed. `task_index`/`num_tasks` name the task
  // for kTask.
  static StatusOr<OutputLock> Acquire(const std::string& output_dir, LockMode mode, uint32_t task_index = 0,
                                      uint32_t num_tasks = 1);

 private:
  OutputLock(io::FileLock folder, std::optional<io::FileLock> task)
      : folder_(std::move(folder)), task_(std::move(task)) {}
  io::FileLock folder_;              // OUT/.libshard/lock
  std::optional<io::FileLock> task_;  // OUT/.libshard/lock.task-IIIII-of-NNNNN, kTask only
};

}  // namespace libshard::convert

#endif  // LIBSHARD_CONVERT_OUTPUT_LOCK_H_
