// The DCT hashes (image/perceptual_hash.h): a golden value, the fast
// separable DCT (64- and 256-bit hashes) against the textbook formula, one hash for every pixel
// layout of the same picture, and the distances that set the leak check's
// default (--leak-distance 8): copies stay within it, distinct pictures far
// outside.
#include "libshard/image/perceptual_hash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "libshard/image/decode.h"
#include "libshard/image/encode.h"
#include "libshard/image/resize.h"
#include "libshard/util/sha256.h"
#include "photo_testutil.h"
#include "wallpaper_corpus.h"

namespace libshard::image {
namespace {

using testing::SyntheticPhoto;

// The hashes from their definition (perceptual_hash.h), by the book and
// in double: the blocks' mean luma (k = ceil(side / 128) pixels a side,
// every step-th pixel read, step = ceil(k / 4)), the region cut into 32x32
// equal parts in pixel coordinates, each the mean over it of the blocks
// taken as constants (weighted by the overlap), every coefficient of the
// 2-D DCT-II with its orthonormal scale; the top-left 8x8 kept for the
// 64-bit hash, 16x16 for the 256-bit detail hash. `b`: the region, per mille.
struct Reference {
  uint64_t phash = 0;
  DetailHash detail{};
};
Reference ReferenceHashes(const Image& img, const RegionPerMille& b = kHashRegionBounds[0]) {
  const int w = img.width(), h = img.height();
  const int kx = (w + kGrayPlaneCells - 1) / kGrayPlaneCells, ky = (h + kGrayPlaneCells - 1) / kGrayPlaneCells;
  const int nx = (w + kx - 1) / kx, ny = (h + ky - 1) / ky;
  const int sx = (kx + kGrayPlaneSamples - 1) / kGrayPlaneSamples,
            sy = (ky + kGrayPlaneSamples - 1) / kGrayPlaneSamples;
  std::vector<double> block(static_cast<size_t>(nx) * ny);
  for (int by = 0; by < ny; ++by) {
    for (int bx = 0; bx < nx; ++bx) {
      double sum = 0;
      int count = 0;
      for (int y = by * ky; y < std::min((by + 1) * ky, h); y += sy) {
        for (int x = bx * kx; x < std::min((bx + 1) * kx, w); x += sx) {
          const uint8_t* p = img.row(y) + x * img.channels();
          sum += img.channels() >= 3 ? (77.0 * p[0] + 150.0 * p[1] + 29.0 * p[2]) / 256.0 : p[0];
          ++count;
        }
      }
      block[by * nx + bx] = sum / count;
    }
  }
  const int n = 32;
  const double rx0 = w * b.left / 1000.0, rx1 = w * b.right / 1000.0;
  const double ry0 = h * b.top / 1000.0, ry1 = h * b.bottom / 1000.0;
  auto overlap = [](double a0, double a1, double c0, double c1) {
    return std::max(0.0, std::min(a1, c1) - std::max(a0, c0));
  };
  std::array<double, 32 * 32> grid{};
  for (int gy = 0; gy < n; ++gy) {
    const double y0 = ry0 + (ry1 - ry0) * gy / n, y1 = ry0 + (ry1 - ry0) * (gy + 1) / n;
    for (int gx = 0; gx < n; ++gx) {
      const double x0 = rx0 + (rx1 - rx0) * gx / n, x1 = rx0 + (rx1 - rx0) * (gx + 1) / n;
      double sum = 0;
      for (int by = 0; by < ny; ++by) {
        const double wy = overlap(y0, y1, by * ky, std::min((by + 1) * ky, h));
        if (wy == 0) continue;
        for (int bx = 0; bx < nx; ++bx) {
          sum += wy * overlap(x0, x1, bx * kx, std::min((bx + 1) * kx, w)) * block[by * nx + bx];
        }
      }
      grid[gy * n + gx] = sum / ((x1 - x0) * (y1 - y0));
    }
  }
  std::array<double, 256> c{};  // c[v * 16 + u]
  for (int v = 0; v < 16; ++v) {
    for (int u = 0; u < 16; ++u) {
      double s = 0;
      for (int y = 0; y < n; ++y) {
        for (int x = 0; x < n; ++x) {
          s += grid[y * n + x] * std::cos((2 * x + 1) * u * M_PI / 64) * std::cos((2 * y + 1) * v * M_PI / 64);
        }
      }
      const double au = u == 0 ? std::sqrt(1.0 / n) : std::sqrt(2.0 / n);
      const double av = v == 0 ? std::sqrt(1.0 / n) : std::sqrt(2.0 / n);
      c[v * 16 + u] = s * au * av;
    }
  }
  Reference r;
  std::vector<double> ac;
  for (int i = 1; i < 64; ++i) ac.push_back(c[(i / 8) * 16 + i % 8]);
  std::sort(ac.begin(), ac.end());
  for (int i = 1; i < 64; ++i) r.phash |= c[(i / 8) * 16 + i % 8] > ac[31] ? uint64_t{1} << i : 0;
  ac.assign(c.begin() + 1, c.end());
  std::sort(ac.begin(), ac.end());
  for (int i = 1; i < 256; ++i) r.detail[i / 64] |= c[i] > ac[127] ? uint64_t{1} << (i % 64) : 0;
  return r;
}
uint64_t ReferenceHash(const Image& img, const RegionPerMille& b = kHashRegionBounds[0]) {
  return ReferenceHashes(img, b).phash;
}

Image Reencoded(const Image& img, int quality) {
  JpegEncodeOptions o;
  o.quality = quality;
  StatusOr<std::string> jpeg = EncodeJpeg(img, o);
  EXPECT_TRUE(jpeg.ok());
  StatusOr<Image> back = DecodeImage(*jpeg, DecodeOptions{});
  EXPECT_TRUE(back.ok()) << back.status().message();
  return std::move(*back);
}

Image Scaled(const Image& img, double f) {
  StatusOr<Image> out =
      Resize(img, static_cast<int>(img.width() * f), static_cast<int>(img.height() * f), Filter::kBilinear);
  EXPECT_TRUE(out.ok());
  return std::move(*out);
}

TEST(PerceptualHashTest, GoldenValue) {
  const Image img = SyntheticPhoto(320, 240, 1);
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(PerceptualHash(img)));
  EXPECT_STREQ(hex, "c96606738de11d72");
}

TEST(PerceptualHashTest, FastDctIsTheTextbookDct) {
  for (uint64_t seed = 0; seed < 40; ++seed) {
    const Image img = SyntheticPhoto(97 + 13 * static_cast<int>(seed), 61 + 7 * static_cast<int>(seed), seed);
    const Reference ref = ReferenceHashes(img);
    EXPECT_EQ(PerceptualHash(img), ref.phash) << "seed " << seed;
    EXPECT_EQ(HashRegions(img).detail[0], ref.detail) << "seed " << seed;
  }
}

// The centre hash is the hash of the centred region of the plane; a copy
// of that region cut out by hand hashes within a few bits of it (its plane
// cells fall elsewhere). Every region's hash is its reference hash, and
// HashRegions' 64-bit hashes are the single-region calls'.
TEST(PerceptualHashTest, RegionHashesAreTheHashesOfTheRegions) {
  for (int w : {40, 97, 400, 1001}) {
    const int h = 30 + w / 3;
    const Image img = SyntheticPhoto(w, h, static_cast<uint64_t>(w));
    EXPECT_EQ(CentrePerceptualHash(img), ReferenceHash(img, kHashRegionBounds[1])) << w;
    const int mx = w * 25 / 1000, my = h * 25 / 1000;
    const Image centre = testing::CropOf(img, mx, my, w - 2 * mx, h - 2 * my);
    EXPECT_LE(HammingDistance(CentrePerceptualHash(img), PerceptualHash(centre)), 4) << w;
    const RegionHashes all = HashRegions(img);
    EXPECT_EQ(all.phash[0], PerceptualHash(img)) << w;
    EXPECT_EQ(all.phash[1], CentrePerceptualHash(img)) << w;
    for (int r = 0; r < kHashRegions; ++r) {
      const Reference ref = ReferenceHashes(img, kHashRegionBounds[r]);
      EXPECT_EQ(all.phash[r], ref.phash) << w << " region " << r;
      EXPECT_EQ(all.detail[r], ref.detail) << w << " region " << r;
    }
  }
  EXPECT_EQ(CentrePerceptualHash(Image()), 0u);
}

// The mirror hashes are the whole image's hashes of the picture mirrored
// left to right: exactly where the block plane is one pixel a block (up to
// 128 a side: the plane is then mirrored too), within a few bits beyond
// (blocks are cut from the left, so a flip moves their edges), and the
// same from both builds. A picture that is its own mirror has mirror ==
// phash[0].
TEST(PerceptualHashTest, MirrorHashesAreTheHashesOfTheMirroredPicture) {
  for (int w : {3, 40, 97, 128}) {
    const Image img = SyntheticPhoto(w, 20 + w / 2, static_cast<uint64_t>(w));
    const RegionHashes h = HashRegions(img), flipped = HashRegions(testing::MirrorOf(img));
    EXPECT_EQ(h.mirror, flipped.phash[0]) << w;
    EXPECT_EQ(h.mirror_detail, flipped.detail[0]) << w;
    EXPECT_EQ(flipped.mirror, h.phash[0]) << w;
    EXPECT_NE(h.mirror, h.phash[0]) << w;  // a photo is not its own mirror
    EXPECT_EQ(h.mirror, ReferenceHashes(testing::MirrorOf(img)).phash) << w;
  }
  for (int w : {129, 400, 1001, 1500}) {
    const Image img = SyntheticPhoto(w, 30 + w / 3, static_cast<uint64_t>(w));
    const RegionHashes h = HashRegions(img), flipped = HashRegions(testing::MirrorOf(img));
    EXPECT_LE(HammingDistance(h.mirror, flipped.phash[0]), 4) << w;
    EXPECT_LE(HammingDistance(h.mirror_detail, flipped.detail[0]), 24) << w;
    EXPECT_GT(HammingDistance(h.mirror, h.phash[0]), 12) << w;
    if (HashImplAvailable(HashImpl::kAvx2)) {
      const RegionHashes portable = HashRegionsWith(HashImpl::kPortable, img);
      const RegionHashes avx2 = HashRegionsWith(HashImpl::kAvx2, img);
      EXPECT_EQ(portable.mirror, avx2.mirror) << w;
      EXPECT_EQ(portable.mirror_detail, avx2.mirror_detail) << w;
    }
  }
  Image symmetric(64, 48, 3);
  for (int y = 0; y < 48; ++y) {
    for (int x = 0; x < 64; ++x) {
      for (int c = 0; c < 3; ++c) symmetric.row(y)[x * 3 + c] = static_cast<uint8_t>(std::abs(2 * x - 63) * 3 + y * c);
    }
  }
  const RegionHashes s = HashRegions(symmetric);
  EXPECT_EQ(s.mirror, s.phash[0]);
  EXPECT_EQ(s.mirror_detail, s.detail[0]);
  EXPECT_EQ(HashRegions(Image()).mirror, 0u);
}

// The implementations give the same bits: every size from 1 to 300 pixels
// a side in steps that cross the block sizes (k = 1, 2, 3) and the AVX2
// block sums' 16-pixel steps, odd and even, RGB and the other layouts.
TEST(PerceptualHashTest, EveryImplementationGivesTheSameBits) {
  if (!HashImplAvailable(HashImpl::kAvx2)) GTEST_SKIP() << "no AVX2 on this CPU";
  EXPECT_EQ(ActiveHashImpl(), HashImpl::kAvx2);
  for (int w = 1; w <= 300; w += 7) {
    const int h = 1 + (w * 37) % 300;
    const Image rgb = SyntheticPhoto(w, h, static_cast<uint64_t>(w));
    Image rgba(w, h, 4), gray(w, h, 1);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        for (int c = 0; c < 3; ++c) rgba.row(y)[x * 4 + c] = rgb.row(y)[x * 3 + c];
        rgba.row(y)[x * 4 + 3] = static_cast<uint8_t>(x + y);
        gray.row(y)[x] = rgb.row(y)[x * 3 + 1];
      }
    }
    for (const Image* img : {&rgb, static_cast<const Image*>(&rgba), static_cast<const Image*>(&gray)}) {
      const RegionHashes portable = HashRegionsWith(HashImpl::kPortable, *img);
      const RegionHashes avx2 = HashRegionsWith(HashImpl::kAvx2, *img);
      EXPECT_EQ(portable.phash, avx2.phash) << w << "x" << h << "x" << img->channels();
      EXPECT_EQ(portable.detail, avx2.detail) << w << "x" << h << "x" << img->channels();
      for (int r = 0; r < kHashRegions; ++r) {
        EXPECT_EQ(portable.tone[r].mean, avx2.tone[r].mean) << w << "x" << h << "x" << img->channels();
        EXPECT_EQ(portable.tone[r].contrast, avx2.tone[r].contrast) << w << "x" << h << "x" << img->channels();
      }
    }
  }
}

