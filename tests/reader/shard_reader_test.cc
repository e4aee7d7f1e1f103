#include "libshard/reader/shard_reader.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <atomic>

#include "libshard/reader/dataset.h"
#include "libshard/record/index.h"
#include "reader_fixtures.h"
#include "testutil.h"

namespace libshard::reader {
namespace {

using testing::WritePlainShard;

class ShardReaderTest : public ::testing::TestWithParam<IoMode> {
 protected:
  ShardReaderOptions Opts() const {
    ShardReaderOptions o;
    o.io = GetParam();
    return o;
  }
};

TEST_P(ShardReaderTest, ReadsEveryRecordByNumberInAnyOrder) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/a.tfrecord";
  auto recs = WritePlainShard(path, 50);
  auto r = ShardReader::Open(path, Opts());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ((*r)->size(), 50u);
  EXPECT_EQ((*r)->index_source(), IndexSource::kIndexFile);
  RecordBuffer buf;
  std::string_view v;
  for (int i = 49; i >= 0; i -= 3) {
    ASSERT_TRUE((*r)->Read(i, &buf, &v).ok());
    EXPECT_EQ(v, recs[i]);
  }
  for (int i = 0; i < 50; ++i) {  // second touch (CRC already checked in mmap)
    ASSERT_TRUE((*r)->Read(i, &buf, &v).ok());
    EXPECT_EQ(v, recs[i]);
  }
  EXPECT_EQ((*r)->Read(50, &buf, &v).code(), StatusCode::kOutOfRange);
}

TEST_P(ShardReaderTest, ScansWhenThereIsNoIndex) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/a.tfrecord";
  auto recs = WritePlainShard(path, 20, /*write_index=*/false);
  auto r = ShardReader::Open(path, Opts());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->index_source(), IndexSource::kScan);
  EXPECT_EQ((*r)->index_rejected_reason(), "");
  ASSERT_EQ((*r)->size(), 20u);
  RecordBuffer buf;
  std::string_view v;
  ASSERT_TRUE((*r)->Read(7, &buf, &v).ok());
  EXPECT_EQ(v, recs[7]);
}

// An index io cannot read is named once in the reason: io's message names it
// (io/open_file.h), the reader adds nothing.
TEST_P(ShardReaderTest, AnUnreadableIndexIsNamedOnce) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/a.tfrecord";
  WritePlainShard(path, 3, /*write_index=*/false);
  std::filesystem::create_directory(path + ".idx");
  auto r = ShardReader::Open(path, Opts());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->index_source(), IndexSource::kScan);
  EXPECT_EQ((*r)->index_rejected_reason(), path + ".idx: is a directory, not a regular file");
  EXPECT_EQ((*r)->size(), 3u);
}

TEST_P(ShardReaderTest, IgnoresAStaleIndex) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/a.tfrecord";
  WritePlainShard(path, 10);
  const std::string idx = testing::ReadFileOrDie(path + ".idx");
  auto recs = WritePlainShard(path, 12, /*write_index=*/false);  // rewritten, index now stale
  testing::WriteFileOrDie(path + ".idx", idx);
  auto r = ShardReader::Open(path, Opts());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->index_source(), IndexSource::kScan);
  EXPECT_NE((*r)->index_rejected_reason().find(".idx"), std::string::npos);
  ASSERT_EQ((*r)->size(), 12u);
  RecordBuffer buf;
  std::string_view v;
  ASSERT_TRUE((*r)->Read(11, &buf, &v).ok());
  EXPECT_EQ(v, recs[11]);
  // A malformed index is ignored too, and use_index=false skips it.
  testing::WriteFileOrDie(path + ".idx", "garbage\n");
  r = ShardReader::Open(path, Opts());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->index_source(), IndexSource::kScan);
  auto o = Opts();
  o.use_index = false;
  WritePlainShard(path, 12, /*write_index=*/true);
  r = ShardReader::Open(path, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->index_source(), IndexSource::kScan);
}

TEST_P(ShardReaderTest, IndexDisagreeingWithTheFirstHeaderIsRejectedAtOpen) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/a.tfrecord";
  WritePlainShard(path, 3, /*write_index=*/false);
  auto built = record::BuildIndex(testing::ReadFileOrDie(path));
  ASSERT_TRUE(built.ok());
  auto e = *built;  // merge records 0 and 1 into one bogus entry
  e[0].size += e[1].size;
  e.erase(e.begin() + 1);
  // First entry now disagrees with its header: rejected at open.
  testing::WriteFileOrDie(path + ".idx", record::FormatIndex(e));
  auto r = ShardReader::Open(path, Opts());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->index_source(), IndexSource::kScan);
  EXPECT_EQ((*r)->size(), 3u);
}

