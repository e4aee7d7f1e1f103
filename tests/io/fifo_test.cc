// Never a hang: every entry point that reads a file refuses a FIFO (and other
// non-regular files) at once, naming it, instead of blocking in open(2) for
// a writer that never comes. CLI commands run under `timeout 10`, so a
// regression fails (exit 124) instead of hanging the suite.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "libshard/io/mapped_file.h"
#include "libshard/io/open_file.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/reader/dataset.h"
#include "libshard/reader/shard_reader.h"
#include "libshard/record/index.h"
#include "libshard/record/stream_reader.h"
#include "reader_fixtures.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::MakeTempDir;
using testing::RunCommand;
using testing::WritePlainShard;

std::string MakeFifo(const std::string& path) {
  EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
  return path;
}

// `shard ARGS` under a 10 s timeout (exit 124 when it hangs).
testing::CommandResult Shard(const std::string& args) {
  return RunCommand("timeout 10 " + std::string(SHARD_BIN) + " " + args);
}

// --- the library ------------------------------------------------------------

TEST(OpenForReadTest, RefusesFifoAtOnceNamingIt) {
  const std::string fifo = MakeFifo(MakeTempDir() + "/f.tfrecord");
  const auto t0 = std::chrono::steady_clock::now();
  auto fd = io::OpenForRead(fifo);
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fd.status().message(), fifo + ": is a FIFO, not a regular file");
  auto text = io::ReadFileToString(fifo);
  EXPECT_EQ(text.status().message(), fifo + ": is a FIFO, not a regular file");
  auto mapped = io::MappedFile::Open(fifo);
  EXPECT_EQ(mapped.status().message(), fifo + ": is a FIFO, not a regular file");
  auto crc = io::Crc32cOfFile(fifo);
  EXPECT_EQ(crc.status().message(), fifo + ": is a FIFO, not a regular file");
  auto stream = record::RecordStreamReader::Open(fifo);
  EXPECT_EQ(stream.status().message(), fifo + ": is a FIFO, not a regular file");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

TEST(OpenForReadTest, NamesOtherKindsOfFile) {
  const std::string dir = MakeTempDir();
  EXPECT_EQ(io::OpenForRead(dir).status().message(), dir + ": is a directory, not a regular file");
  EXPECT_EQ(io::OpenForRead("/dev/null").status().message(), "/dev/null: is a character device, not a regular file");
  auto missing = io::OpenForRead(dir + "/nope");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(missing.status().message(), dir + "/nope"));
  testing::WriteFileOrDie(dir + "/ok", "abc");
  io::FileIdentity id;
  auto ok = io::OpenForRead(dir + "/ok", &id);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(id.size, 3u);
  char buf[8];
  EXPECT_EQ(io::PreadFull(ok->get(), buf, sizeof buf, 0), 3);  // blocking mode restored, reads normally
}

TEST(FifoTest, ShardReaderWithFifoIndexScansAndSaysWhy) {
  const std::string dir = MakeTempDir();
  const std::string shard = dir + "/a.tfrecord";
  auto recs = WritePlainShard(shard, 5, /*write_index=*/false);
  MakeFifo(shard + ".idx");
  for (reader::IoMode mode : {reader::IoMode::kMmap, reader::IoMode::kPread}) {
    reader::ShardReaderOptions o;
    o.io = mode;
    auto r = reader::ShardReader::Open(shard, o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)->index_source(), reader::IndexSource::kScan);
    EXPECT_EQ((*r)->index_rejected_reason(), shard + ".idx: is a FIFO, not a regular file");
    EXPECT_EQ((*r)->size(), 5u);
  }
  reader::ShardReaderOptions o;
  auto fifo_shard = reader::ShardReader::Open(MakeFifo(dir + "/b.tfrecord"), o);
  EXPECT_EQ(fifo_shard.status().message(), dir + "/b.tfrecord: is a FIFO, not a regular file");
}

TEST(FifoTest, DatasetFromFifoManifestFails) {
  const std::string fifo = MakeFifo(MakeTempDir() + "/manifest.json");
  auto ds = reader::Dataset::Open({fifo}, {});
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().message(), fifo + ": is a FIFO, not a regular file");
}