// The same picture in another layout: 0 RGB8 as is, 1 gray8 (the green
// channel), 2 gray + alpha, 3 RGBA8, 4 RGB16, 5 gray16 (samples * 257 plus
// a low byte that the hash ignores).
Image LayoutOf(const Image& rgb, int layout) {
  static constexpr int kChannels[] = {3, 1, 2, 4, 3, 1};
  if (layout == 0) return rgb;
  const int w = rgb.width(), h = rgb.height(), ch = kChannels[layout];
  Image out(w, h, ch, layout >= 4 ? 16 : 8);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const uint8_t* p = rgb.row(y) + x * 3;
      for (int c = 0; c < ch; ++c) {
        const uint8_t v = ch < 3 ? (c == 0 ? p[1] : static_cast<uint8_t>(x * 7 + y)) : c < 3 ? p[c] : uint8_t{200};
        if (layout >= 4) {
          out.samples16()[(static_cast<size_t>(y) * w + x) * ch + c] = static_cast<uint16_t>(v * 257 + (x + c) % 3);
        } else {
          out.row(y)[x * ch + c] = v;
        }
      }
    }
  }
  return out;
}

// Every bit HashRegions gives for `images` (phash, detail and tone of every
// region, little-endian), the portable and AVX2 builds checked equal first,
// as one SHA-256.
std::string DigestOf(const std::vector<Image>& images) {
  std::string bytes;
  auto put = [&bytes](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes.push_back(static_cast<char>(v >> (8 * i)));
  };
  for (const Image& img : images) {
    const RegionHashes h = HashRegionsWith(HashImpl::kPortable, img);
    if (HashImplAvailable(HashImpl::kAvx2)) {
      const RegionHashes avx2 = HashRegionsWith(HashImpl::kAvx2, img);
      EXPECT_EQ(h.phash, avx2.phash) << img.width() << "x" << img.height() << "x" << img.channels();
      EXPECT_EQ(h.detail, avx2.detail) << img.width() << "x" << img.height() << "x" << img.channels();
      for (int r = 0; r < kHashRegions; ++r) {
        EXPECT_EQ(h.tone[r].mean, avx2.tone[r].mean) << img.width() << "x" << img.height() << " region " << r;
        EXPECT_EQ(h.tone[r].contrast, avx2.tone[r].contrast) << img.width() << "x" << img.height() << " region " << r;
      }
    }
    for (int r = 0; r < kHashRegions; ++r) {
      put(h.phash[r], 8);
      for (uint64_t w : h.detail[r]) put(w, 8);
      put(h.tone[r].mean, 2);
      put(h.tone[r].contrast, 2);
    }
  }
  return util::Sha256Hex(bytes);
}

