// WebP input: probe and decode (libwebp), the pixel policy, the pixel limit,
// animated and truncated files, and forged GIF, BMP and TIFF headers.
#include <gtest/gtest.h>
#include <webp/encode.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "libshard/image/decode.h"
#include "libshard/image/probe.h"
#include "testutil.h"

namespace libshard::image {
namespace {

// A deterministic w x h pattern with `channels` samples per pixel.
std::vector<uint8_t> Pattern(int w, int h, int channels) {
  std::vector<uint8_t> px(size_t(w) * h * channels);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>((i * 37 + i / 7) & 0xFF);
  return px;
}

std::string EncodeLossless(const std::vector<uint8_t>& px, int w, int h, int channels) {
  return testing::WebpLosslessBytes(px.data(), w, h, channels);
}

void AppendLe32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// RIFF container around one chunk.
std::string Riff(const std::string& fourcc, const std::string& payload) {
  std::string s = "RIFF";
  AppendLe32(&s, static_cast<uint32_t>(4 + 8 + payload.size()));
  s += "WEBP" + fourcc;
  AppendLe32(&s, static_cast<uint32_t>(payload.size()));
  return s + payload;
}

TEST(WebpDecodeTest, LosslessRgbDecodesToTheSamePixels) {
  const int w = 23, h = 17;
  const std::vector<uint8_t> px = Pattern(w, h, 3);
  const std::string bytes = EncodeLossless(px, w, h, 3);
  EXPECT_EQ(DetectFormat(bytes), ImageFormat::kWebp);
  StatusOr<ImageInfo> info = ProbeImage(bytes);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->width, w);
  EXPECT_EQ(info->height, h);
  EXPECT_EQ(info->channels, 3);
  EXPECT_FALSE(info->has_alpha);
  EXPECT_TRUE(info->lossless);
  StatusOr<Image> img = DecodeImage(bytes);
  ASSERT_TRUE(img.ok()) << img.status();
  ASSERT_EQ(img->width(), w);
  ASSERT_EQ(img->height(), h);
  ASSERT_EQ(img->channels(), 3);
  EXPECT_EQ(0, std::memcmp(img->data(), px.data(), px.size()));
}

TEST(WebpDecodeTest, LossyDecodesCloseToTheSource) {
  // A smooth gradient survives VP8 at quality 95 within a few levels.
  const int w = 32, h = 24;
  std::vector<uint8_t> px(size_t(w) * h * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &px[(size_t(y) * w + x) * 3];
      p[0] = static_cast<uint8_t>(x * 8);
      p[1] = static_cast<uint8_t>(y * 10);
      p[2] = 128;
    }
  }
  uint8_t* out = nullptr;
  const size_t n = WebPEncodeRGB(px.data(), w, h, w * 3, 95, &out);
  ASSERT_GT(n, 0u);
  const std::string bytes(reinterpret_cast<const char*>(out), n);
  WebPFree(out);
  StatusOr<ImageInfo> info = ProbeImage(bytes);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->lossless);
  StatusOr<Image> img = DecodeImage(bytes);
  ASSERT_TRUE(img.ok()) << img.status();
  ASSERT_EQ(img->width(), w);
  ASSERT_EQ(img->height(), h);
  ASSERT_EQ(img->channels(), 3);
  double err = 0;
  for (size_t i = 0; i < px.size(); ++i) err += std::abs(int(img->data()[i]) - int(px[i]));
  EXPECT_LT(err / px.size(), 4.0);
}

TEST(WebpDecodeTest, AlphaIsKeptOrCompositedAsForPng) {
  const int w = 9, h = 5;
  const std::vector<uint8_t> px = Pattern(w, h, 4);
  const std::string bytes = EncodeLossless(px, w, h, 4);
  DecodeOptions keep;
  keep.alpha = AlphaMode::kKeep;
  StatusOr<Image> rgba = DecodeImage(bytes, keep);
  ASSERT_TRUE(rgba.ok()) << rgba.status();
  ASSERT_EQ(rgba->channels(), 4);
  // WebP lossless keeps RGB under alpha 0 only when asked (exact); compare
  // every pixel whose alpha is not 0, and the alpha channel everywhere.
  for (size_t i = 0; i < size_t(w) * h; ++i) {
    ASSERT_EQ(rgba->data()[i * 4 + 3], px[i * 4 + 3]) << "pixel " << i;
    if (px[i * 4 + 3] == 0) continue;
    for (int k = 0; k < 3; ++k) ASSERT_EQ(rgba->data()[i * 4 + k], px[i * 4 + k]) << "pixel " << i;
  }
  DecodeOptions comp;
  comp.background = {10, 200, 90};
  StatusOr<Image> rgb = DecodeImage(bytes, comp);
  ASSERT_TRUE(rgb.ok()) << rgb.status();
  ASSERT_EQ(rgb->channels(), 3);
  for (size_t i = 0; i < size_t(w) * h; ++i) {
    const int a = px[i * 4 + 3];
    for (int k = 0; k < 3; ++k) {
      const double want = (rgba->data()[i * 4 + k] * a + comp.background[k] * (255 - a)) / 255.0;
      ASSERT_NEAR(rgb->data()[i * 3 + k], want, 0.51) << "pixel " << i;
    }
  }
  DecodeOptions gray;
  gray.channels = ChannelMode::kGray;
  StatusOr<Image> g = DecodeImage(EncodeLossless(Pattern(w, h, 3), w, h, 3), gray);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->channels(), 1);
}

