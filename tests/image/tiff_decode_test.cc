// TIFF input (libtiff): 8- and 16-bit gray, gray + alpha, RGB and RGBA,
// palette, min-is-white, compressed strips, pages, and truncated or corrupt
// files as kDataLoss, never a crash. The files are written by libtiff.
#include <gtest/gtest.h>
#include <tiffio.h>

#include <cstring>
#include <string>
#include <vector>

#include "formats_testutil.h"
#include "libshard/image/decode.h"
#include "libshard/image/probe.h"
#include "testutil.h"

namespace libshard::image {
namespace {

using testing::MakeTempDir;
using testing::PatternBytes;
using testing::TiffBytes;
using testing::TiffPage;

TiffPage Page(int w, int h, int channels, int bits, int seed) {
  TiffPage p;
  p.width = w, p.height = h, p.channels = channels, p.bits = bits;
  p.samples = PatternBytes(size_t(w) * h * channels * (bits / 8), seed);
  return p;
}

DecodeOptions Keep() {
  DecodeOptions o;
  o.channels = ChannelMode::kAuto;
  o.alpha = AlphaMode::kKeep;
  return o;
}

TEST(TiffDecodeTest, EightBitLayoutsDecodeToTheirSamples) {
  const std::string dir = MakeTempDir();
  for (int channels : {1, 2, 3, 4}) {
    for (int compression : {COMPRESSION_NONE, COMPRESSION_LZW, COMPRESSION_ADOBE_DEFLATE}) {
      const TiffPage p = Page(13, 7, channels, 8, channels);
      TiffPage q = p;
      q.compression = compression;
      const std::string bytes = TiffBytes({q}, dir);
      EXPECT_EQ(DetectFormat(bytes), ImageFormat::kTiff);
      StatusOr<ImageInfo> info = ProbeImage(bytes);
      ASSERT_TRUE(info.ok()) << info.status();
      EXPECT_EQ(info->format, ImageFormat::kTiff);
      EXPECT_EQ(info->width, 13);
      EXPECT_EQ(info->height, 7);
      EXPECT_EQ(info->channels, channels);
      EXPECT_EQ(info->has_alpha, channels % 2 == 0);
      EXPECT_EQ(info->pages, 1);
      StatusOr<Image> img = DecodeImage(bytes, Keep());
      ASSERT_TRUE(img.ok()) << channels << "/" << compression << ": " << img.status();
      ASSERT_EQ(img->channels(), channels);
      ASSERT_EQ(img->byte_size(), p.samples.size());
      EXPECT_EQ(0, std::memcmp(img->data(), p.samples.data(), p.samples.size())) << channels << "/" << compression;
    }
  }
}

TEST(TiffDecodeTest, SixteenBitGrayIsKeptOrRounded) {
  const std::string dir = MakeTempDir();
  TiffPage p = Page(9, 5, 1, 16, 3);
  const std::string bytes = TiffBytes({p}, dir);
  const auto* want = reinterpret_cast<const uint16_t*>(p.samples.data());
  DecodeOptions o = Keep();
  o.keep_16bit = true;
  StatusOr<Image> wide = DecodeImage(bytes, o);
  ASSERT_TRUE(wide.ok()) << wide.status();
  ASSERT_EQ(wide->bit_depth(), 16);
  ASSERT_EQ(wide->channels(), 1);
  EXPECT_EQ(0, std::memcmp(wide->data(), p.samples.data(), p.samples.size()));
  StatusOr<Image> narrow = DecodeImage(bytes, Keep());
  ASSERT_TRUE(narrow.ok()) << narrow.status();
  ASSERT_EQ(narrow->bit_depth(), 8);
  for (size_t i = 0; i < 45; ++i) ASSERT_EQ(narrow->data()[i], (want[i] + 128) / 257) << i;
  // The default policy gives RGB: the gray value three times.
  StatusOr<Image> rgb = DecodeImage(bytes);
  ASSERT_TRUE(rgb.ok()) << rgb.status();
  ASSERT_EQ(rgb->channels(), 3);
  EXPECT_EQ(rgb->data()[3 * 7 + 1], narrow->data()[7]);
}

TEST(TiffDecodeTest, SixteenBitRgbaCompositesOverWhite) {
  const std::string dir = MakeTempDir();
  TiffPage p = Page(4, 3, 4, 16, 5);
  auto* s = reinterpret_cast<uint16_t*>(p.samples.data());
  s[3] = 0;  // the first pixel fully transparent
  const std::string bytes = TiffBytes({p}, dir);
  StatusOr<Image> img = DecodeImage(bytes);
  ASSERT_TRUE(img.ok()) << img.status();
  ASSERT_EQ(img->channels(), 3);
  EXPECT_EQ(img->data()[0], 255);
  EXPECT_EQ(img->data()[1], 255);
  EXPECT_EQ(img->data()[2], 255);
}

TEST(TiffDecodeTest, MinIsWhiteIsInverted) {
  const std::string dir = MakeTempDir();
  TiffPage p = Page(6, 4, 1, 8, 7);
  p.min_is_white = true;
  StatusOr<Image> img = DecodeImage(TiffBytes({p}, dir), Keep());
  ASSERT_TRUE(img.ok()) << img.status();
  for (size_t i = 0; i < p.samples.size(); ++i) ASSERT_EQ(img->data()[i], 255 - p.samples[i]) << i;
}

TEST(TiffDecodeTest, PaletteBecomesRgb) {
  const std::string dir = MakeTempDir();
  TiffPage p = Page(5, 4, 1, 8, 0);
  p.red.assign(256, 0), p.green.assign(256, 0), p.blue.assign(256, 0);
  for (int i = 0; i < 256; ++i) {
    p.red[i] = static_cast<uint16_t>(i * 257);
    p.green[i] = static_cast<uint16_t>((255 - i) * 257);
    p.blue[i] = static_cast<uint16_t>((i * 7 % 256) * 257);
  }
  StatusOr<Image> img = DecodeImage(TiffBytes({p}, dir), Keep());
  ASSERT_TRUE(img.ok()) << img.status();
  ASSERT_EQ(img->channels(), 3);
  for (size_t i = 0; i < p.samples.size(); ++i) {
    const int v = p.samples[i];
    ASSERT_EQ(img->data()[i * 3], v) << i;
    ASSERT_EQ(img->data()[i * 3 + 1], 255 - v) << i;
    ASSERT_EQ(img->data()[i * 3 + 2], v * 7 % 256) << i;
  }
}

TEST(TiffDecodeTest, FirstPageUnlessAskedAndAPagePastTheLastIsNamed) {
  const std::string dir = MakeTempDir();
  const TiffPage first = Page(8, 6, 3, 8, 1), second = Page(4, 9, 1, 8, 2);
  const std::string bytes = TiffBytes({first, second}, dir);
  StatusOr<ImageInfo> info = ProbeImage(bytes);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->pages, 2);
  EXPECT_EQ(info->width, 8);
  StatusOr<Image> a = DecodeImage(bytes, Keep());
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->width(), 8);
  EXPECT_EQ(0, std::memcmp(a->data(), first.samples.data(), first.samples.size()));
  DecodeOptions o = Keep();
  o.tiff_page = 1;
  StatusOr<Image> b = DecodeImage(bytes, o);
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->width(), 4);
  ASSERT_EQ(b->height(), 9);
  EXPECT_EQ(0, std::memcmp(b->data(), second.samples.data(), second.samples.size()));
  o.tiff_page = 2;
  StatusOr<Image> c = DecodeImage(bytes, o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message(), "TIFF: page 2 asked for, but the file has 2 page(s) (numbered from 0)");
}