// Golden bits: every region's phash, detail and tone of pictures of many
// sizes (1 to 1,500 a side: every block size, sampled blocks, short last
// blocks) in every layout, as computed when the hash was defined (main at
// 878353e). A faster hash must give these bits exactly.
TEST(PerceptualHashTest, GoldenBitsOfManySizesAndLayouts) {
  std::vector<Image> images;
  for (int i = 0; i < 160; ++i) {
    const int w = 1 + (i * 97) % 700 + (i % 9 == 0 ? 800 : 0), h = 1 + (i * 61 + 13) % 600 + (i % 11 == 0 ? 700 : 0);
    images.push_back(LayoutOf(SyntheticPhoto(w, h, static_cast<uint64_t>(i)), i % 6));
  }
  // Coefficients with many ties: flat (all AC keys nearly or exactly
  // equal), two levels, a few levels.
  for (int levels : {1, 2, 3, 5}) {
    Image img(150, 97, 3);
    for (int y = 0; y < img.height(); ++y) {
      for (int x = 0; x < img.width(); ++x) {
        for (int c = 0; c < 3; ++c)
          img.row(y)[x * 3 + c] = static_cast<uint8_t>(40 + 50 * ((x / 37 + y / 29) % levels));
      }
    }
    images.push_back(img);
  }
  EXPECT_EQ(DigestOf(images), "70be43d0e272cbe0b0fc251127831c6a4be13d409f7f4e1cde363d30f562eead");
}

