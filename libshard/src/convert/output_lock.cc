#include "libshard/convert/output_lock.h"

#include <cstdio>
#include <filesystem>
#include <utility>

#include "libshard/convert/manifest_io.h"

namespace libshard::convert {

StatusOr<OutputLock> OutputLock::Acquire(const std::string& dir, LockMode mode, uint32_t task_index,
                                         uint32_t num_tasks) {
  const std::string state = dir + "/" + kStateDir;
  std::error_code ec;
  std::filesystem::create_directories(state, ec);
  if (ec) return IOError(state + ": cannot create folder: " + ec.message());
  const std::string refused = dir +
                              ": another `shard convert` or `shard merge` is writing to this output folder "
                              "(it holds " +
                              state + "/lock); wait for it to end, or use another folder";
  using io::FileLock;
  using io::LockKind;
  LIBSHARD_ASSIGN_OR_RETURN(
      std::optional<FileLock> folder,
      FileLock::TryAcquire(state + "/lock", mode == LockMode::kExclusive ? LockKind::kExclusive : LockKind::kShared));
  if (!folder) return FailedPreconditionError(refused);
  std::optional<FileLock> task;
  if (mode == LockMode::kTask) {
    char name[64];
    std::snprintf(name, sizeof(name), "/lock.task-%05u-of-%05u", task_index, num_tasks);
    LIBSHARD_ASSIGN_OR_RETURN(task, FileLock::TryAcquire(state + name, LockKind::kExclusive));
    if (!task) {
      return FailedPreconditionError(dir + ": task " + std::to_string(task_index) + " of " + std::to_string(num_tasks) +
                                     " is already running into this output folder (it holds " + state + name +
                                     "); wait for it to end");
    }
  }
  return OutputLock(std::move(*folder), std::move(task));
}

}  // namespace libshard::convert
