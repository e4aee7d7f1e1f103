// GIF input (giflib): the first frame on the logical screen, interlaced rows,
// transparency, frame offsets, and truncated files as kDataLoss. The files
// are written by giflib.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "formats_testutil.h"
#include "libshard/image/decode.h"
#include "libshard/image/probe.h"
#include "testutil.h"

namespace libshard::image {
namespace {

using testing::Contains;
using testing::GifBytes;
using testing::GifFrame;

// 16 colours: index i is (16 i, 255 - 16 i, 3 i).
std::vector<uint8_t> Palette16() {
  std::vector<uint8_t> p;
  for (int i = 0; i < 16; ++i) {
    p.push_back(static_cast<uint8_t>(16 * i));
    p.push_back(static_cast<uint8_t>(255 - 16 * i));
    p.push_back(static_cast<uint8_t>(3 * i));
  }
  return p;
}

GifFrame Frame(int w, int h, int seed) {
  GifFrame f;
  f.width = w, f.height = h;
  for (int i = 0; i < w * h; ++i) f.indices.push_back(static_cast<uint8_t>((i * 5 + seed) % 16));
  return f;
}

void ExpectFramePixels(const Image& img, const GifFrame& f, int x0, int y0) {
  for (int y = 0; y < f.height; ++y) {
    for (int x = 0; x < f.width; ++x) {
      const int i = f.indices[size_t(y) * f.width + x];
      const uint8_t* px = img.row(y0 + y) + size_t(x0 + x) * img.channels();
      ASSERT_EQ(px[0], 16 * i) << x << "," << y;
      ASSERT_EQ(px[1], 255 - 16 * i) << x << "," << y;
      ASSERT_EQ(px[2], 3 * i) << x << "," << y;
    }
  }
}

TEST(GifDecodeTest, FirstFrameOfTwoIsRead) {
  const GifFrame first = Frame(11, 9, 0), second = Frame(11, 9, 7);
  const std::string bytes = GifBytes(11, 9, Palette16(), 0, {first, second});
  EXPECT_EQ(DetectFormat(bytes), ImageFormat::kGif);
  StatusOr<ImageInfo> info = ProbeImage(bytes);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->format, ImageFormat::kGif);
  EXPECT_EQ(info->width, 11);
  EXPECT_EQ(info->height, 9);
  StatusOr<Image> img = DecodeImage(bytes);
  ASSERT_TRUE(img.ok()) << img.status();
  ASSERT_EQ(img->channels(), 3);
  ASSERT_EQ(img->width(), 11);
  ExpectFramePixels(*img, first, 0, 0);
}

TEST(GifDecodeTest, InterlacedRowsLandInPlace) {
  GifFrame f = Frame(7, 19, 3);
  f.interlace = true;
  StatusOr<Image> img = DecodeImage(GifBytes(7, 19, Palette16(), 0, {f}));
  ASSERT_TRUE(img.ok()) << img.status();
  ExpectFramePixels(*img, f, 0, 0);
}

TEST(GifDecodeTest, FrameAtAnOffsetOverTheBackgroundColour) {
  GifFrame f = Frame(4, 3, 1);
  f.left = 2, f.top = 1;
  StatusOr<Image> img = DecodeImage(GifBytes(8, 6, Palette16(), 5, {f}));
  ASSERT_TRUE(img.ok()) << img.status();
  ExpectFramePixels(*img, f, 2, 1);
  const uint8_t* corner = img->row(5) + 7 * 3;  // outside the frame: background index 5
  EXPECT_EQ(corner[0], 80);
  EXPECT_EQ(corner[1], 175);
  EXPECT_EQ(corner[2], 15);
}

TEST(GifDecodeTest, TransparentIndexGivesAlpha) {
  GifFrame f = Frame(6, 4, 0);
  f.transparent = 0;  // index 0 at pixels 0, 16, ...
  DecodeOptions keep;
  keep.alpha = AlphaMode::kKeep;
  StatusOr<Image> img = DecodeImage(GifBytes(6, 4, Palette16(), 0, {f}), keep);
  ASSERT_TRUE(img.ok()) << img.status();
  ASSERT_EQ(img->channels(), 4);
  EXPECT_EQ(img->data()[3], 0);        // pixel 0: index 0, transparent
  EXPECT_EQ(img->data()[4 + 3], 255);  // pixel 1: index 5
  EXPECT_EQ(img->data()[4], 80);
  StatusOr<Image> over_white = DecodeImage(GifBytes(6, 4, Palette16(), 0, {f}));
  ASSERT_TRUE(over_white.ok()) << over_white.status();
  ASSERT_EQ(over_white->channels(), 3);
  EXPECT_EQ(over_white->data()[0], 255);
}

// A first frame bigger than its logical screen (the output) would be
// decoded whole and thrown away: the frame is checked against the screen
// and the pixel limit before any row is decoded.
TEST(GifDecodeTest, FramesPastTheScreenOrThePixelLimitAreRefused) {
  StatusOr<Image> bomb = DecodeImage(GifBytes(1, 1, Palette16(), 0, {GifFrame{0, 0, 1500, 1000, false, -1,
                                                                              std::vector<uint8_t>(1500 * 1000, 0)}}));
  ASSERT_FALSE(bomb.ok());
  EXPECT_EQ(bomb.status().code(), StatusCode::kDataLoss) << bomb.status();
  EXPECT_TRUE(Contains(bomb.status().message(), "GIF: the first frame (1500x1000 at 0,0) extends past the 1x1 "
                                                "logical screen"))
      << bomb.status();
  GifFrame off = Frame(4, 3, 1);
  off.left = 6, off.top = 4;
  StatusOr<Image> past = DecodeImage(GifBytes(8, 6, Palette16(), 0, {off}));
  ASSERT_FALSE(past.ok());
  EXPECT_TRUE(Contains(past.status().message(), "(4x3 at 6,4) extends past the 8x6 logical screen")) << past.status();
  // A 65535 x 65535 frame descriptor (4.3e9 pixels) on a 1 x 1 screen: the
  // pixel limit, before any row (there are 12 pixels of data).
  std::string huge = GifBytes(1, 1, Palette16(), 0, {Frame(4, 3, 0)});
  const size_t desc = 13 + 16 * 3;  // header, screen descriptor, 16 colours
  ASSERT_EQ(huge[desc], ',');
  for (size_t i = desc + 5; i < desc + 9; ++i) huge[i] = '\xFF';
  StatusOr<Image> limit = DecodeImage(huge);
  ASSERT_FALSE(limit.ok());
  EXPECT_EQ(limit.status().code(), StatusCode::kResourceExhausted) << limit.status();
  EXPECT_TRUE(Contains(limit.status().message(), "GIF: the first frame's 65535x65535 exceeds the pixel limit of "
                                                 "100000000 pixels"))
      << limit.status();
}

TEST(GifDecodeTest, TruncatedIsDataLossNotACrash) {
  const std::string bytes = GifBytes(30, 20, Palette16(), 0, {Frame(30, 20, 2)});
  for (size_t cut = 0; cut < bytes.size(); cut += 3) {
    StatusOr<Image> img = DecodeImage(bytes.substr(0, cut));
    ASSERT_FALSE(img.ok()) << cut;
    if (cut < 6) continue;  // not yet a GIF signature
    EXPECT_EQ(img.status().code(), StatusCode::kDataLoss) << cut << ": " << img.status();
    EXPECT_EQ(img.status().message().rfind("GIF: ", 0), 0u) << img.status();
    if (cut >= 13) {
      EXPECT_NE(img.status().message().find("truncated"), std::string::npos) << cut << ": " << img.status();
    }
  }
  for (size_t i = 6; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0xa5);
    StatusOr<Image> img = DecodeImage(bad);
    if (!img.ok()) {
      EXPECT_NE(img.status().code(), StatusCode::kInternal) << i << ": " << img.status();
    }
  }
}

}  // namespace
}  // namespace libshard::image