// The same for real pictures: 300 crops of the wallpapers (100..360 a
// side), each as is and once resized (to 224x224, the converter's usual
// output, or to an odd size from a third to three times its own) in one of
// the layouts.
TEST(PerceptualHashTest, GoldenBitsOfWallpaperCrops) {
  StatusOr<std::vector<testing::CorpusImage>> corpus = testing::WallpaperCrops(300);
  if (!corpus.ok()) {
    if (testing::WallpapersRequired()) FAIL() << corpus.status().message();
    GTEST_SKIP() << corpus.status().message() << " (tools/setup.sh --wallpapers installs plasma-workspace-wallpapers)";
  }
  std::vector<Image> images;
  for (size_t i = 0; i < corpus->size(); ++i) {
    const Image& crop = (*corpus)[i].pixels;
    images.push_back(crop);
    const double f = i % 2 == 0 ? 0 : 0.34 + 0.0089 * static_cast<double>(i % 300);
    const int w = f == 0 ? 224 : static_cast<int>(crop.width() * f) | 1;
    const int h = f == 0 ? 224 : static_cast<int>(crop.height() * f) | 1;
    StatusOr<Image> resized = Resize(crop, w, h, Filter::kBilinear);
    ASSERT_TRUE(resized.ok()) << resized.status().message();
    images.push_back(LayoutOf(*resized, static_cast<int>(i % 6)));
  }
  EXPECT_EQ(DigestOf(images), "2e2750eb770f169232f82cf0f33c4b60a56d0e4b38e2664010bf6716b2340b9d");
}