TEST_P(ShardReaderTest, IndexWrongOnlyInsideIsCaughtOnRead) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/a.tfrecord";
  auto recs = WritePlainShard(path, 4, /*write_index=*/false);
  auto built = record::BuildIndex(testing::ReadFileOrDie(path));
  ASSERT_TRUE(built.ok());
  auto e = *built;  // move the boundary between records 1 and 2 by 8 bytes
  e[1].size += 8;
  e[2].offset += 8;
  e[2].size -= 8;
  testing::WriteFileOrDie(path + ".idx", record::FormatIndex(e));
  auto r = ShardReader::Open(path, Opts());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->index_source(), IndexSource::kIndexFile);
  RecordBuffer buf;
  std::string_view v;
  ASSERT_TRUE((*r)->Read(0, &buf, &v).ok());
  EXPECT_EQ(v, recs[0]);
  for (size_t i : {size_t{1}, size_t{2}}) {
    Status s = (*r)->Read(i, &buf, &v);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s;
    EXPECT_NE(s.message().find("byte " + std::to_string(e[i].offset)), std::string::npos) << s;
  }
  ASSERT_TRUE((*r)->Read(3, &buf, &v).ok());
  EXPECT_EQ(v, recs[3]);
}

TEST_P(ShardReaderTest, CrcFaultNamesFileAndOffset) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/a.tfrecord";
  auto recs = WritePlainShard(path, 5);
  auto idx = record::ParseIndex(testing::ReadFileOrDie(path + ".idx"));
  ASSERT_TRUE(idx.ok());
  std::string bytes = testing::ReadFileOrDie(path);
  const uint64_t off = (*idx)[3].offset;
  bytes[off + 12 + 2] ^= 0x40;  // a payload byte of record 3
  testing::WriteFileOrDie(path, bytes);
  auto r = ShardReader::Open(path, Opts());
  ASSERT_TRUE(r.ok()) << r.status();
  RecordBuffer buf;
  std::string_view v;
  EXPECT_TRUE((*r)->Read(2, &buf, &v).ok());
  Status s = (*r)->Read(3, &buf, &v);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find(path), std::string::npos) << s;
  EXPECT_NE(s.message().find("byte " + std::to_string(off)), std::string::npos) << s;
  EXPECT_NE(s.message().find("data CRC"), std::string::npos) << s;
  // verify_crc = false hands the damaged bytes out.
  auto o = Opts();
  o.verify_crc = false;
  auto r2 = ShardReader::Open(path, o);
  ASSERT_TRUE(r2.ok());
  EXPECT_TRUE((*r2)->Read(3, &buf, &v).ok());
  EXPECT_NE(v, recs[3]);
}

TEST_P(ShardReaderTest, CorruptFramingWithoutIndexFailsOpenWithOffset) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/a.tfrecord";
  WritePlainShard(path, 5, /*write_index=*/false);
  std::string bytes = testing::ReadFileOrDie(path);
  testing::WriteFileOrDie(path, bytes.substr(0, bytes.size() - 7));
  auto r = ShardReader::Open(path, Opts());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find(path), std::string::npos);
  EXPECT_NE(r.status().message().find("truncated"), std::string::npos) << r.status();
}

TEST_P(ShardReaderTest, FileTruncatedUnderTheReaderGivesAnErrorNotSigbus) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/a.tfrecord";
  auto recs = WritePlainShard(path, 200);  // ~500 KB: many pages
  auto r = ShardReader::Open(path, Opts());
  ASSERT_TRUE(r.ok());
  const uint64_t cut = (*r)->entry(100).offset + 5;
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(cut)), 0);
  RecordBuffer buf;
  std::string_view v;
  ASSERT_TRUE((*r)->Read(10, &buf, &v).ok());
  EXPECT_EQ(v, recs[10]);
  for (size_t i : {size_t{100}, size_t{150}, size_t{199}}) {
    Status s = (*r)->Read(i, &buf, &v);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s;
    EXPECT_NE(s.message().find(path), std::string::npos) << s;
    EXPECT_NE(s.message().find("byte " + std::to_string((*r)->entry(i).offset)), std::string::npos) << s;
  }
}

TEST_P(ShardReaderTest, EmptyAndNotTFRecordFiles) {
  const std::string dir = testing::MakeTempDir();
  testing::WriteFileOrDie(dir + "/empty.tfrecord", "");
  auto r = ShardReader::Open(dir + "/empty.tfrecord", Opts());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->size(), 0u);
  testing::WriteFileOrDie(dir + "/text.tfrecord", "hello, this is not a shard at all");
  r = ShardReader::Open(dir + "/text.tfrecord", Opts());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is this a TFRecord file?"), std::string::npos) << r.status();
  EXPECT_EQ(ShardReader::Open(dir + "/missing", Opts()).status().code(), StatusCode::kNotFound);
}

