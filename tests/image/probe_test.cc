// ProbeImage against PngSuite's MANIFEST.tsv and the JPEG corpus ORIGIN.md.
#include "libshard/image/probe.h"

#include <gtest/gtest.h>

#include <sstream>

#include "testutil.h"

namespace libshard::image {
namespace {

using ::libshard::testing::ReadFileOrDie;
using ::libshard::testing::SharedPath;

TEST(ProbeTest, PngHeadersMatchManifest) {
  const std::string dir = SharedPath("interop/pngsuite");
  if (dir.empty()) GTEST_SKIP() << "shared interop/pngsuite not found";
  std::istringstream tsv(ReadFileOrDie(dir + "/MANIFEST.tsv"));
  std::string line;
  std::getline(tsv, line);
  int checked = 0;
  while (std::getline(tsv, line)) {
    std::istringstream f(line);
    std::string name, bytes, sha, sig, chunks;
    int w, h, depth, color_type, interlace;
    f >> name >> bytes >> sha >> sig >> w >> h >> depth >> color_type >> interlace >> chunks;
    if (name[0] == 'x') continue;
    SCOPED_TRACE(name);
    StatusOr<ImageInfo> info = ProbeImage(ReadFileOrDie(dir + "/" + name));
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->format, ImageFormat::kPng);
    EXPECT_EQ(info->width, w);
    EXPECT_EQ(info->height, h);
    EXPECT_EQ(info->bit_depth, depth);
    EXPECT_EQ(info->progressive, interlace == 1);
    const bool trns = chunks.find("tRNS") != std::string::npos;
    EXPECT_EQ(info->has_alpha, color_type == 4 || color_type == 6 || trns);
    ++checked;
  }
  EXPECT_EQ(checked, 161);
}

TEST(ProbeTest, JpegFlags) {
  const std::string dir = SharedPath("interop/jpeg");
  if (dir.empty()) GTEST_SKIP() << "shared interop/jpeg not found";
  struct Case {
    const char* file;
    int w, h, channels, depth;
    bool progressive, cmyk, ycck, arithmetic;
    int orientation;
  };
  const Case cases[] = {
      {"jpegdecoder_mozilla_jpg-cmyk-1.jpg", 32, 32, 4, 8, false, true, false, false, 1},
      {"jpegdecoder_ycck.jpg", 500, 333, 4, 8, false, true, true, false, 1},
      {"jpegdecoder_rgb.jpg", 500, 333, 3, 8, false, false, false, false, 1},
      {"jpegdecoder_progressive3.jpg", 650, 470, 3, 8, true, false, false, false, 1},
      {"jpegdecoder_mozilla_jpg-gray.jpg", 32, 32, 1, 8, false, false, false, false, 1},
      {"libjpegturbo_monkey12.jpg", 149, 227, 3, 12, false, false, false, false, 1},
      {"libjpegturbo_testimgari.jpg", 227, 149, 3, 8, false, false, false, true, 1},
      {"exif_Landscape_0.jpg", 1800, 1200, 3, 8, false, false, false, false, 1},
      {"exif_Landscape_3.jpg", 1800, 1200, 3, 8, false, false, false, false, 3},
      {"exif_Landscape_6.jpg", 1200, 1800, 3, 8, false, false, false, false, 6},
      {"exif_Landscape_8.jpg", 1200, 1800, 3, 8, false, false, false, false, 8},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    StatusOr<ImageInfo> info = ProbeImage(ReadFileOrDie(dir + "/" + c.file));
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->format, ImageFormat::kJpeg);
    EXPECT_EQ(info->width, c.w);
    EXPECT_EQ(info->height, c.h);
    EXPECT_EQ(info->channels, c.channels);
    EXPECT_EQ(info->bit_depth, c.depth);
    EXPECT_EQ(info->progressive, c.progressive);
    EXPECT_EQ(info->cmyk, c.cmyk);
    EXPECT_EQ(info->ycck, c.ycck);
    EXPECT_EQ(info->arithmetic, c.arithmetic);
    EXPECT_EQ(info->orientation, c.orientation);
  }
}

TEST(ProbeTest, SizeSixIsReallyAPng) {
  const std::string dir = SharedPath("interop/jpeg");
  if (dir.empty()) GTEST_SKIP() << "shared interop/jpeg not found";
  StatusOr<ImageInfo> info = ProbeImage(ReadFileOrDie(dir + "/jpegdecoder_mozilla_jpg-size-6x6.jpg"));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->format, ImageFormat::kPng);
}

TEST(ProbeTest, TruncatedHeaders) {
  EXPECT_EQ(ProbeImage("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ProbeImage(std::string("\xFF\xD8\xFF", 3)).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ProbeImage(std::string("\x89PNG\r\n\x1a\n\0\0", 10)).status().code(), StatusCode::kDataLoss);
}

// The one "what is this file": magic bytes of the formats read and not
// read, a zstd frame, text, and nothing.
TEST(DescribeContentTest, KnownAnswers) {
  EXPECT_STREQ(DescribeContent(std::string("\x89PNG\r\n\x1a\n", 8) + "rest"), "PNG image");
  EXPECT_STREQ(DescribeContent("\xff\xd8\xff\xe0"), "JPEG image");
  EXPECT_STREQ(DescribeContent(std::string("RIFF\x10\0\0\0WEBPVP8 ", 16)), "WebP image");
  EXPECT_STREQ(DescribeContent("GIF89a\x01\x02"), "GIF image");
  EXPECT_STREQ(DescribeContent(std::string("II*\0\x08\0\0\0", 8)), "TIFF image");
  std::string bmp = "BM" + std::string(12, '\x01') + std::string("\x28\0\0\0", 4);
  EXPECT_STREQ(DescribeContent(bmp), "BMP image");
  EXPECT_STREQ(DescribeContent("(\xb5/\xfd\x01\x02"), "zstd data");
  EXPECT_STREQ(DescribeContent("hello,\tworld\r\n"), "text");
  // Only the first 64 bytes are looked at.
  EXPECT_STREQ(DescribeContent(std::string(64, 'a') + "\x01"), "text");
  EXPECT_STREQ(DescribeContent("BM and then text"), "text");
  EXPECT_EQ(DescribeContent(std::string("\x01\x02\x03", 3)), nullptr);
  EXPECT_EQ(DescribeContent(""), nullptr);
}

}  // namespace
}  // namespace libshard::image