TEST(FifoTest, TaskManifestFifoFailsToRead) {
  // merge reads each task manifest with manifest::ReadManifest.
  const std::string fifo = MakeFifo(MakeTempDir() + "/manifest.task-00000-of-00002.json");
  auto m = manifest::ReadManifest(fifo);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), fifo + ": is a FIFO, not a regular file");
}

// --- the command line ---------------------------------------------------------

TEST(FifoCliTest, InspectAndIndexRefuseAFifo) {
  const std::string fifo = MakeFifo(MakeTempDir() + "/f.tfrecord");
  auto inspect = Shard("inspect " + fifo);
  EXPECT_EQ(inspect.exit_code, 2);
  EXPECT_TRUE(Contains(inspect.err, fifo + ": is a FIFO, not a regular file")) << inspect.err;
  auto index = Shard("index " + fifo);
  EXPECT_EQ(index.exit_code, 2);  // an unreadable argument, as for inspect
  EXPECT_TRUE(Contains(index.err, "shard index: " + fifo + ": is a FIFO, not a regular file")) << index.err;
}

TEST(FifoCliTest, FifoIndexBesideAGoodShard) {
  const std::string dir = MakeTempDir();
  const std::string shard = dir + "/a.tfrecord";
  WritePlainShard(shard, 3, /*write_index=*/false);
  MakeFifo(shard + ".idx");
  auto check = Shard("index --check " + shard);
  EXPECT_EQ(check.exit_code, 1);
  EXPECT_TRUE(Contains(check.err, shard + ".idx: is a FIFO, not a regular file")) << check.err;
  auto verify = Shard("verify --records-only " + shard);
  EXPECT_EQ(verify.exit_code, 2) << verify.out << verify.err;  // an unreadable file
  EXPECT_TRUE(Contains(verify.out + verify.err, shard + ": at byte 0 (record 0): unreadable: index " + shard +
                                                    ".idx: is a FIFO, not a regular file"))
      << verify.out << verify.err;
}

TEST(FifoCliTest, VerifyManifestFifo) {
  const std::string dir = MakeTempDir();
  WritePlainShard(dir + "/a.tfrecord", 3);
  const std::string fifo = MakeFifo(dir + "/m.json");
  auto r = Shard("verify --manifest " + fifo + " " + dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 124) << "hung";
  EXPECT_TRUE(Contains(r.out + r.err, fifo + ": is a FIFO, not a regular file")) << r.out << r.err;
}

TEST(FifoCliTest, ConvertOfAFifoInputReturns) {
  const std::string dir = MakeTempDir();
  const std::string fifo = MakeFifo(dir + "/list.csv");
  auto r = Shard("convert " + fifo + " -o " + dir + "/out");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 124) << "hung";
  EXPECT_TRUE(Contains(r.err, fifo)) << r.err;
}

TEST(FifoCliTest, AFifoAmongTheInputImagesIsARejectNotAHang) {
  const std::string dir = MakeTempDir();
  fs::create_directories(dir + "/in/a");
  fs::copy_file(testing::SourceDir() + "/samples/images/train/ankle_boot/00000.png", dir + "/in/a/0.png");
  MakeFifo(dir + "/in/a/pipe.png");
  auto r = Shard("convert -q " + dir + "/in -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(testing::ReadFileOrDie(dir + "/out/rejects.tsv"), "path\treason\na/pipe.png\tnot a regular file\n");
}

TEST(FifoCliTest, ConvertLabelsAndMaskLabelsFifo) {
  const std::string dir = MakeTempDir();
  const std::string images = testing::SourceDir() + "/samples/images";
  for (const char* flag : {"--labels", "--mask-labels"}) {
    const std::string fifo = MakeFifo(dir + "/labels" + std::string(flag + 2) + ".txt");
    auto r = Shard("convert " + images + " -o " + dir + "/out" + std::string(flag + 2) + " " + flag + " " + fifo);
    EXPECT_NE(r.exit_code, 0) << flag;
    EXPECT_NE(r.exit_code, 124) << flag << " hung";
    EXPECT_TRUE(Contains(r.err, fifo + ": is a FIFO, not a regular file")) << flag << ": " << r.err;
  }
}

}  // namespace
}  // namespace libshard