// With the count given, the open reads no record table: the .idx is read
// (and the framing walked) by the first call that needs it, from whichever
// of many threads gets there first, once.
TEST_P(ShardReaderTest, WithTheCountGivenTheTableWaitsForTheFirstRead) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/a.tfrecord";
  auto recs = WritePlainShard(path, 40);
  const std::string idx = testing::ReadFileOrDie(path + ".idx");
  testing::WriteFileOrDie(path + ".idx", "not an index");
  auto r = ShardReader::OpenWithCount(path, 40, Opts());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->size(), 40u);
  testing::WriteFileOrDie(path + ".idx", idx);  // what the first read finds
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      RecordBuffer buf;
      std::string_view v;
      for (size_t i = t; i < recs.size(); i += 3) {
        if (!(*r)->Read(i, &buf, &v).ok() || v != recs[i]) wrong.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ((*r)->index_source(), IndexSource::kIndexFile);
  EXPECT_EQ((*r)->index_rejected_reason(), "");
}

// A count other than the shard's, or a shard whose framing is cut: the open
// succeeds, every read says what is wrong (naming the file), none returns a
// record, and entry() is {0, 0}.
TEST_P(ShardReaderTest, WithTheCountGivenTheTablesFaultsComeFromTheReads) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/a.tfrecord";
  WritePlainShard(path, 5);
  auto more = ShardReader::OpenWithCount(path, 6, Opts());
  ASSERT_TRUE(more.ok()) << more.status();
  EXPECT_EQ((*more)->size(), 6u);
  RecordBuffer buf;
  std::string_view v;
  for (size_t i : {size_t{0}, size_t{5}, size_t{0}}) {
    Status s = (*more)->ReadCopy(i, &buf, &v);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s;
    EXPECT_EQ(s.message(), path + ": 5 records, the manifest says 6");
  }
  EXPECT_EQ((*more)->entry(0), record::IndexEntry{});
  std::filesystem::remove(path + ".idx");
  const std::string bytes = testing::ReadFileOrDie(path);
  testing::WriteFileOrDie(path, bytes.substr(0, bytes.size() - 7));
  auto cut = ShardReader::OpenWithCount(path, 5, Opts());
  ASSERT_TRUE(cut.ok()) << cut.status();
  Status s = (*cut)->Read(0, &buf, &v);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find(path + ": truncated record at byte "), std::string::npos) << s;
}

INSTANTIATE_TEST_SUITE_P(IoModes, ShardReaderTest, ::testing::Values(IoMode::kMmap, IoMode::kPread),
                         [](const auto& info) { return std::string(IoModeName(info.param)); });

TEST(ShardReaderModesTest, MmapPreadAndDirectGiveTheSameBytes) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/a.tfrecord";
  WritePlainShard(path, 64);
  ShardReaderOptions m, p, d;
  p.io = IoMode::kPread;
  d.io = IoMode::kPread;
  d.direct_io = true;  // falls back to buffered where O_DIRECT is refused (tmpfs)
  auto rm = ShardReader::Open(path, m), rp = ShardReader::Open(path, p), rd = ShardReader::Open(path, d);
  ASSERT_TRUE(rm.ok() && rp.ok() && rd.ok()) << rd.status();
  RecordBuffer b1, b2;
  for (size_t i = 0; i < 64; ++i) {
    std::string_view a, b, c;
    ASSERT_TRUE((*rm)->Read(i, nullptr, &a).ok());
    ASSERT_TRUE((*rp)->Read(i, &b1, &b).ok());
    ASSERT_TRUE((*rd)->Read(i, &b2, &c).ok());
    EXPECT_EQ(a, b);
    EXPECT_EQ(a, c);
  }
  // Sequential pread with a small readahead: records straddle the blocks.
  for (bool direct : {false, true}) {
    ShardReaderOptions q;
    q.io = IoMode::kPread;
    q.access = io::AccessPattern::kSequential;
    q.readahead_bytes = 10000;
    q.direct_io = direct;
    auto rq = ShardReader::Open(path, q);
    ASSERT_TRUE(rq.ok());
    RecordBuffer b3;
    for (size_t i = 0; i < 64; ++i) {
      std::string_view a, c;
      ASSERT_TRUE((*rm)->Read(i, nullptr, &a).ok());
      ASSERT_TRUE((*rq)->Read(i, &b3, &c).ok()) << i;
      EXPECT_EQ(a, c) << i;
    }
    std::string_view a, c;  // backwards, and a buffer moving between readers
    ASSERT_TRUE((*rq)->Read(3, &b3, &c).ok());
    ASSERT_TRUE((*rm)->Read(3, nullptr, &a).ok());
    EXPECT_EQ(a, c);
    ASSERT_TRUE((*rp)->Read(5, &b3, &c).ok());
    ASSERT_TRUE((*rq)->Read(4, &b3, &c).ok());
    ASSERT_TRUE((*rm)->Read(4, nullptr, &a).ok());
    EXPECT_EQ(a, c);
  }
  EXPECT_EQ(ParseIoMode("pread").value(), IoMode::kPread);
  EXPECT_FALSE(ParseIoMode("mmapp").ok());
}

