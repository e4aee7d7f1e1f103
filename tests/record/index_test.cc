// Tests of the DALI-compatible index: text format, BuildIndex over real and
// damaged shards, CheckIndex against stale indices.
#include "libshard/record/index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "libshard/io/mapped_file.h"
#include "libshard/io/writable_file.h"
#include "libshard/record/record_writer.h"
#include "testutil.h"

namespace libshard::record {
namespace {

using ::libshard::testing::SharedPath;

using ::libshard::testing::HasSubstr;

// A shard of `payloads` written by RecordWriter, with the index it wrote.
std::string WriteShard(const std::vector<std::string>& payloads, std::string* index_text) {
  std::string data;
  RecordWriter writer(io::NewStringWritableFile(&data), io::NewStringWritableFile(index_text));
  for (const auto& p : payloads) EXPECT_TRUE(writer.Write(p).ok());
  EXPECT_TRUE(writer.Close().ok());
  return data;
}

TEST(IndexFormatTest, RoundTrip) {
  std::vector<IndexEntry> entries = {{0, 16}, {16, 2612}, {2628, 18446744073709551615ull}, {123456789012, 17}};
  std::string text = FormatIndex(entries);
  EXPECT_EQ(text, "0 16\n16 2612\n2628 18446744073709551615\n123456789012 17\n");
  auto parsed = ParseIndex(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, entries);
  EXPECT_EQ(FormatIndex({}), "");
  auto empty = ParseIndex("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  EXPECT_EQ(IndexPathFor("/data/train-00001.tfrecord"), "/data/train-00001.tfrecord.idx");
}

TEST(IndexFormatTest, AcceptsMissingFinalNewlineAndCrlf) {
  auto parsed = ParseIndex("0 20\r\n20 30");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, (std::vector<IndexEntry>{{0, 20}, {20, 30}}));
}

TEST(IndexFormatTest, MalformedLinesNameTheLine) {
  struct Case {
    std::string text;
    int line;
  };
  const Case cases[] = {
      {"0 16\n16\n", 2},                // one number
      {"0 16\n16 x\n", 2},              // not a number
      {"abc 16\n", 1},                  //
      {"0 16\n\n32 16\n", 2},           // empty line
      {"0  16\n", 1},                   // two spaces
      {"-1 16\n", 1},                   // negative
      {"0 16 7\n", 1},                  // three fields
      {"0 18446744073709551616\n", 1},  // 2^64 overflows
      {"0 16\n16 16\n32 0x10\n", 3},    // hex
      {" 0 16\n", 1},                   // leading space
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.text));
    auto parsed = ParseIndex(c.text);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(HasSubstr(parsed.status().message(), "index line " + std::to_string(c.line) + ":"));
  }
}

TEST(BuildIndexTest, Cifar10TrainMatchesReadme) {
  std::string dir = SharedPath("interop/tfrecord");
  if (dir.empty()) GTEST_SKIP() << "shared interop data not found";
  auto file = io::MappedFile::Open(dir + "/tfx_cifar10_train.tfrecord");
  ASSERT_TRUE(file.ok()) << file.status();
  auto index = BuildIndex((*file)->data());
  ASSERT_TRUE(index.ok()) << index.status();
  ASSERT_EQ(index->size(), 128u);
  EXPECT_EQ(FormatIndex({(*index)[0], (*index)[1], (*index)[2]}), "0 2612\n2612 2430\n5042 1997\n");
  EXPECT_EQ(index->back().offset + index->back().size, (*file)->size());
  EXPECT_TRUE(CheckIndex((*file)->data(), *index).ok());
  // The interop file's records are 1510-2688 B each.
  for (const auto& e : *index) {
    EXPECT_GE(e.size - 16, 1510u);
    EXPECT_LE(e.size - 16, 2688u);
  }
}