TEST(WebpDecodeTest, TruncatedIsDataLoss) {
  const std::string bytes = EncodeLossless(Pattern(40, 30, 3), 40, 30, 3);
  for (size_t cut : {size_t{14}, size_t{25}, bytes.size() / 2, bytes.size() - 1}) {
    SCOPED_TRACE(cut);
    StatusOr<Image> img = DecodeImage(bytes.substr(0, cut));
    ASSERT_FALSE(img.ok());
    EXPECT_EQ(img.status().code(), StatusCode::kDataLoss) << img.status();
    EXPECT_NE(img.status().message().find("WebP: "), std::string::npos) << img.status();
  }
}

TEST(WebpDecodeTest, SizeOverThePixelLimitIsRefusedFromTheHeader) {
  // A VP8L header stating 16384 x 16384 with no image data after it: the
  // limit is checked before any decode (which would report DataLoss).
  std::string vp8l(1, '\x2f');
  const uint32_t bits = (16383u) | (16383u << 14);  // width-1, height-1; no alpha, version 0
  AppendLe32(&vp8l, bits);
  const std::string bytes = Riff("VP8L", vp8l);
  StatusOr<ImageInfo> info = ProbeImage(bytes);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->width, 16384);
  StatusOr<Image> img = DecodeImage(bytes);
  ASSERT_FALSE(img.ok());
  EXPECT_EQ(img.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(img.status().message(), "webp: 16384x16384 exceeds the pixel limit of 100000000 pixels");
}

TEST(WebpDecodeTest, AnimatedIsRefused) {
  // VP8X with the animation flag (0x02), canvas 4 x 3.
  std::string vp8x = {'\x02', 0, 0, 0, 3, 0, 0, 2, 0, 0};
  const std::string bytes = Riff("VP8X", vp8x);
  StatusOr<ImageInfo> info = ProbeImage(bytes);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->animated);
  StatusOr<Image> img = DecodeImage(bytes);
  ASSERT_FALSE(img.ok());
  EXPECT_EQ(img.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(img.status().message(), "WebP: animated WebP is not supported; only still WebP images are read");
}

// GIF, BMP and TIFF are read now (tiff/gif/bmp_decode_test.cc): forged
// headers of zeros are data loss naming the format, not "unrecognised".
TEST(UnreadFormatTest, GifBmpTiffForgedHeadersAreDataLossNamingTheFormat) {
  const std::string gif = std::string("GIF89a") + std::string(20, '\0');
  const std::string bmp = std::string("BM\x46\0\0\0\0\0\0\0\x36\0\0\0\x28\0\0\0", 18) + std::string(52, '\0');
  const std::string tiff = std::string("II*\0", 4) + std::string(20, '\0');
  for (const auto& [bytes, message] : {std::pair{gif, "GIF: zero screen size 0x0"},
                                       std::pair{bmp, "BMP: invalid dimensions 0x0"}, std::pair{tiff, "TIFF: "}}) {
    StatusOr<Image> img = DecodeImage(bytes);
    ASSERT_FALSE(img.ok());
    EXPECT_EQ(img.status().code(), StatusCode::kDataLoss) << img.status();
    EXPECT_EQ(img.status().message().rfind(message, 0), 0u) << img.status();
  }
  StatusOr<Image> text = DecodeImage("BMW service list, 2026 edition");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(), "image: unrecognised format (not a PNG, JPEG, WebP, GIF, BMP or TIFF signature)");
  StatusOr<Image> other = DecodeImage("hello, not an image");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().message(), "image: unrecognised format (not a PNG, JPEG, WebP, GIF, BMP or TIFF signature)");
}

}  // namespace
}  // namespace libshard::image
