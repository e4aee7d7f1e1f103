// Crop-decode (DecodeJpegRegion) against the full decode, byte for byte: for
// many random regions of real JPEGs (../shared/interop/jpeg) and of photos
// encoded here with every chroma subsampling libjpeg writes (4:4:4, 4:2:2,
// 4:4:0, 4:2:0, 4:1:1), baseline and progressive, with restart markers, odd
// sizes, at every DCT scale, RGB and gray.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

// jpeglib.h needs size_t / FILE first.
#include <jpeglib.h>

#include "libshard/image/decode.h"
#include "libshard/util/random.h"
#include "testutil.h"

namespace libshard::image {
namespace {

using testing::ReadFileOrDie;
using testing::SharedPath;

struct Sampling {
  const char* name;
  int h, v;  // luma sampling factors (chroma 1x1)
  bool progressive;
  int restart_rows;  // restart interval in MCU rows (0: none)
};

// `src` (RGB) tiled and mirrored to w x h, encoded by libjpeg at q90 with the
// given sampling: the shapes the library's own encoder does not write.
std::string EncodeWithLibjpeg(const Image& src, int w, int h, const Sampling& s) {
  std::vector<uint8_t> px(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y) {
    const int sy = (y / src.height()) % 2 ? src.height() - 1 - y % src.height() : y % src.height();
    for (int x = 0; x < w; ++x) {
      const int sx = (x / src.width()) % 2 ? src.width() - 1 - x % src.width() : x % src.width();
      std::memcpy(&px[(static_cast<size_t>(y) * w + x) * 3], src.row(sy) + sx * 3, 3);
    }
  }
  jpeg_compress_struct c;
  jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &buf, &size);
  c.image_width = static_cast<JDIMENSION>(w);
  c.image_height = static_cast<JDIMENSION>(h);
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 90, TRUE);
  c.comp_info[0].h_samp_factor = s.h;
  c.comp_info[0].v_samp_factor = s.v;
  if (s.progressive) jpeg_simple_progression(&c);
  c.restart_in_rows = s.restart_rows;
  jpeg_start_compress(&c, TRUE);
  for (int y = 0; y < h; ++y) {
    JSAMPROW row = &px[static_cast<size_t>(y) * w * 3];
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::string out(reinterpret_cast<const char*>(buf), size);
  std::free(buf);
  return out;
}

// Random regions of `bytes` at every scale, RGB and gray: each equals the
// same rectangle of the full decode; some reach past the image and are
// clipped. Returns how many regions were compared.
int CheckRandomRegions(const std::string& name, const std::string& bytes, uint64_t seed, int per_case) {
  util::SplitMix64 rng(seed);
  int compared = 0;
  for (int d : {1, 2, 4, 8}) {
    for (bool gray : {false, true}) {
      DecodeOptions o;
      o.jpeg_scale_denom = d;
      o.apply_orientation = false;
      o.channels = gray ? ChannelMode::kGray : ChannelMode::kRgb;
      StatusOr<Image> full = DecodeImage(bytes, o);
      EXPECT_TRUE(full.ok()) << name << ": " << full.status();
      if (!full.ok()) return compared;
      const int fw = full->width(), fh = full->height(), c = full->channels();
      for (int t = 0; t < per_case; ++t) {
        PixelRect want;
        want.width = 1 + static_cast<int>(rng.Below(static_cast<uint64_t>(fw)));
        want.height = 1 + static_cast<int>(rng.Below(static_cast<uint64_t>(fh)));
        want.x = static_cast<int>(rng.Below(static_cast<uint64_t>(fw - want.width + 1)));
        want.y = static_cast<int>(rng.Below(static_cast<uint64_t>(fh - want.height + 1)));
        if (t % 10 == 9) want.width += 7;  // past the right edge: clipped
        PixelRect r = want;
        Image part;
        Status s = DecodeJpegRegion(bytes, d, gray, &r, &part);
        EXPECT_TRUE(s.ok()) << name << ": " << s;
        if (!s.ok()) return compared;
        const std::string where = name + " d=" + std::to_string(d) + (gray ? " gray" : " rgb") + " region " +
                                  std::to_string(want.x) + "," + std::to_string(want.y) + " " +
                                  std::to_string(want.width) + "x" + std::to_string(want.height);
        EXPECT_EQ(r.x, want.x) << where;
        EXPECT_EQ(r.y, want.y) << where;
        EXPECT_EQ(r.width, std::min(want.width, fw - want.x)) << where;
        EXPECT_EQ(r.height, want.height) << where;
        EXPECT_EQ(part.width(), r.width) << where;
        EXPECT_EQ(part.height(), r.height) << where;
        EXPECT_EQ(part.channels(), c) << where;
        if (part.width() != r.width || part.height() != r.height || part.channels() != c) return compared;
        for (int y = 0; y < r.height; ++y) {
          if (std::memcmp(part.row(y), full->row(r.y + y) + static_cast<size_t>(r.x) * c, part.row_bytes()) != 0) {
            ADD_FAILURE() << where << ": row " << y << " differs from the full decode";
            return compared;
          }
        }
        // Untrimmed: libjpeg's column range around the region, whose region
        // columns are the full decode's.
        PixelRect u = want;
        Image wide;
        s = DecodeJpegRegionUntrimmed(bytes, d, gray, &u, &wide);
        EXPECT_TRUE(s.ok()) << where << " untrimmed: " << s;
        if (!s.ok()) return compared;
        EXPECT_LE(u.x, r.x) << where;
        EXPECT_GE(u.x + u.width, r.x + r.width) << where;
        EXPECT_LE(u.x + u.width, fw) << where;
        EXPECT_EQ(u.y, r.y) << where;
        EXPECT_EQ(u.height, r.height) << where;
        EXPECT_EQ(wide.width(), u.width) << where;
        EXPECT_EQ(wide.height(), u.height) << where;
        if (u.x > r.x || u.x + u.width < r.x + r.width || wide.width() != u.width || wide.height() != r.height) {
          return compared;
        }
        for (int y = 0; y < r.height; ++y) {
          if (std::memcmp(wide.row(y) + static_cast<size_t>(r.x - u.x) * c,
                          full->row(r.y + y) + static_cast<size_t>(r.x) * c, part.row_bytes()) != 0) {
            ADD_FAILURE() << where << ": untrimmed row " << y << " differs from the full decode";
            return compared;
          }
        }
        ++compared;
      }
    }
  }
  return compared;
}

TEST(JpegRegionTest, RandomRegionsOfInteropFilesEqualTheFullDecode) {
  const std::string dir = SharedPath("interop/jpeg");
  if (dir.empty()) GTEST_SKIP() << "shared interop/jpeg not found";
  // 4:2:0 baseline and arithmetic-coded, progressive (two kinds), gray, RGB
  // coded, restart markers, EXIF, odd and tiny sizes.
  const char* files[] = {"libjpegturbo_testorig.jpg",
                         "libjpegturbo_testimgari.jpg",
                         "jpegdecoder_mozilla_jpg-progressive.jpg",
                         "jpegdecoder_progressive3.jpg",
                         "jpegdecoder_mozilla_jpg-gray.jpg",
                         "jpegdecoder_rgb.jpg",
                         "jpegdecoder_restarts.jpg",
                         "exif_Landscape_6.jpg",
                         "jpegdecoder_mozilla_jpg-size-33x33.jpg",
                         "jpegdecoder_mozilla_jpg-size-15x15.jpg",
                         "jpegdecoder_mozilla_jpg-size-1x1.jpg"};
  uint64_t seed = 1;
  for (const char* f : files) {
    EXPECT_EQ(CheckRandomRegions(f, ReadFileOrDie(dir + "/" + f), seed++, 40), 4 * 2 * 40) << f;
  }
}

TEST(JpegRegionTest, RandomRegionsOfEverySubsamplingEqualTheFullDecode) {
  const std::string dir = SharedPath("interop/jpeg");
  if (dir.empty()) GTEST_SKIP() << "shared interop/jpeg not found";
  StatusOr<Image> photo = DecodeImage(ReadFileOrDie(dir + "/libjpegturbo_testorig.jpg"));
  ASSERT_TRUE(photo.ok()) << photo.status();
  const Sampling samplings[] = {
      {"4:4:4", 1, 1, false, 0},
      {"4:2:2", 2, 1, false, 0},
      {"4:4:0", 1, 2, false, 0},
      {"4:2:0", 2, 2, false, 0},
      {"4:1:1", 4, 1, false, 0},
      {"4:2:0 progressive", 2, 2, true, 0},
      {"4:2:2 progressive", 2, 1, true, 0},
      {"4:2:0 restarts", 2, 2, false, 3},
  };
  uint64_t seed = 100;
  for (const Sampling& s : samplings) {
    for (auto [w, h] : {std::pair{511, 333}, std::pair{301, 257}}) {
      const std::string name = std::string(s.name) + " " + std::to_string(w) + "x" + std::to_string(h);
      EXPECT_EQ(CheckRandomRegions(name, EncodeWithLibjpeg(*photo, w, h, s), seed++, 30), 4 * 2 * 30) << name;
    }
  }
}

TEST(JpegRegionTest, RefusesWhatItCannotDecodeExactly) {
  const std::string dir = SharedPath("interop/jpeg");
  if (dir.empty()) GTEST_SKIP() << "shared interop/jpeg not found";
  Image out;
  PixelRect r{1, 1, 8, 8};
  EXPECT_EQ(DecodeJpegRegion(ReadFileOrDie(dir + "/jpegdecoder_mozilla_jpg-cmyk-1.jpg"), 1, false, &r, &out).code(),
            StatusCode::kUnimplemented);
  r = {1, 1, 8, 8};
  EXPECT_EQ(DecodeJpegRegion(ReadFileOrDie(dir + "/jpegdecoder_ycck.jpg"), 1, false, &r, &out).code(),
            StatusCode::kUnimplemented);
  const std::string bytes = ReadFileOrDie(dir + "/libjpegturbo_testorig.jpg");
  r = {1, 1, 8, 8};
  EXPECT_EQ(DecodeJpegRegion(bytes, 3, false, &r, &out).code(), StatusCode::kInvalidArgument);
  r = {10, 10, 0, 5};
  EXPECT_EQ(DecodeJpegRegion(bytes, 1, false, &r, &out).code(), StatusCode::kInvalidArgument);
  // Cut inside the scan: a region in the lost rows is DataLoss, never grey.
  r = {0, 120, 50, 20};
  Status cut = DecodeJpegRegion(bytes.substr(0, bytes.size() / 2), 1, false, &r, &out);
  EXPECT_EQ(cut.code(), StatusCode::kDataLoss) << cut;
}

}  // namespace
}  // namespace libshard::image