TEST(BuildIndexTest, MatchesWriterIndex) {
  std::string index_text;
  std::string shard = WriteShard({"a", "", std::string(5000, 'b'), "cc"}, &index_text);
  auto built = BuildIndex(shard);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(FormatIndex(*built), index_text);
  EXPECT_EQ(index_text, "0 17\n17 16\n33 5016\n5049 18\n");
  auto empty = BuildIndex("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(BuildIndexTest, RefusesDamagedShards) {
  std::string index_text;
  const std::string shard = WriteShard({"first", std::string(100, 'm'), "last"}, &index_text);
  struct Case {
    const char* name;
    std::string data;
    const char* text;
  };
  std::string flipped_data = shard;
  flipped_data[21 + 12 + 10] ^= 1;
  std::string flipped_length = shard;
  flipped_length[21] ^= 1;
  const Case cases[] = {
      {"truncated in the data", shard.substr(0, 21 + 12 + 30), "truncated record at byte 21"},
      {"truncated in the last footer", shard.substr(0, shard.size() - 1), "truncated record at byte 137"},
      {"truncated in the header", shard.substr(0, 21 + 5), "truncated record at byte 21"},
      {"data CRC", flipped_data, "data CRC mismatch"},
      {"length CRC", flipped_length, "length CRC mismatch"},
      {"trailing garbage", shard + "garbage", "at byte 157"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto built = BuildIndex(c.data);
    ASSERT_FALSE(built.ok());
    EXPECT_EQ(built.status().code(), StatusCode::kDataLoss);
    EXPECT_TRUE(HasSubstr(built.status().message(), c.text));
  }
  // With data CRCs off, the flipped data bit is not seen.
  auto lax = BuildIndex(flipped_data, {.verify_data_crc = false});
  ASSERT_TRUE(lax.ok());
  EXPECT_EQ(FormatIndex(*lax), index_text);
}

class CheckIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    shard_ = WriteShard({"zero", std::string(300, 'x'), "two", ""}, &index_text_);
    auto parsed = ParseIndex(index_text_);
    ASSERT_TRUE(parsed.ok());
    index_ = *parsed;
    ASSERT_EQ(index_.size(), 4u);
  }
  void ExpectStale(const std::vector<IndexEntry>& entries, const std::string& text) {
    Status s = CheckIndex(shard_, entries);
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s;
    EXPECT_TRUE(HasSubstr(s.message(), text));
    // `shard index --check` compares with the shard's walked index instead:
    // the same verdict, word for word.
    Status t = CheckIndexAgainst(index_, entries);
    EXPECT_EQ(t.code(), s.code());
    EXPECT_EQ(t.message(), s.message());
  }
  std::string shard_;
  std::string index_text_;
  std::vector<IndexEntry> index_;
};

TEST_F(CheckIndexTest, AcceptsTheRightIndex) {
  EXPECT_TRUE(CheckIndex(shard_, index_).ok());
  EXPECT_TRUE(CheckIndex("", {}).ok());
  EXPECT_TRUE(CheckIndexAgainst(index_, index_).ok());
  EXPECT_TRUE(CheckIndexAgainst({}, {}).ok());
}

// The checks the reader makes of an index without reading its shard.
TEST_F(CheckIndexTest, CoversFileNamesTheFirstBadEntry) {
  EXPECT_TRUE(CheckIndexCoversFile(index_, shard_.size(), kDefaultMaxRecordLength).ok());
  EXPECT_TRUE(CheckIndexCoversFile({}, 0, kDefaultMaxRecordLength).ok());
  auto gap = index_;
  gap[2].offset += 1;
  Status s = CheckIndexCoversFile(gap, shard_.size(), kDefaultMaxRecordLength);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "line 3: entry at byte " + std::to_string(gap[2].offset) + " is not contiguous");
  auto tiny = index_;
  tiny[0].size = 15;  // smaller than an empty record's framing
  EXPECT_EQ(CheckIndexCoversFile(tiny, shard_.size(), kDefaultMaxRecordLength).message(),
            "line 1: entry at byte 0 is not contiguous");
  EXPECT_EQ(CheckIndexCoversFile(index_, shard_.size(), 299).message(),
            "line 2: entry at byte 20 exceeds the record length limit");
  EXPECT_EQ(
      CheckIndexCoversFile(index_, shard_.size() + 5, kDefaultMaxRecordLength).message(),
      "index covers " + std::to_string(shard_.size()) + " bytes, the file has " + std::to_string(shard_.size() + 5));
}

