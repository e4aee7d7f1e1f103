// BMP input (libshard's reader): 24-bit bottom-up with row padding, top-down,
// 8-bit and 4-bit palettes, 32-bit BGRX and bit fields with alpha, 16-bit
// 5-5-5; RLE refused; truncated files as kDataLoss.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "formats_testutil.h"
#include "libshard/image/decode.h"
#include "libshard/image/probe.h"

namespace libshard::image {
namespace {

using testing::Bmp24Bytes;
using testing::PatternBytes;

void Le(std::string* s, uint32_t v, int n) {
  for (int i = 0; i < n; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// A BMP with a 40-byte info header (or `dib` bytes, zero-filled past 40),
// `extra` after it (masks, palette), then `rows` as stored.
std::string Bmp(int w, int h, int bpp, uint32_t compression, const std::string& extra, const std::string& rows,
                uint32_t dib = 40) {
  std::string s = "BM";
  const uint32_t offset = 14 + dib + static_cast<uint32_t>(extra.size());
  Le(&s, offset + static_cast<uint32_t>(rows.size()), 4), Le(&s, 0, 4), Le(&s, offset, 4);
  Le(&s, dib, 4), Le(&s, static_cast<uint32_t>(w), 4), Le(&s, static_cast<uint32_t>(h), 4), Le(&s, 1, 2);
  Le(&s, static_cast<uint32_t>(bpp), 2), Le(&s, compression, 4), Le(&s, static_cast<uint32_t>(rows.size()), 4);
  Le(&s, 0, 4), Le(&s, 0, 4), Le(&s, 0, 4), Le(&s, 0, 4);
  s.append(dib - 40, '\0');
  return s + extra + rows;
}

TEST(BmpDecodeTest, TwentyFourBitBottomUpWithPadding) {
  const int w = 5, h = 3;  // 15 bytes a row, padded to 16
  const std::vector<uint8_t> rgb = PatternBytes(size_t(w) * h * 3, 1);
  const std::string bytes = Bmp24Bytes(w, h, rgb);
  EXPECT_EQ(DetectFormat(bytes), ImageFormat::kBmp);
  StatusOr<ImageInfo> info = ProbeImage(bytes);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->format, ImageFormat::kBmp);
  EXPECT_EQ(info->width, w);
  EXPECT_EQ(info->height, h);
  StatusOr<Image> img = DecodeImage(bytes);
  ASSERT_TRUE(img.ok()) << img.status();
  ASSERT_EQ(img->byte_size(), rgb.size());
  EXPECT_EQ(0, std::memcmp(img->data(), rgb.data(), rgb.size()));
}

TEST(BmpDecodeTest, TopDownRowsAreNotFlipped) {
  std::string rows = std::string("\x01\x02\x03\0", 4) + std::string("\x04\x05\x06\0", 4);  // 1x2, BGR
  StatusOr<Image> img = DecodeImage(Bmp(1, -2, 24, 0, "", rows));
  ASSERT_TRUE(img.ok()) << img.status();
  const uint8_t want[6] = {3, 2, 1, 6, 5, 4};
  EXPECT_EQ(0, std::memcmp(img->data(), want, 6));
}

TEST(BmpDecodeTest, EightAndFourBitPalettes) {
  std::string palette;
  for (int i = 0; i < 16; ++i) Le(&palette, static_cast<uint32_t>((i * 16) | ((255 - i) << 8) | (i << 16)), 4);
  // 8-bit: a 3x1 row of indices 0, 9, 15 (padded to 4).
  StatusOr<Image> img8 = DecodeImage(Bmp(3, 1, 8, 0, palette, std::string("\x00\x09\x0f\x00", 4)));
  ASSERT_TRUE(img8.ok()) << img8.status();
  const uint8_t want8[9] = {0, 255, 0, 9, 246, 144, 15, 240, 240};
  EXPECT_EQ(0, std::memcmp(img8->data(), want8, 9));
  // 4-bit: indices 9 and 15 packed high nibble first.
  StatusOr<Image> img4 = DecodeImage(Bmp(2, 1, 4, 0, palette, std::string("\x9f\0\0\0", 4)));
  ASSERT_TRUE(img4.ok()) << img4.status();
  EXPECT_EQ(0, std::memcmp(img4->data(), want8 + 3, 6));
}

TEST(BmpDecodeTest, ThirtyTwoBitBgrxAndBitFieldsWithAlpha) {
  const std::string px = std::string("\x10\x20\x30\x40", 4);
  StatusOr<Image> bgrx = DecodeImage(Bmp(1, 1, 32, 0, "", px));
  ASSERT_TRUE(bgrx.ok()) << bgrx.status();
  ASSERT_EQ(bgrx->channels(), 3);
  const uint8_t want[4] = {0x30, 0x20, 0x10, 0x40};
  EXPECT_EQ(0, std::memcmp(bgrx->data(), want, 3));
  // A 56-byte (V3) header with an alpha mask: RGBA.
  std::string masked = Bmp(1, 1, 32, 3, "", px, 56);
  const uint32_t masks[4] = {0xff0000, 0xff00, 0xff, 0xff000000};
  for (int i = 0; i < 4; ++i) {
    for (int b = 0; b < 4; ++b) masked[54 + 4 * i + b] = static_cast<char>((masks[i] >> (8 * b)) & 0xFF);
  }
  DecodeOptions keep;
  keep.alpha = AlphaMode::kKeep;
  StatusOr<Image> rgba = DecodeImage(masked, keep);
  ASSERT_TRUE(rgba.ok()) << rgba.status();
  ASSERT_EQ(rgba->channels(), 4);
  EXPECT_EQ(0, std::memcmp(rgba->data(), want, 4));
}

TEST(BmpDecodeTest, SixteenBitFiveFiveFive) {
  std::string px;
  Le(&px, (31u << 10) | (16u << 5) | 0u, 2);
  px.append(2, '\0');
  StatusOr<Image> img = DecodeImage(Bmp(1, 1, 16, 0, "", px));
  ASSERT_TRUE(img.ok()) << img.status();
  const uint8_t want[3] = {255, 132, 0};  // round(16 * 255 / 31) = 132
  EXPECT_EQ(0, std::memcmp(img->data(), want, 3));
}

TEST(BmpDecodeTest, RleIsRefusedByName) {
  StatusOr<Image> img = DecodeImage(Bmp(2, 1, 8, 1, std::string(1024, '\0'), std::string("\x02\x01\0\1", 4)));
  ASSERT_FALSE(img.ok());
  EXPECT_EQ(img.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(img.status().message(), "BMP: RLE-compressed BMP is not supported; uncompressed BMP is read");
}

TEST(BmpDecodeTest, TruncatedIsDataLossNotACrash) {
  const std::string bytes = Bmp24Bytes(9, 7, PatternBytes(9 * 7 * 3, 2));
  for (size_t cut = 18; cut < bytes.size(); ++cut) {
    StatusOr<Image> img = DecodeImage(bytes.substr(0, cut));
    ASSERT_FALSE(img.ok()) << cut;
    EXPECT_EQ(img.status().code(), StatusCode::kDataLoss) << cut << ": " << img.status();
    EXPECT_EQ(img.status().message().rfind("BMP: ", 0), 0u) << img.status();
  }
  StatusOr<Image> img = DecodeImage(bytes.substr(0, bytes.size() - 1));
  ASSERT_FALSE(img.ok());
  EXPECT_EQ(img.status().message(), "BMP: truncated: the pixel data needs 196 bytes from byte 54, the file has 249");
}

}  // namespace
}  // namespace libshard::image