// Open files: a dataset of many shards must not need a descriptor per shard.
// In a child process whose RLIMIT_NOFILE is 64, open 200 shards and read every
// record twice (evicted pread descriptors are reopened); the child's exit code
// says what failed.
int ReadAllUnderFileLimit(const std::string& dir, IoMode mode, size_t max_open_files) {
  return testing::RunInForkChild([&] {
    struct rlimit rl = {64, 64};
    if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) return 10;
    DatasetOptions o;
    o.shard.io = mode;
    o.max_open_files = max_open_files;
    auto ds = Dataset::Open({dir}, o);
    if (!ds.ok()) {
      std::fprintf(stderr, "open: %s\n", ds.status().ToString().c_str());
      return 11;
    }
    if ((*ds)->num_shards() != 200 || (*ds)->size() != 400) return 12;
    RecordBuffer buf;
    std::string_view v;
    for (int pass = 0; pass < 2; ++pass) {
      for (uint64_t i = 0; i < (*ds)->size(); ++i) {
        Status s = (*ds)->ReadRecord(i, &buf, &v);
        if (!s.ok()) {
          std::fprintf(stderr, "read %llu: %s\n", static_cast<unsigned long long>(i), s.ToString().c_str());
          return 13;
        }
        if (v.substr(0, 7) != "record-") return 14;
      }
    }
    return 0;
  });
}

TEST(OpenFilesTest, TwoHundredShardsUnderALimitOf64Descriptors) {
  const std::string dir = testing::MakeTempDir();
  char name[64];
  for (int i = 0; i < 200; ++i) {
    std::snprintf(name, sizeof name, "/s-%05d-of-00200.tfrecord", i);
    WritePlainShard(dir + name, 2);
  }
  EXPECT_EQ(ReadAllUnderFileLimit(dir, IoMode::kMmap, 64), 0);   // mmap: no descriptor kept at all
  EXPECT_EQ(ReadAllUnderFileLimit(dir, IoMode::kPread, 32), 0);  // pread: at most 32 (+ reads in flight)
  // Without a cap that fits, pread mode runs out of descriptors, with a clear error.
  // (Not under the sanitizers: with no descriptor left, their own memory checks,
  // which use a pipe, fail and report false errors.)
#ifndef LIBSHARD_TEST_ASAN
  EXPECT_EQ(ReadAllUnderFileLimit(dir, IoMode::kPread, 1000), 11);
#endif
}

TEST(OpenFilesTest, EvictedDescriptorIsReopenedAndMustBeTheSameFile) {
  const std::string dir = testing::MakeTempDir();
  auto recs_a = WritePlainShard(dir + "/a.tfrecord", 3);
  auto recs_b = WritePlainShard(dir + "/b.tfrecord", 3);
  ShardReaderOptions o;
  o.io = IoMode::kPread;
  o.open_files = std::make_shared<io::OpenFileCache>(1);
  auto a = ShardReader::Open(dir + "/a.tfrecord", o);
  auto b = ShardReader::Open(dir + "/b.tfrecord", o);  // evicts a's descriptor
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(o.open_files->open_count(), 1u);
  RecordBuffer buf;
  std::string_view v;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*a)->Read(i, &buf, &v).ok());
    EXPECT_EQ(v, recs_a[i]);
    ASSERT_TRUE((*b)->Read(i, &buf, &v).ok());
    EXPECT_EQ(v, recs_b[i]);
    EXPECT_EQ(o.open_files->open_count(), 1u);
  }
  // b's descriptor is open now; replacing a's file by rename is caught on reopen.
  WritePlainShard(dir + "/c.tfrecord", 3);
  std::filesystem::rename(dir + "/c.tfrecord", dir + "/a.tfrecord");
  Status s = (*a)->Read(0, &buf, &v);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), dir + "/a.tfrecord: the file was replaced since it was opened");
  b->reset();
  EXPECT_EQ(o.open_files->open_count(), 0u);
}

}  // namespace
}  // namespace libshard::reader