// RegionTone by its definition: a flat picture has its level as mean and no
// contrast; columns of a rounded cosine over the 32 grid columns (each 8
// pixels, constant down the rows) have the mean of its values and, as
// contrast, the root of the squared orthonormal 1-D DCT coefficients 1..15
// over 32 (the grid's other coefficients are 0).
TEST(PerceptualHashTest, TonesAreMeanAndLowPassedContrast) {
  Image flat(90, 70, 3);
  std::fill(flat.data(), flat.data() + flat.byte_size(), uint8_t{100});
  for (const RegionTone& t : HashRegions(flat).tone) {
    EXPECT_EQ(t.mean, 100 * 256);
    EXPECT_EQ(t.contrast, 0);
  }
  Image waves(256, 64, 1);
  double g[32], mean = 0;
  for (int x = 0; x < 32; ++x) {
    g[x] = std::round(128 + 50 * std::cos((2 * x + 1) * M_PI / 64));
    mean += g[x] / 32;
  }
  for (int y = 0; y < 64; ++y) {
    for (int x = 0; x < 256; ++x) waves.row(y)[x] = static_cast<uint8_t>(g[x / 8]);
  }
  double squares = 0;
  for (int u = 1; u < 16; ++u) {
    double c = 0;
    for (int x = 0; x < 32; ++x) c += g[x] * std::cos((2 * x + 1) * u * M_PI / 64);
    squares += c * c * 2 / 32;
  }
  const RegionTone t = HashRegions(waves).tone[0];
  EXPECT_NEAR(t.mean, mean * 256, 1);
  EXPECT_NEAR(t.contrast, std::sqrt(squares / 32) * 256, 1);
  EXPECT_NEAR(t.contrast, 50 / std::sqrt(2.0) * 256, 0.5 * 256);  // the cosine's own: 35.4 gray levels
}

