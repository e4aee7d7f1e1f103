// The lock files (io/file_lock.h): exclusion between holders (two locks on
// one path in a process exclude each other as two processes do), sharing,
// release on destruction and on process exit, the kinds changed in place, no
// symbolic link followed, and errors that name the file.
#include "libshard/io/file_lock.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "testutil.h"

namespace libshard::io {
namespace {

namespace fs = std::filesystem;
using ::libshard::testing::MakeTempDir;

// Whether another holder could take `kind` on `path` right now.
bool Free(const std::string& path, LockKind kind) {
  StatusOr<std::optional<FileLock>> l = FileLock::TryAcquire(path, kind);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  return l.ok() && l->has_value();
}

TEST(FileLockTest, ExclusiveExcludesEveryOneElseUntilDestroyed) {
  const std::string path = MakeTempDir() + "/lock";
  {
    StatusOr<FileLock> held = FileLock::Acquire(path, LockKind::kExclusive);
    ASSERT_TRUE(held.ok()) << held.status().ToString();
    EXPECT_TRUE(fs::is_regular_file(path));  // created
    EXPECT_FALSE(Free(path, LockKind::kExclusive));
    EXPECT_FALSE(Free(path, LockKind::kShared));
  }
  EXPECT_TRUE(Free(path, LockKind::kExclusive));  // released with the object
}

TEST(FileLockTest, SharedHoldersShareAndKeepAnExclusiveOneOut) {
  const std::string path = MakeTempDir() + "/lock";
  StatusOr<std::optional<FileLock>> a = FileLock::TryAcquire(path, LockKind::kShared);
  StatusOr<std::optional<FileLock>> b = FileLock::TryAcquire(path, LockKind::kShared);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a->has_value());
  EXPECT_TRUE(b->has_value());
  EXPECT_FALSE(Free(path, LockKind::kExclusive));
  a->reset();
  EXPECT_FALSE(Free(path, LockKind::kExclusive));  // b still holds it
  b->reset();
  EXPECT_TRUE(Free(path, LockKind::kExclusive));
}

TEST(FileLockTest, MovedLockStaysHeldAndAssignmentReleasesTheOldOne) {
  const std::string dir = MakeTempDir();
  StatusOr<FileLock> a = FileLock::Acquire(dir + "/a", LockKind::kExclusive);
  StatusOr<FileLock> b = FileLock::Acquire(dir + "/b", LockKind::kExclusive);
  ASSERT_TRUE(a.ok() && b.ok());
  FileLock moved(std::move(*a));
  EXPECT_FALSE(Free(dir + "/a", LockKind::kExclusive));
  moved = std::move(*b);  // a's lock goes, b's is now held here
  EXPECT_TRUE(Free(dir + "/a", LockKind::kExclusive));
  EXPECT_FALSE(Free(dir + "/b", LockKind::kExclusive));
}

TEST(FileLockTest, ChangeTurnsSharedIntoExclusiveAndBack) {
  const std::string path = MakeTempDir() + "/lock";
  StatusOr<FileLock> l = FileLock::Acquire(path, LockKind::kShared);
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(Free(path, LockKind::kShared));
  ASSERT_TRUE(l->Change(LockKind::kExclusive).ok());
  EXPECT_FALSE(Free(path, LockKind::kShared));
  ASSERT_TRUE(l->Change(LockKind::kShared).ok());
  EXPECT_TRUE(Free(path, LockKind::kShared));
  EXPECT_FALSE(Free(path, LockKind::kExclusive));
}

TEST(FileLockTest, AcquireWaitsForTheHolder) {
  const std::string path = MakeTempDir() + "/lock";
  std::optional<FileLock> held;
  {
    StatusOr<FileLock> l = FileLock::Acquire(path, LockKind::kExclusive);
    ASSERT_TRUE(l.ok());
    held.emplace(std::move(*l));
  }
  const auto start = std::chrono::steady_clock::now();
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    held.reset();
  });
  StatusOr<FileLock> waited = FileLock::Acquire(path, LockKind::kShared);
  releaser.join();
  ASSERT_TRUE(waited.ok()) << waited.status().ToString();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(150));
}

TEST(FileLockTest, HandedOverDescriptorKeepsTheLock) {
  const std::string path = MakeTempDir() + "/lock";
  StatusOr<FileLock> l = FileLock::Acquire(path, LockKind::kShared);
  ASSERT_TRUE(l.ok());
  const int fd = l->ReleaseDescriptor();
  ASSERT_GE(fd, 0);
  EXPECT_EQ(l->Change(LockKind::kExclusive).code(), StatusCode::kFailedPrecondition);  // it holds nothing now
  *l = FileLock::Acquire(path + "-other", LockKind::kShared).value();  // and its destruction closes nothing of fd's
  EXPECT_FALSE(Free(path, LockKind::kExclusive));
  ::close(fd);
  EXPECT_TRUE(Free(path, LockKind::kExclusive));
}

TEST(FileLockTest, ReleasedWhenTheProcessDies) {
  const std::string path = MakeTempDir() + "/lock";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    StatusOr<FileLock> l = FileLock::Acquire(path, LockKind::kExclusive);
    const char c = l.ok() ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    ::pause();  // killed below, never returns
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ::close(ready[1]);
  ASSERT_EQ(c, 'y');
  EXPECT_FALSE(Free(path, LockKind::kShared));  // the child holds it
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(Free(path, LockKind::kExclusive));
}

TEST(FileLockTest, NoSymbolicLinkFollowedAndErrorsNameTheFile) {
  const std::string dir = MakeTempDir();
  fs::create_symlink(dir + "/elsewhere", dir + "/link");
  StatusOr<FileLock> l = FileLock::Acquire(dir + "/link", LockKind::kExclusive);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find(dir + "/link: cannot open the lock file"), std::string::npos) << l.status();
  EXPECT_FALSE(fs::exists(dir + "/elsewhere"));  // nothing created through the link
  StatusOr<std::optional<FileLock>> missing =
      FileLock::TryAcquire(dir + "/none", LockKind::kExclusive, FileLock::Create::kNo);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(fs::exists(dir + "/none"));
}

}  // namespace
}  // namespace libshard::io
