// The resample as random-resized-crop drives it: a new fractional box every
// call (so the AVX2 horizontal plan, kept per thread, is rebuilt or reused
// call after call), shrinks between 1 and 4 (the sliding-load layout), and
// the mirrored output a random flip asks for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "libshard/image/resize.h"

namespace libshard::image {
namespace {

Image Noise(int w, int h, int c, std::mt19937& rng) {
  Image img(w, h, c);
  for (size_t i = 0; i < img.byte_size(); ++i) img.data()[i] = static_cast<uint8_t>(rng());
  return img;
}

Image MirrorOf(const Image& img) {
  Image out(img.width(), img.height(), img.channels(), img.bit_depth());
  const int px = img.channels() * img.bytes_per_sample();
  for (int y = 0; y < img.height(); ++y) {
    for (int x = 0; x < img.width(); ++x) {
      std::memcpy(out.row(y) + static_cast<size_t>(img.width() - 1 - x) * px, img.row(y) + static_cast<size_t>(x) * px,
                  px);
    }
  }
  return out;
}

::testing::AssertionResult Same(const Image& want, const Image& got) {
  if (want.width() != got.width() || want.height() != got.height() || want.channels() != got.channels()) {
    return ::testing::AssertionFailure() << "wrong shape";
  }
  for (size_t i = 0; i < want.byte_size(); ++i) {
    if (want.data()[i] != got.data()[i]) {
      const size_t px = i / want.channels() / want.bytes_per_sample();
      return ::testing::AssertionFailure()
             << "sample " << i << " (pixel " << px % want.width() << "," << px / want.width() << "): want "
             << int(want.data()[i]) << ", got " << int(got.data()[i]);
    }
  }
  return ::testing::AssertionSuccess();
}

// A box like RandomResizedCropBox's, at fractional coordinates as a DCT
// scaled region gives them: width w_frac of the image, aspect 3/4 .. 4/3.
ResampleBox RandomBox(const Image& src, std::mt19937& rng) {
  std::uniform_real_distribution<double> unit(0, 1);
  const double w = src.width() * (0.3 + 0.7 * unit(rng));
  const double h = std::min<double>(src.height(), w * (0.75 + 0.58 * unit(rng)));
  const double x0 = (src.width() - w) * unit(rng), y0 = (src.height() - h) * unit(rng);
  return {x0, y0, x0 + w, y0 + h};
}

class ResampleCropTest : public ::testing::TestWithParam<ResampleImpl> {
 protected:
  void SetUp() override {
    if (!ResampleImplAvailable(GetParam())) GTEST_SKIP() << ResampleImplName(GetParam()) << " not available";
  }
};

TEST_P(ResampleCropTest, RandomCropBoxesAreTheReferenceBytesMirroredOrNot) {
  // Many boxes in a row on one thread: each call builds the horizontal plan
  // for a new box, or reuses the one just built (the repeated boxes), and
  // both must give the reference's bytes.
  std::mt19937 rng(29);
  const Filter filters[] = {Filter::kBilinear, Filter::kBox, Filter::kBicubic, Filter::kLanczos3};
  for (int c = 1; c <= 4; ++c) {
    const Image src = Noise(512, 496, c, rng);
    for (int i = 0; i < 48; ++i) {
      const Filter f = filters[i % 4];
      const ResampleBox box = RandomBox(src, rng);
      const int out = i % 5 == 0 ? 97 : 224;
      SCOPED_TRACE(std::string(FilterName(f)) + " channels " + std::to_string(c) + " box " + std::to_string(box.x0) +
                   "," + std::to_string(box.y0) + " - " + std::to_string(box.x1) + "," + std::to_string(box.y1) +
                   " -> " + std::to_string(out));
      StatusOr<Image> want = ResampleWith(ResampleImpl::kReference, src, box, out, out, f);
      ASSERT_TRUE(want.ok()) << want.status();
      for (int repeat = 0; repeat < 2; ++repeat) {  // a new plan, then the same plan again
        StatusOr<Image> got = ResampleWith(GetParam(), src, box, out, out, f);
        ASSERT_TRUE(got.ok()) << got.status();
        ASSERT_TRUE(Same(*want, *got)) << "repeat " << repeat;
      }
      StatusOr<Image> mirrored = ResampleWith(GetParam(), src, box, out, out, f, /*mirror=*/true);
      ASSERT_TRUE(mirrored.ok()) << mirrored.status();
      ASSERT_TRUE(Same(MirrorOf(*want), *mirrored)) << "mirrored";
    }
  }
}

TEST_P(ResampleCropTest, MirrorOnEveryPathIsTheFlippedResult) {
  // Small random shapes through every branch: both passes, one pass only,
  // no pass at all (the mirror then runs an identity horizontal pass),
  // nearest, alpha (premultiplied), 16-bit.
  std::mt19937 rng(2029);
  const Filter filters[] = {Filter::kNearest, Filter::kBox, Filter::kBilinear, Filter::kBicubic, Filter::kLanczos3};
  for (int iter = 0; iter < 300; ++iter) {
    const int c = 1 + iter % 4;
    const int in_w = 1 + rng() % 60, in_h = 1 + rng() % 60;
    int w = 1 + rng() % 50, h = 1 + rng() % 50;
    if (iter % 5 == 0) w = in_w;
    if (iter % 7 == 0) h = in_h;
    const Filter f = filters[rng() % 5];
    Image src = Noise(in_w, in_h, c, rng);
    if (iter % 11 == 0) {
      src = Image(in_w, in_h, c, 16);
      for (size_t i = 0; i < src.byte_size(); ++i) src.data()[i] = static_cast<uint8_t>(rng());
    }
    ResampleBox box{0, 0, double(in_w), double(in_h)};
    if (iter % 3 == 1) box = RandomBox(src, rng);
    SCOPED_TRACE(std::to_string(in_w) + "x" + std::to_string(in_h) + "x" + std::to_string(c) + " -> " +
                 std::to_string(w) + "x" + std::to_string(h) + " " + FilterName(f));
    StatusOr<Image> plain = ResampleWith(GetParam(), src, box, w, h, f);
    StatusOr<Image> mirrored = ResampleWith(GetParam(), src, box, w, h, f, /*mirror=*/true);
    ASSERT_TRUE(plain.ok() && mirrored.ok());
    ASSERT_TRUE(Same(MirrorOf(*plain), *mirrored));
  }
}

TEST(ResampleIntoTest, MirroredIntoTheCallersBufferIsResampleWithMirror) {
  std::mt19937 rng(7);
  const Image src = Noise(300, 280, 3, rng);
  const ResampleBox box{17.5, 9.25, 281.0, 240.75};
  StatusOr<Image> want = ResampleWith(ActiveResampleImpl(), src, box, 224, 224, Filter::kBilinear, true);
  ASSERT_TRUE(want.ok());
  std::vector<uint8_t> out(224 * 224 * 3, 0xAB);
  ASSERT_TRUE(ResampleInto(src, box, 224, 224, Filter::kBilinear, out.data(), /*mirror=*/true).ok());
  EXPECT_EQ(0, std::memcmp(out.data(), want->data(), out.size()));
}

INSTANTIATE_TEST_SUITE_P(AllImpls, ResampleCropTest, ::testing::Values(ResampleImpl::kReference, ResampleImpl::kAvx2),
                         [](const auto& info) { return std::string(ResampleImplName(info.param)); });

}  // namespace
}  // namespace libshard::image