TEST(PerceptualHashTest, SmallImagesAndEmptyOnes) {
  for (int w : {5, 31, 33}) {  // (a 1-pixel-wide picture is flat: its bits are rounding)
    const Image img = SyntheticPhoto(w, 3 + w / 2, static_cast<uint64_t>(w));
    EXPECT_EQ(PerceptualHash(img), ReferenceHash(img)) << w;
  }
  EXPECT_EQ(PerceptualHash(Image()), 0u);
}

// Gray stored as gray, as RGB, with alpha, in 16 bits: one picture, one hash.
TEST(PerceptualHashTest, EveryLayoutOfOnePictureHashesAlike) {
  const Image rgb = SyntheticPhoto(120, 90, 3);
  Image gray(120, 90, 1), gray_rgb(120, 90, 3), rgba(120, 90, 4), gray16(120, 90, 1, 16), rgb16(120, 90, 3, 16);
  for (int y = 0; y < 90; ++y) {
    for (int x = 0; x < 120; ++x) {
      const uint8_t* p = rgb.row(y) + x * 3;
      const uint8_t g = static_cast<uint8_t>((77 * p[0] + 150 * p[1] + 29 * p[2]) >> 8);
      gray.row(y)[x] = g;
      for (int c = 0; c < 3; ++c) gray_rgb.row(y)[x * 3 + c] = g;
      for (int c = 0; c < 3; ++c) rgba.row(y)[x * 4 + c] = p[c];
      rgba.row(y)[x * 4 + 3] = static_cast<uint8_t>(x);
      gray16.samples16()[y * 120 + x] = static_cast<uint16_t>(g * 257);
      for (int c = 0; c < 3; ++c) rgb16.samples16()[(y * 120 + x) * 3 + c] = static_cast<uint16_t>(p[c] * 257 + 3);
    }
  }
  EXPECT_EQ(PerceptualHash(rgba), PerceptualHash(rgb));
  EXPECT_EQ(PerceptualHash(rgb16), PerceptualHash(rgb));
  EXPECT_EQ(PerceptualHash(gray_rgb), PerceptualHash(gray));
  EXPECT_EQ(PerceptualHash(gray16), PerceptualHash(gray));
  // Gray from the picture's own luma rounds each pixel down: at most a bit or two moves.
  EXPECT_LE(HammingDistance(PerceptualHash(gray), PerceptualHash(rgb)), 2);
}

// Re-encodes and resized copies stay well inside the default distance (8),
// 1,000 distinct pictures well outside it. (5 % crops of these synthetic
// pictures move 14-22 bits: their large shapes shift against the grid; the
// default does not reach them.)
TEST(PerceptualHashTest, CopiesAreCloseDistinctPicturesFar) {
  int worst_q60 = 0, worst_scale = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const Image img = SyntheticPhoto(400, 300, seed);
    const uint64_t h = PerceptualHash(img);
    worst_q60 = std::max(worst_q60, HammingDistance(h, PerceptualHash(Reencoded(img, 60))));
    for (double f : {0.5, 0.6, 0.7, 0.8, 0.9}) {
      worst_scale = std::max(worst_scale, HammingDistance(h, PerceptualHash(Scaled(img, f))));
    }
  }
  std::vector<uint64_t> hashes;
  for (uint64_t seed = 1000; seed < 2000; ++seed) hashes.push_back(PerceptualHash(SyntheticPhoto(160, 120, seed)));
  int closest = 64;
  for (size_t i = 0; i < hashes.size(); ++i) {
    for (size_t j = i + 1; j < hashes.size(); ++j) closest = std::min(closest, HammingDistance(hashes[i], hashes[j]));
  }
  EXPECT_LE(worst_q60, 4);
  EXPECT_LE(worst_scale, 6);
  EXPECT_GE(closest, 10);
}

}  // namespace
}  // namespace libshard::image
