// Where `shard convert` may write: not into the input folder itself, nor
// into a folder inside it that holds input images (one holding only shards
// is left out of the listing); not to an object store other than s3://; and
// not while another `shard convert` or `shard merge` holds the folder's lock.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <tuple>

#include "convert/fixtures.h"
#include "convert_cli_fixtures.h"
#include "libshard/manifest/manifest_json.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::ListFilesRecursive;
using testing::MakeSmallTree;
using testing::MakeTempDir;
using testing::PngBytes;
using testing::ReadFileOrDie;
using testing::RunShard;
using testing::WriteTreeFile;
using Result = testing::CommandResult;

// An object-store URL other than s3:// as the output is a usage error, not a
// local folder named "https:" (which a plain path join would create in the
// working folder). s3:// uploads: tests/tools/remote_cli_test.cc.
TEST(ConvertOutputFolderCliTest, ObjectStoreOutputIsAUsageErrorNotALocalFolder) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  const size_t inputs = ListFilesRecursive(dir).size();
  for (const char* url : {"https://host/ds", "gs://b/p"}) {
    Result r = testing::RunCommand("cd " + dir + " && " + SHARD_BIN + " convert in -o " + url + " --threads 1");
    EXPECT_EQ(r.exit_code, 2) << url << "\n" << r.err;
    EXPECT_TRUE(Contains(r.err, url)) << r.err;
    EXPECT_TRUE(Contains(r.err, "object storage")) << r.err;
  }
  EXPECT_EQ(ListFilesRecursive(dir).size(), inputs);  // nothing written
  EXPECT_FALSE(fs::exists(dir + "/s3:"));
  EXPECT_FALSE(fs::exists(dir + "/https:"));
  EXPECT_FALSE(fs::exists(dir + "/gs:"));
}

// A second writer (here: this test holding the folder's lock, as a running
// conversion does) makes `shard convert` and `shard merge` fail at once.
TEST(ConvertOutputFolderCliTest, SecondWriterFailsFastNamingTheFolder) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  const std::string out = dir + "/out";
  fs::create_directories(out + "/.libshard");
  const int fd = ::open((out + "/.libshard/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const std::string busy = "shard convert: " + out +
                           ": another `shard convert` or `shard merge` is writing to this output folder (it holds " +
                           out + "/.libshard/lock); wait for it to end, or use another folder\n";
  const auto t0 = std::chrono::steady_clock::now();
  Result r = RunShard("convert -q " + dir + "/in -o " + out);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));  // no waiting
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, busy);
  EXPECT_FALSE(fs::exists(out + "/manifest.json"));
  Result m = RunShard("merge " + out);
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_EQ(m.err, "shard merge" + busy.substr(std::string("shard convert").size()));
  ::close(fd);
  Result again = RunShard("convert -q " + dir + "/in -o " + out);
  EXPECT_EQ(again.exit_code, 0) << again.err;
}

// Issue 12 item 22: output equal to the input is refused (usage, exit 2);
// output inside the input is left out of the listing, so a rerun does not
// list its own shards (it gave 4 bogus rejects and an extra class).
TEST(ConvertOutputFolderCliTest, OutputIsTheInputOrInsideIt) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  MakeSmallTree(in);
  for (const std::string& out : {in, in + "/", in + "/../in/."}) {
    Result r = RunShard("convert -q " + in + " -o " + out);
    EXPECT_EQ(r.exit_code, 2) << out;
    EXPECT_EQ(r.err, "shard convert: output folder " + out + " is the input folder " + in +
                         "; write the shards to another folder (one inside the input that holds only shards is "
                         "left out of the listing)\n");
    EXPECT_FALSE(fs::exists(in + "/.libshard"));
    EXPECT_FALSE(fs::exists(in + "/manifest.json"));
  }

  Result outside = RunShard("convert -q " + in + " -o " + dir + "/outside --records-per-shard 2");
  ASSERT_EQ(outside.exit_code, 0) << outside.err;
  const std::string inside = in + "/shards";
  for (int run = 0; run < 2; ++run) {
    SCOPED_TRACE(run);
    Result r = RunShard("convert " + in + " -o " + inside + " --records-per-shard 2");
    EXPECT_EQ(r.exit_code, 0) << r.err;  // no rejects
    StatusOr<Manifest> a = manifest::ReadManifest(dir + "/outside/manifest.json");
    StatusOr<Manifest> b = manifest::ReadManifest(inside + "/manifest.json");
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(b->rejects_size(), 0);
    EXPECT_EQ(b->labels_size(), a->labels_size());  // no class "shards"
    EXPECT_EQ(b->plan_id(), a->plan_id());          // the same plan, byte for byte
    EXPECT_EQ(b->stats().converted(), a->stats().converted());
  }
  for (const char* f : {"/in-train-00000-of-00002.tfrecord", "/in-train-00001-of-00002.tfrecord"}) {
    EXPECT_EQ(ReadFileOrDie(inside + f), ReadFileOrDie(dir + "/outside" + f)) << f;
  }
}

// Issue 23 item 1: an output folder inside the input that holds input
// images (a typo: -o in/train for -o out/train) is refused with exit 2,
// naming how many it holds, instead of converting the rest without them;
// the same for a class folder (-o in/b) and a folder deeper down.
TEST(ConvertOutputFolderCliTest, OutputInsideTheInputHoldingImagesIsRefused) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  for (int i = 0; i < 5; ++i) WriteTreeFile(in, "train/a/" + std::to_string(i) + ".png", PngBytes(4, 4, 3, i));
  for (int i = 0; i < 3; ++i) WriteTreeFile(in, "train/b/" + std::to_string(i) + ".png", PngBytes(4, 4, 3, i));
  WriteTreeFile(in, "val/a/v.png", PngBytes(4, 4, 3, 9));
  for (const auto& [out, n, as] : {std::tuple(in + "/train", 8, "train"), std::tuple(in + "/train/b", 3, "train/b"),
                                   std::tuple(in + "/val/a", 1, "val/a")}) {
    SCOPED_TRACE(out);
    for (const char* dry : {"", "--dry-run "}) {
      Result r = RunShard(std::string("convert -q ") + dry + in + " -o " + out);
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_TRUE(Contains(r.err, "output folder " + out + " lies inside the input " + in + " (as " + as +
                                      ") and holds " + std::to_string(n) + " input image(s)"))
          << r.err;
      EXPECT_FALSE(fs::exists(out + "/.libshard"));
      EXPECT_FALSE(fs::exists(out + "/manifest.json"));
    }
  }
  // An empty folder inside, or one holding only an earlier run's output,
  // is still fine.
  fs::create_directories(in + "/shards");
  Result first = RunShard("convert -q " + in + " -o " + in + "/shards");
  EXPECT_EQ(first.exit_code, 0) << first.err;
  Result again = RunShard("convert -q " + in + " -o " + in + "/shards");
  EXPECT_EQ(again.exit_code, 0) << again.err;
}

}  // namespace
}  // namespace libshard
