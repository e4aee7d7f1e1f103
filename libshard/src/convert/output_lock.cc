#include "libshard/convert/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include "libshard/convert/manifest_io.h"

namespace libshard::convert {
namespace {

// Opens (creating) `path` and takes `op` on it without waiting: the fd, or
// -1 with *busy set when someone else holds a conflicting lock.
StatusOr<int> LockFile(const std::string& path, int op, bool* busy) {
  *busy = false;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return IOError(path + ": cannot open the lock file: " + std::strerror(errno));
  while (::flock(fd, op | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      *busy = true;
      return -1;
    }
    return IOError(path + ": cannot lock: " + std::strerror(err));
  }
  return fd;
}

}  // namespace

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
  OutputLock lock;
  bool busy = false;
  LIBSHARD_ASSIGN_OR_RETURN(lock.folder_fd_,
                            LockFile(state + "/lock", mode == LockMode::kExclusive ? LOCK_EX : LOCK_SH, &busy));
  if (busy) return FailedPreconditionError(refused);
  if (mode == LockMode::kTask) {
    char name[64];
    std::snprintf(name, sizeof(name), "/lock.task-%05u-of-%05u", task_index, num_tasks);
    LIBSHARD_ASSIGN_OR_RETURN(lock.task_fd_, LockFile(state + name, LOCK_EX, &busy));
    if (busy) {
      return FailedPreconditionError(dir + ": task " + std::to_string(task_index) + " of " + std::to_string(num_tasks) +
                                     " is already running into this output folder (it holds " + state + name +
                                     "); wait for it to end");
    }
  }
  return lock;
}

OutputLock::OutputLock(OutputLock&& other) noexcept
    : folder_fd_(std::exchange(other.folder_fd_, -1)), task_fd_(std::exchange(other.task_fd_, -1)) {}

OutputLock& OutputLock::operator=(OutputLock&& other) noexcept {
  if (this != &other) {
    Release();
    folder_fd_ = std::exchange(other.folder_fd_, -1);
    task_fd_ = std::exchange(other.task_fd_, -1);
  }
  return *this;
}

OutputLock::~OutputLock() { Release(); }

void OutputLock::Release() {
  if (task_fd_ >= 0) ::close(task_fd_);
  if (folder_fd_ >= 0) ::close(folder_fd_);
  task_fd_ = folder_fd_ = -1;
}

}  // namespace libshard::convert
