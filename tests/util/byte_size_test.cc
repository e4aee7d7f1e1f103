// util/byte_size.h: sizes as people write them.
#include "libshard/util/byte_size.h"

#include <gtest/gtest.h>

namespace libshard::util {
namespace {

TEST(ByteSizeTest, UnitsAndFractions) {
  const std::pair<const char*, uint64_t> cases[] = {
      {"1000", 1000},        {"1B", 1},           {"64K", 65536},      {"64k", 65536},       {"1KiB", 1024},
      {"128MiB", 128 << 20}, {"128M", 128 << 20}, {"1G", 1ull << 30},  {"1.5G", 3ull << 29}, {"2GiB", 2ull << 30},
      {"1KB", 1000},         {"3MB", 3000000},    {"2GB", 2000000000}, {"0.5K", 512},        {"1.9", 1},
  };
  for (const auto& [text, want] : cases) {
    StatusOr<uint64_t> got = ParseByteSize(text);
    ASSERT_TRUE(got.ok()) << text << ": " << got.status();
    EXPECT_EQ(*got, want) << text;
  }
}

TEST(ByteSizeTest, BadTextNamesTheProblem) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "'': not a number"},
      {".", "'.': not a number"},
      {"1.2.3", "'1.2.3': not a number"},
      {"inf", "'inf': not a number"},
      {"0x10", "'0x10': unknown unit"},
      {"12Q", "'12Q': unknown unit (use K, M, G, KiB, MiB, GiB, KB, MB, GB)"},
      {"-1", "'-1': out of range (1 byte .. 1 PB)"},
      {"0", "'0': out of range"},
      {"0.5", "'0.5': out of range"},
      {"99999999999999999999999G", "out of range"},
      {"1001TB", "unknown unit"},
  };
  for (const auto& [text, want] : cases) {
    StatusOr<uint64_t> got = ParseByteSize(text);
    ASSERT_FALSE(got.ok()) << text;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(got.status().message().find(want), std::string::npos) << text << ": " << got.status();
  }
}

}  // namespace
}  // namespace libshard::util
