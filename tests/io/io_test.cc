// Tests of the file layer: MappedFile, ReadFileToString, the fault guard,
// writable files and RenameFile.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "libshard/crc32c.h"
#include "libshard/io/fault_guard.h"
#include "libshard/io/mapped_file.h"
#include "libshard/io/writable_file.h"
#include "testutil.h"

namespace libshard::io {
namespace {

using ::libshard::testing::MakeTempDir;
using ::libshard::testing::ReadFileOrDie;
using ::libshard::testing::WriteFileOrDie;

using ::libshard::testing::HasSubstr;

TEST(MappedFileTest, MapsContents) {
  std::string path = MakeTempDir() + "/f";
  std::string contents(100000, '\0');
  for (size_t i = 0; i < contents.size(); ++i) contents[i] = static_cast<char>(i * 7);
  WriteFileOrDie(path, contents);
  for (AccessPattern p : {AccessPattern::kNormal, AccessPattern::kSequential, AccessPattern::kRandom}) {
    auto file = MappedFile::Open(path, p);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_EQ((*file)->size(), contents.size());
    EXPECT_EQ((*file)->data(), contents);
    EXPECT_EQ((*file)->path(), path);
  }
}

TEST(MappedFileTest, EmptyFile) {
  std::string path = MakeTempDir() + "/empty";
  WriteFileOrDie(path, "");
  auto file = MappedFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->size(), 0u);
  EXPECT_TRUE((*file)->data().empty());
}

TEST(MappedFileTest, MissingFileIsNotFoundNamingPath) {
  std::string path = MakeTempDir() + "/no_such_file.tfrecord";
  auto file = MappedFile::Open(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(HasSubstr(file.status().message(), path));
}

TEST(MappedFileTest, DirectoryIsRefused) {
  std::string dir = MakeTempDir();
  auto file = MappedFile::Open(dir);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(HasSubstr(file.status().message(), dir));
  EXPECT_TRUE(HasSubstr(file.status().message(), "not a regular file"));
}

TEST(ReadFileToStringTest, ReadsWholeFileWithinLimit) {
  std::string path = MakeTempDir() + "/f";
  WriteFileOrDie(path, "0123456789");
  auto exact = ReadFileToString(path, 10);
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(*exact, "0123456789");
  auto over = ReadFileToString(path, 9);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(HasSubstr(over.status().message(), path));
  EXPECT_TRUE(HasSubstr(over.status().message(), "10 bytes"));
  auto missing = ReadFileToString(path + ".missing");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(HasSubstr(missing.status().message(), path + ".missing"));
}

TEST(WritableFileTest, PosixFileWritesEverything) {
  std::string path = MakeTempDir() + "/out";
  auto file = NewPosixWritableFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  std::string want;
  // Small appends that stay buffered, one larger than the buffer, then more.
  for (int i = 0; i < 1000; ++i) {
    std::string piece = std::to_string(i) + ",";
    ASSERT_TRUE((*file)->Append(piece).ok());
    want += piece;
  }
  std::string big((1 << 20) + 17, 'B');
  ASSERT_TRUE((*file)->Append(big).ok());
  want += big;
  ASSERT_TRUE((*file)->Append("tail").ok());
  want += "tail";
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_EQ(ReadFileOrDie(path), want);
  EXPECT_EQ((*file)->Append("x").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*file)->Close().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*file)->name(), path);
}

TEST(WritableFileTest, WriteErrorIsSticky) {
  auto file = NewPosixWritableFile("/dev/full");
  if (!file.ok()) GTEST_SKIP() << "/dev/full unavailable: " << file.status();
  ASSERT_TRUE((*file)->Append("buffered").ok());
  Status s = (*file)->Flush();
  EXPECT_EQ(s.code(), StatusCode::kIOError);
  EXPECT_TRUE(HasSubstr(s.message(), "No space left"));
  // The lost bytes are not forgotten: later calls report the same error.
  EXPECT_EQ((*file)->Append("more"), s);
  EXPECT_EQ((*file)->Close(), s);
}

TEST(WritableFileTest, StringFile) {
  std::string dest = "pre:";
  auto file = NewStringWritableFile(&dest, "mem");
  ASSERT_TRUE(file->Append("abc").ok());
  ASSERT_TRUE(file->Flush().ok());
  ASSERT_TRUE(file->Close().ok());
  EXPECT_EQ(dest, "pre:abc");
  EXPECT_EQ(file->Append("x").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(file->Append("x").message(), "mem: append after close");
  EXPECT_EQ(file->Close().message(), "mem: already closed");
  EXPECT_EQ(file->name(), "mem");
}

TEST(RenameFileTest, ReplacesTarget) {
  std::string dir = MakeTempDir();
  WriteFileOrDie(dir + "/a.tmp", "new");
  WriteFileOrDie(dir + "/a", "old");
  ASSERT_TRUE(RenameFile(dir + "/a.tmp", dir + "/a").ok());
  EXPECT_EQ(ReadFileOrDie(dir + "/a"), "new");
  EXPECT_EQ(ReadFileToString(dir + "/a.tmp").status().code(), StatusCode::kNotFound);
}

TEST(RenameFileTest, MissingSourceNamesBothPaths) {
  std::string dir = MakeTempDir();
  Status s = RenameFile(dir + "/missing", dir + "/b");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_TRUE(HasSubstr(s.message(), dir + "/missing"));
  EXPECT_TRUE(HasSubstr(s.message(), dir + "/b"));
}

TEST(RenameFileTest, RelativePathInCurrentDirectory) {
  // No slash in the target: the parent directory to sync is ".".
  std::string dir = MakeTempDir();
  WriteFileOrDie(dir + "/r.tmp", "x");
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  Status s = RenameFile("r.tmp", "r");
  std::filesystem::current_path(cwd);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(ReadFileOrDie(dir + "/r"), "x");
}

// A SIGBUS handler of the program's own, installed before libshard maps
// anything (at static initialisation), that libshard's handler must chain to.
constexpr int kProgramHandlerExit = 42;
void ProgramSigbusHandler(int) { _exit(kProgramHandlerExit); }
const bool kProgramHandlerInstalled = [] {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = ProgramSigbusHandler;
  sigemptyset(&sa.sa_mask);
  return sigaction(SIGBUS, &sa, nullptr) == 0;
}();

std::string PatternFile(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 131 + 7);
  return s;
}

