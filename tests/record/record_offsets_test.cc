#include "libshard/record/record_offsets.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace libshard::record {
namespace {

std::vector<IndexEntry> Tiling(const std::vector<uint64_t>& sizes, uint64_t first = 0) {
  std::vector<IndexEntry> v;
  uint64_t at = first;
  for (uint64_t s : sizes) {
    v.push_back({at, s});
    at += s;
  }
  return v;
}

TEST(RecordOffsetsTest, GivesBackEveryEntryInFourBytesARecord) {
  const std::vector<IndexEntry> entries = Tiling({16, 100, 17, 4096, 16});
  StatusOr<RecordOffsets> t = RecordOffsets::FromEntries(entries, 4245);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) EXPECT_EQ(t->entry(i), entries[i]) << i;
  EXPECT_EQ(t->memory_bytes(), 4 * (entries.size() + 1));
}

TEST(RecordOffsetsTest, FilesPast4GiBKeepEightBytesOffsets) {
  // Offsets past 2^32 must not wrap: a 6 GiB shard of three records.
  const uint64_t gib = uint64_t{1} << 30;
  const std::vector<IndexEntry> entries = Tiling({3 * gib, 2 * gib, gib});
  StatusOr<RecordOffsets> t = RecordOffsets::FromEntries(entries, 6 * gib);
  ASSERT_TRUE(t.ok()) << t.status();
  for (size_t i = 0; i < entries.size(); ++i) EXPECT_EQ(t->entry(i), entries[i]) << i;
  EXPECT_EQ(t->memory_bytes(), 8 * 4u);
  // Exactly 4 GiB - 1 still fits the narrow table; its last offset is the end.
  StatusOr<RecordOffsets> edge = RecordOffsets::FromEntries(Tiling({UINT32_MAX - 16, 16}), UINT32_MAX);
  ASSERT_TRUE(edge.ok()) << edge.status();
  EXPECT_EQ(edge->entry(1), (IndexEntry{UINT32_MAX - 16, 16}));
  EXPECT_EQ(edge->memory_bytes(), 12u);
}

TEST(RecordOffsetsTest, AnEmptyFileIsAnEmptyTable) {
  StatusOr<RecordOffsets> t = RecordOffsets::FromEntries({}, 0);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->empty());
  EXPECT_FALSE(RecordOffsets::FromEntries({}, 10).ok());  // bytes no record covers
}

TEST(RecordOffsetsTest, EntriesThatDoNotTileTheFileAreRefusedNamingTheFirst) {
  struct Case {
    std::vector<IndexEntry> entries;
    uint64_t file_size;
    const char* names;
  };
  const Case cases[] = {
      {{{0, 16}, {20, 16}}, 36, "entry 1 at byte 20"},         // a gap
      {{{0, 16}, {8, 16}}, 24, "entry 1 at byte 8"},           // an overlap
      {{{4, 16}}, 20, "entry 0 at byte 4"},                    // not from 0
      {{{0, 16}, {16, 0}}, 16, "entry 1 at byte 16"},          // an empty entry
      {{{0, 16}, {16, 100}}, 40, "entry 1 at byte 16"},        // past the file's end
      {{{0, 16}, {16, 16}}, 40, "the records end at byte 32"},  // short of it
      {{{0, ~uint64_t{0}}}, 16, "entry 0 at byte 0"},          // a size that would wrap
  };
  for (const Case& c : cases) {
    StatusOr<RecordOffsets> t = RecordOffsets::FromEntries(c.entries, c.file_size);
    ASSERT_FALSE(t.ok()) << c.names;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find(c.names), std::string::npos) << t.status();
  }
}

}  // namespace
}  // namespace libshard::record
