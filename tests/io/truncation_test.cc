// Never a crash: a file truncated by someone else while libshard reads it is
// an error for the reads that reach past its new end (DataLoss naming the
// file), never SIGBUS. Each test races a truncation against the reader many
// times; a SIGBUS would kill the test binary (or show as the tool's signal
// exit), failing the test.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "deflate_testutil.h"
#include "libshard/io/fault_guard.h"
#include "libshard/io/mapped_file.h"
#include "libshard/reader/batch_loader.h"
#include "libshard/reader/dataset.h"
#include "libshard/reader/shard_reader.h"
#include "libshard/record/record_writer.h"
#include "reader_fixtures.h"
#include "testutil.h"

namespace libshard {
namespace {

using testing::Contains;
using testing::MakeTempDir;

constexpr int kRaces = 20;
constexpr off_t kTruncatedSize = 100000;

// `n` records of `size` pseudo-random (incompressible) bytes.
std::string RandomRecords(int n, size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string rec(size, '\0');
  const std::string path = MakeTempDir() + "/r.tfrecord";
  auto writer = record::RecordWriter::Create(path);
  EXPECT_TRUE(writer.ok());
  for (int i = 0; i < n; ++i) {
    for (char& c : rec) c = static_cast<char>(rng());
    EXPECT_TRUE((*writer)->Write(rec).ok());
  }
  EXPECT_TRUE((*writer)->Close().ok());
  return testing::ReadFileOrDie(path);
}

// Truncates `path` to kTruncatedSize after `delay` on another thread.
class Truncator {
 public:
  Truncator(std::string path, std::chrono::microseconds delay)
      : thread_([path = std::move(path), delay] {
          std::this_thread::sleep_for(delay);
          EXPECT_EQ(::truncate(path.c_str(), kTruncatedSize), 0);
        }) {}
  ~Truncator() { thread_.join(); }

