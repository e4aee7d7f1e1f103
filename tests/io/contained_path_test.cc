// Remote names to local paths (io/contained_path.h): the one check every key
// and manifest name passes before it becomes a path, and the writer that
// never follows a symbolic link below its folder.
#include "libshard/io/contained_path.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "testutil.h"

namespace libshard::io {
namespace {

namespace fs = std::filesystem;
using ::libshard::testing::MakeTempDir;
using ::libshard::testing::ReadFileOrDie;
using ::libshard::testing::WriteFileOrDie;

TEST(ContainedPathTest, PlainRelativeNamesPass) {
  for (const char* ok : {"a", "a/b.tfrecord", "..a", "a..", ".libshard/manifest.task-0.json", "a b/c-d_e"}) {
    EXPECT_TRUE(CheckRelativeName(ok, "w").ok()) << ok;
  }
}

TEST(ContainedPathTest, EveryEscapeIsRefusedNamingTheText) {
  for (const std::string& bad :
       std::vector<std::string>{"", "/etc/passwd", "..", ".", "a/../b", "ds/../../../../tmp/X", "a//b", "a/", "./a",
                                "a\\..\\b", std::string("a\0b", 3), "a\nb"}) {
    Status s = CheckRelativeName(bad, "s3://bkt/ds/NAME");
    ASSERT_EQ(s.code(), StatusCode::kInvalidArgument) << "'" << bad << "'";
    EXPECT_EQ(s.message().rfind("s3://bkt/ds/NAME: ", 0), 0u) << s;
  }
}

TEST(ContainedPathTest, KeyOutsideThePrefixIsAnErrorNotAnException) {
  StatusOr<std::string> rel = NameUnderPrefix("ds/a/b.tfrecord", "ds/", "u");
  ASSERT_TRUE(rel.ok()) << rel.status();
  EXPECT_EQ(*rel, "a/b.tfrecord");
  // Shorter than the prefix: substr() used to throw std::out_of_range.
  for (const char* outside : {"d", "other/x", "", "ds"}) {
    StatusOr<std::string> r = NameUnderPrefix(outside, "ds/", std::string("s3://bkt/") + outside);
    ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument) << outside;
    EXPECT_NE(r.status().message().find("not under ds/"), std::string::npos) << r.status();
  }
  EXPECT_EQ(NameUnderPrefix("ds/../../tmp/X", "ds/", "u").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(NameUnderPrefix("ds/", "ds/", "u").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PathUnder("/r", "a/../../x", "u").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*PathUnder("/r", "a/x", "u"), "/r/a/x");
}

TEST(ContainedPathTest, FileBeneathWritesUnderATemporaryNameUntilCommit) {
  const std::string dir = MakeTempDir();
  auto f = FileBeneath::Create(dir, "sub/dir/x.bin");
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_TRUE((*f)->file().Append("bytes").ok());
  EXPECT_FALSE(fs::exists(dir + "/sub/dir/x.bin"));  // unverified bytes: not under their name yet
  ASSERT_TRUE((*f)->Commit().ok());
  EXPECT_EQ(ReadFileOrDie(dir + "/sub/dir/x.bin"), "bytes");
  EXPECT_EQ((*f)->path(), dir + "/sub/dir/x.bin");
  {
    auto g = FileBeneath::Create(dir, "y.bin");
    ASSERT_TRUE(g.ok()) << g.status();
    ASSERT_TRUE((*g)->file().Append("half").ok());
  }  // dropped: nothing left, neither the name nor the temporary
  size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(FileBeneath::Create(dir, "../escape").status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(fs::path(dir).parent_path() / "escape"));
}

TEST(ContainedPathTest, ALinkPlantedInsideIsNotFollowed) {
  const std::string dir = MakeTempDir();
  const std::string root = dir + "/root", outside = dir + "/outside";
  fs::create_directories(root);
  fs::create_directories(outside);
  WriteFileOrDie(outside + "/target", "keep");
  fs::create_directory_symlink(outside, root + "/linkdir");
  fs::create_symlink(outside + "/target", root + "/linkfile");

  // A folder that is a link: refused, nothing written through it.
  auto through = FileBeneath::Create(root, "linkdir/x");
  ASSERT_FALSE(through.ok());
  EXPECT_NE(through.status().message().find("symbolic link"), std::string::npos) << through.status();
  EXPECT_FALSE(fs::exists(outside + "/x"));
  EXPECT_EQ(OpenBeneath(root, "linkdir/target", O_RDONLY).status().code(), StatusCode::kIOError);

  // A file that is a link: the new file replaces the link, the target keeps
  // its bytes.
  auto over = FileBeneath::Create(root, "linkfile");
  ASSERT_TRUE(over.ok()) << over.status();
  ASSERT_TRUE((*over)->file().Append("server bytes").ok());
  ASSERT_TRUE((*over)->Commit().ok());
  EXPECT_FALSE(fs::is_symlink(root + "/linkfile"));
  EXPECT_EQ(ReadFileOrDie(outside + "/target"), "keep");
  EXPECT_EQ(ReadFileOrDie(root + "/linkfile"), "server bytes");

  fs::create_symlink(outside + "/target", root + "/again");
  StatusOr<int> fd = OpenBeneath(root, "again", O_RDONLY);
  EXPECT_EQ(fd.status().code(), StatusCode::kIOError) << fd.status();
  StatusOr<int> plain = OpenBeneath(root, "linkfile", O_RDONLY);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ::close(*plain);
}

}  // namespace
}  // namespace libshard::io