TEST(TiffDecodeTest, PixelLimitIsCheckedBeforeDecoding) {
  const std::string dir = MakeTempDir();
  DecodeOptions o;
  o.max_pixels = 50;
  StatusOr<Image> img = DecodeImage(TiffBytes({Page(10, 6, 3, 8, 1)}, dir), o);
  ASSERT_FALSE(img.ok());
  EXPECT_EQ(img.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(img.status().message(), "tiff: 10x6 exceeds the pixel limit of 50 pixels");
}

TEST(TiffDecodeTest, TruncatedOrCorruptIsDataLossNotACrash) {
  const std::string dir = MakeTempDir();
  for (int compression : {COMPRESSION_NONE, COMPRESSION_LZW}) {
    TiffPage p = Page(40, 30, 3, 8, 4);
    p.compression = compression;
    const std::string bytes = TiffBytes({p}, dir);
    for (size_t cut = 4; cut < bytes.size(); cut += 97) {
      StatusOr<Image> img = DecodeImage(bytes.substr(0, cut));
      ASSERT_FALSE(img.ok()) << cut;
      EXPECT_EQ(img.status().code(), StatusCode::kDataLoss) << cut << ": " << img.status();
      EXPECT_EQ(img.status().message().rfind("TIFF: ", 0), 0u) << img.status();
    }
    // Every byte of the file flipped in turn: an error or an image, never a crash.
    for (size_t i = 0; i < bytes.size(); i += 7) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ 0x5a);
      StatusOr<Image> img = DecodeImage(bad);
      if (!img.ok()) {
        EXPECT_NE(img.status().code(), StatusCode::kInternal) << i << ": " << img.status();
      }
    }
  }
}

}  // namespace
}  // namespace libshard::image
