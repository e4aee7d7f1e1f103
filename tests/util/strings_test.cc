// util/strings.h: prefix and suffix tests.
#include "libshard/util/strings.h"

#include <gtest/gtest.h>

#include <string>

namespace libshard::util {
namespace {

TEST(StringsTest, StartsWith) {
  EXPECT_TRUE(StartsWith("s3://bucket/key", "s3://"));
  EXPECT_TRUE(StartsWith("abc", ""));
  EXPECT_TRUE(StartsWith("abc", "abc"));
  EXPECT_FALSE(StartsWith("ab", "abc"));
  EXPECT_FALSE(StartsWith("https://x", "http:"));
}

TEST(StringsTest, EndsWith) {
  EXPECT_TRUE(EndsWith(std::string("out/manifest.json"), ".json"));
  EXPECT_TRUE(EndsWith("abc", ""));
  EXPECT_TRUE(EndsWith("x.tfrecord.idx", ".idx"));
  EXPECT_FALSE(EndsWith("json", ".json"));
  EXPECT_FALSE(EndsWith("a.json.tmp", ".json"));
  EXPECT_TRUE(EndsWith(std::string("a\0.idx", 6), ".idx"));
}

}  // namespace
}  // namespace libshard::util
