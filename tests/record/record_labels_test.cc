// The labels sidecar's bytes (record/record_labels.h): a golden file, every
// width round-tripped, and every kind of damage refused with its offset.
#include "libshard/record/record_labels.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace libshard::record {
namespace {

std::string Hex(const std::string& s) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

// Written out by hand from docs/formats.md: magic, version 1, width 1, six
// zero bytes, N = 3, the labels 2, -1, 0, then the CRC-32C of the 27 bytes
// before it (a bitwise CRC-32C written in Python, not the library, gave 2cc27a44).
TEST(RecordLabelsTest, GoldenBytes) {
  const std::string bytes = FormatLabels({2, -1, 0});
  EXPECT_EQ(Hex(bytes.substr(0, 27)),
            "4c534c4142454c53"    // "LSLABELS"
            "01" "01"             // version, width
            "000000000000"        // reserved
            "0300000000000000"    // N
            "02" "ff" "00");      // the labels
  EXPECT_EQ(bytes.size(), 31u);
  EXPECT_EQ(Hex(bytes.substr(27)), "447ac22c");
  EXPECT_EQ(LabelsPathFor("out/train-00000-of-00002.tfrecord"), "out/train-00000-of-00002.tfrecord.labels");
}

TEST(RecordLabelsTest, EveryWidthRoundTrips) {
  const std::vector<std::pair<std::vector<int64_t>, size_t>> cases = {
      {{}, 1},
      {{0, 1, 127, -128, -1}, 1},
      {{128, -1}, 2},
      {{-129}, 2},
      {{32767, -32768, 32768}, 4},
      {{int64_t{1} << 31}, 8},
      {{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), -1}, 8},
  };
  for (const auto& [labels, width] : cases) {
    const std::string bytes = FormatLabels(labels);
    EXPECT_EQ(static_cast<unsigned char>(bytes[9]), width) << ::testing::PrintToString(labels);
    EXPECT_EQ(bytes.size(), kLabelsHeaderBytes + labels.size() * width + 4);
    StatusOr<std::vector<int64_t>> back = ParseLabels(bytes, "x.labels");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, labels);
  }
}

TEST(RecordLabelsTest, EveryFlippedByteIsRefused) {
  const std::string good = FormatLabels({5, 900, -1, 7});
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    StatusOr<std::vector<int64_t>> r = ParseLabels(bad, "s.tfrecord.labels");
    ASSERT_FALSE(r.ok()) << "byte " << i;
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(r.status().message().find("s.tfrecord.labels: at byte "), std::string::npos) << r.status().ToString();
  }
}

TEST(RecordLabelsTest, DamageIsNamedWithItsOffset) {
  const std::string good = FormatLabels({1, 2, 3});
  struct Case {
    std::string bytes;
    std::string want;
  };
  std::string version = good, width = good, reserved = good, count = good;
  version[8] = 2;
  width[9] = 3;
  reserved[12] = 1;
  count[16] = 4;
  std::string crc = good;
  crc.back() = static_cast<char>(crc.back() ^ 1);
  const std::vector<Case> cases = {
      {"", "at byte 0: shorter than the 28 bytes of an empty one"},
      {good.substr(0, good.size() - 1), "at byte 16: 3 labels of 1 bytes, which is not the file's length"},
      {good + "x", "at byte 16: 3 labels of 1 bytes, which is not the file's length"},
      {"XSLABELS" + good.substr(8), "at byte 0: not the magic"},
      {version, "at byte 8: version 2, this libshard reads version 1"},
      {width, "at byte 9: a label width of 3 bytes"},
      {reserved, "at byte 12: a reserved byte that is not zero"},
      {count, "at byte 16: 4 labels of 1 bytes"},
      {crc, "at byte 27: CRC-32C"},
  };
  for (const Case& c : cases) {
    StatusOr<std::vector<int64_t>> r = ParseLabels(c.bytes, "f.labels");
    ASSERT_FALSE(r.ok()) << c.want;
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status().ToString();
  }
  // A count that would overflow the size computation is the same refusal, not a huge allocation.
  std::string huge = good;
  for (int i = 16; i < 24; ++i) huge[i] = static_cast<char>(0xff);
  EXPECT_EQ(ParseLabels(huge, "f.labels").status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace libshard::record