 private:
  std::thread thread_;
};

// Reads every record over and over until an error (the truncation reached a
// record) or `limit`; returns the error.
Status ReadUntilError(const reader::ShardReader& r, bool copy) {
  reader::RecordBuffer buf;
  std::string_view v;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < end) {
    for (size_t i = 0; i < r.size(); ++i) {
      Status s = copy ? r.ReadCopy(i, &buf, &v) : r.Read(i, &buf, &v);
      if (!s.ok()) return s;
    }
  }
  return Status::OK();
}

// Deterministic: the copy of a record whose pages are gone faults inside the
// guard; the error says where.
TEST(TruncationTest, ReadCopyOfALostPageIsDataLossWithTheOffset) {
  const std::string path = MakeTempDir() + "/a.tfrecord";
  testing::WriteFileOrDie(path, RandomRecords(20, 16384, 1));
  auto r = reader::ShardReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(::truncate(path.c_str(), 40000), 0);  // records 0 and 1 remain
  reader::RecordBuffer buf;
  std::string_view v;
  const uint64_t offset = (*r)->entry(10).offset;  // 164000: far past the last page kept
  Status copy = (*r)->ReadCopy(10, &buf, &v);
  EXPECT_EQ(copy.code(), StatusCode::kDataLoss);
  EXPECT_EQ(copy.message(), path + ": file shrank while mapped (fault at offset " + std::to_string(offset) + ")");
  Status view = (*r)->Read(10, &buf, &v);
  EXPECT_EQ(view.code(), StatusCode::kDataLoss);
  EXPECT_EQ(view.message(),
            path + ": record at byte " + std::to_string(offset) +
                ": truncated record: the file shrank to 40000 bytes while open (the record ends at byte " +
                std::to_string(offset + 16400) + ")");
  // Record 1 lies within the bytes that remain.
  ASSERT_TRUE((*r)->ReadCopy(1, &buf, &v).ok());
  EXPECT_EQ(v.size(), 16384u);
}

class ShardReaderRaceTest : public ::testing::TestWithParam<std::tuple<reader::IoMode, bool>> {};

TEST_P(ShardReaderRaceTest, TruncationWhileReadingIsDataLoss) {
  const auto [mode, copy] = GetParam();
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/a.tfrecord";
  const std::string bytes = RandomRecords(32, 32 << 10, 2);
  std::mt19937 rng(3);
  int faults = 0;  // races the fault guard caught (the rest: the size check or a short pread)
  for (int race = 0; race < kRaces; ++race) {
    testing::WriteFileOrDie(path, bytes);
    reader::ShardReaderOptions o;
    o.io = mode;
    auto r = reader::ShardReader::Open(path, o);
    ASSERT_TRUE(r.ok()) << r.status();
    Status s;
    {
      Truncator t(path, std::chrono::microseconds(rng() % 2000));
      s = ReadUntilError(**r, copy);
    }
    ASSERT_EQ(s.code(), StatusCode::kDataLoss) << s;
    EXPECT_TRUE(Contains(s.message(), path + ": ")) << s;
    faults += Contains(s.message(), "file shrank while mapped (fault at offset ");
  }
  std::cerr << reader::IoModeName(mode) << (copy ? " ReadCopy" : " Read") << ": " << faults << " of " << kRaces
            << " races ended in a recovered SIGBUS\n";
}

INSTANTIATE_TEST_SUITE_P(Modes, ShardReaderRaceTest,
                         ::testing::Combine(::testing::Values(reader::IoMode::kMmap, reader::IoMode::kPread),
                                            ::testing::Bool()));

TEST(LoaderRaceTest, DefaultModeTruncationIsAnErrorNotSigbus) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/a.tfrecord";
  testing::FixtureOptions fo;
  fo.format = "raw";
  fo.width = fo.height = 128;  // 48 KiB a record
  testing::WriteImageShard(path, 40, 0, fo);
  const std::string bytes = testing::ReadFileOrDie(path);
  std::mt19937 rng(4);
  for (int race = 0; race < kRaces; ++race) {
    testing::WriteFileOrDie(path, bytes);
    auto ds = reader::Dataset::Open({path});  // default: mmap
    ASSERT_TRUE(ds.ok()) << ds.status();
    reader::BatchLoaderOptions lo;
    lo.batch_size = 8;
    lo.width = lo.height = 8;
    auto loader = reader::BatchLoader::Create(std::shared_ptr<const reader::Dataset>(std::move(*ds)), lo);
    ASSERT_TRUE(loader.ok()) << loader.status();
    Status s;
    {
      Truncator t(path, std::chrono::microseconds(rng() % 3000));
      const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      reader::Batch batch;
      while (s.ok() && std::chrono::steady_clock::now() < end) s = (*loader)->Next(&batch);
    }
    ASSERT_FALSE(s.ok()) << "race " << race;
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s;
    EXPECT_TRUE(Contains(s.message(), path + ": ")) << s;
  }
}

// The tools read a file once, as a stream: a truncation mid-read is an error
// (exit 1, naming the file) or, when it comes after the read, success.
void RaceTool(const std::string& args_before_file, const std::string& path, const std::string& bytes) {
  std::mt19937 rng(5);
  int errors = 0;
  for (int race = 0; race < kRaces; ++race) {
    testing::WriteFileOrDie(path, bytes);
    testing::CommandResult r;
    {
      Truncator t(path, std::chrono::microseconds(2000 + rng() % 8000));
      r = testing::RunCommand("timeout 10 " + std::string(SHARD_BIN) + " " + args_before_file + " " + path);
    }
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << "exit " << r.exit_code << "\n" << r.out << r.err;
    if (r.exit_code == 1) {
      ++errors;
      EXPECT_TRUE(Contains(r.out + r.err, path)) << r.out << r.err;
    }
  }
  std::cerr << args_before_file << ": " << errors << " of " << kRaces << " races cut the read short\n";
}

TEST(ToolRaceTest, IndexOfAShrinkingFile) {
  const std::string path = MakeTempDir() + "/big.tfrecord";
  RaceTool("index -q", path, RandomRecords(64, 256 << 10, 6));  // 16 MiB
}

TEST(ToolRaceTest, VerifyOfAShrinkingGzipFile) {
  const std::string path = MakeTempDir() + "/big.tfrecord.gz";
  RaceTool("verify", path, testing::Deflate(RandomRecords(64, 256 << 10, 7), 16 + MAX_WBITS, 1));
}

}  // namespace
}  // namespace libshard
