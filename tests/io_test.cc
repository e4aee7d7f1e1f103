// Tests of the file layer: MappedFile, ReadFileToString, writable files and
// RenameFile.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "libshard/io/mapped_file.h"
#include "libshard/io/writable_file.h"
#include "testutil.h"

namespace libshard::io {
namespace {

using ::libshard::testing::MakeTempDir;
using ::libshard::testing::ReadFileOrDie;
using ::libshard::testing::WriteFileOrDie;

::testing::AssertionResult HasSubstr(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

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

}  // namespace
}  // namespace libshard::io