TEST_F(CheckIndexTest, TooFewEntries) {
  auto fewer = index_;
  fewer.pop_back();
  ExpectStale(fewer, "index has 3 lines, but the shard has more records: record 3 at byte " +
                         std::to_string(fewer.back().offset + fewer.back().size) + " is not indexed (stale index?)");
  ExpectStale({}, "index has 0 lines, but the shard has more records: record 0 at byte 0 is not indexed");
}

TEST_F(CheckIndexTest, TooManyEntries) {
  auto more = index_;
  more.push_back({shard_.size(), 16});
  ExpectStale(more, "index line 5: entry \"" + std::to_string(shard_.size()) +
                        " 16\" is past the last record (the shard has 4 records, the index 5 lines)");
}

TEST_F(CheckIndexTest, WrongOffset) {
  auto wrong = index_;
  wrong[2].offset += 1;
  ExpectStale(wrong, "index line 3: says \"" + std::to_string(index_[2].offset + 1) + " " +
                         std::to_string(index_[2].size) + "\", but record 2 is \"" + std::to_string(index_[2].offset) +
                         " " + std::to_string(index_[2].size) + "\"");
}

TEST_F(CheckIndexTest, WrongSize) {
  auto wrong = index_;
  wrong[1].size = 316 + 1;
  ExpectStale(wrong, "index line 2: says \"20 317\", but record 1 is \"20 316\"");
}

TEST_F(CheckIndexTest, IndexOfAnotherShard) {
  std::string other_text;
  WriteShard({"zero", std::string(299, 'x'), "two", ""}, &other_text);
  auto other = ParseIndex(other_text);
  ASSERT_TRUE(other.ok());
  ExpectStale(*other, "315\", but record 1 is \"20 316\"");
}

TEST_F(CheckIndexTest, DamagedFramingIsDataLoss) {
  std::string damaged = shard_;
  damaged[index_[2].offset + 3] ^= 4;  // a length byte of record 2
  Status s = CheckIndex(damaged, index_);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s;
  EXPECT_TRUE(HasSubstr(s.message(), "at byte " + std::to_string(index_[2].offset)));
  // Data CRCs are not checked.
  damaged = shard_;
  damaged[index_[1].offset + 20] ^= 4;
  EXPECT_TRUE(CheckIndex(damaged, index_).ok());
}

TEST(BuildIndexOfFileTest, StreamsTheFileWithBuildIndexsVerdicts) {
  const std::string dir = testing::MakeTempDir();
  std::string index_text;
  const std::string shard = WriteShard({"zero", std::string(300, 'x'), "two", ""}, &index_text);
  testing::WriteFileOrDie(dir + "/a.tfrecord", shard);
  auto built = BuildIndexOfFile(dir + "/a.tfrecord");
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(FormatIndex(*built), index_text);
  testing::WriteFileOrDie(dir + "/empty.tfrecord", "");
  auto empty = BuildIndexOfFile(dir + "/empty.tfrecord");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->empty());
  // A data byte of record 1 flipped; the tail cut short.
  std::string flipped = shard;
  flipped[20 + 12 + 5] ^= 1;
  testing::WriteFileOrDie(dir + "/f.tfrecord", flipped);
  auto bad = BuildIndexOfFile(dir + "/f.tfrecord");
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(bad.status().message(), dir + "/f.tfrecord: " + BuildIndex(flipped).status().message());
  testing::WriteFileOrDie(dir + "/t.tfrecord", shard.substr(0, shard.size() - 3));
  auto cut = BuildIndexOfFile(dir + "/t.tfrecord");
  EXPECT_EQ(cut.status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(HasSubstr(cut.status().message(),
                        dir + "/t.tfrecord: truncated record at byte " + std::to_string(shard.size() - 16)))
      << cut.status();
  testing::WriteFileOrDie(dir + "/c.tfrecord.gz", std::string("\x1f\x8b\x08\x00", 4) + std::string(20, '\0'));
  auto gz = BuildIndexOfFile(dir + "/c.tfrecord.gz");
  EXPECT_EQ(gz.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(gz.status().message(), dir +
                                       "/c.tfrecord.gz: is gzip-compressed; an index addresses uncompressed "
                                       "records, so decompress it first");
}

}  // namespace
}  // namespace libshard::record