TEST(FaultGuardTest, LostPagesAreDataLossNamingTheOffset) {
  const std::string path = MakeTempDir() + "/f";
  const std::string contents = PatternFile(64 << 10);
  WriteFileOrDie(path, contents);
  auto file = MappedFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(::truncate(path.c_str(), 4096), 0);
  char buf[100];
  ASSERT_TRUE(GuardedCopy(**file, 100, sizeof buf, buf).ok());
  EXPECT_EQ(std::string(buf, sizeof buf), contents.substr(100, sizeof buf));
  Status lost = GuardedCopy(**file, 8192, sizeof buf, buf);
  EXPECT_EQ(lost.code(), StatusCode::kDataLoss);
  EXPECT_EQ(lost.message(), path + ": file shrank while mapped (fault at offset 8192)");
  // A CRC over the whole mapping faults at the first lost page.
  uint32_t crc = 0;
  const char* p = (*file)->data().data();
  Status whole = WithFaultGuard(**file, [&] { crc = crc32c::Value(p, (*file)->size()); });
  EXPECT_EQ(whole.message(), path + ": file shrank while mapped (fault at offset 4096)");
  // Repeated faults on the same thread keep being recovered.
  for (int i = 0; i < 100; ++i) {
    int ran = 0;
    ASSERT_TRUE(WithFaultGuard(**file, [&] { ++ran; }).ok());
    ASSERT_EQ(ran, 1);
    ASSERT_EQ(GuardedCopy(**file, 60000, 10, buf).code(), StatusCode::kDataLoss);
  }
  EXPECT_EQ(GuardedCopy(**file, 65530, 10, buf).code(), StatusCode::kInvalidArgument);
}

TEST(FaultGuardTest, ConcurrentGuardsOnManyThreads) {
  const std::string path = MakeTempDir() + "/f";
  WriteFileOrDie(path, PatternFile(1 << 20));
  auto file = MappedFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  std::vector<std::thread> threads;
  std::atomic<int> data_loss{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      char buf[64];
      for (int i = 0; i < 200; ++i) {
        if (GuardedCopy(**file, static_cast<uint64_t>((t * 200 + i) * 1000), sizeof buf, buf).code() ==
            StatusCode::kDataLoss) {
          data_loss.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(data_loss.load(), 800);
}

// In a child process (a SIGBUS that is not libshard's must end it).
int ExitOfChild(void (*body)(const std::string&), const std::string& path) {
  pid_t pid = ::fork();
  if (pid == 0) {
    body(path);
    _exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(FaultGuardTest, OtherSigbusReachesTheProgramsHandler) {
  ASSERT_TRUE(kProgramHandlerInstalled);
  const std::string path = MakeTempDir() + "/f";
  WriteFileOrDie(path, PatternFile(64 << 10));
  // A mapping that is not libshard's, touched past the end while libshard's
  // handler is installed (a MappedFile is open, even inside a guard).
  EXPECT_EQ(ExitOfChild(
                [](const std::string& p) {
                  auto ours = MappedFile::Open(p);
                  if (!ours.ok()) _exit(1);
                  int fd = ::open(p.c_str(), O_RDONLY);
                  void* theirs = ::mmap(nullptr, 64 << 10, PROT_READ, MAP_SHARED, fd, 0);
                  if (::truncate(p.c_str(), 0) != 0) _exit(2);
                  char c = 0;
                  Status s = WithFaultGuard(**ours, [&] { c = static_cast<volatile char*>(theirs)[8192]; });
                  _exit(3 + (c & 0));
                },
                path),
            kProgramHandlerExit);
  // libshard's own range read without a guard is not libshard's to recover.
  WriteFileOrDie(path, PatternFile(64 << 10));
  EXPECT_EQ(ExitOfChild(
                [](const std::string& p) {
                  auto ours = MappedFile::Open(p);
                  if (!ours.ok() || ::truncate(p.c_str(), 0) != 0) _exit(1);
                  volatile char c = (*ours)->data()[8192];
                  _exit(3 + (c & 0));
                },
                path),
            kProgramHandlerExit);
}

}  // namespace
}  // namespace libshard::io
