#include "libshard/reader/batch_layout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace libshard::reader {
namespace {

TEST(BatchLayoutTest, DoubleToHalfKnownAnswers) {
  EXPECT_EQ(DoubleToHalf(0.0), 0x0000);
  EXPECT_EQ(DoubleToHalf(-0.0), 0x8000);
  EXPECT_EQ(DoubleToHalf(1.0), 0x3C00);
  EXPECT_EQ(DoubleToHalf(-2.0), 0xC000);
  EXPECT_EQ(DoubleToHalf(0.1), 0x2E66);  // 0.0999755859375
  EXPECT_EQ(DoubleToHalf(1.0 / 3.0), 0x3555);
  EXPECT_EQ(DoubleToHalf(65504.0), 0x7BFF);                         // the largest half
  EXPECT_EQ(DoubleToHalf(65519.0), 0x7BFF);                         // rounds down to it
  EXPECT_EQ(DoubleToHalf(65520.0), 0x7C00);                         // rounds up to inf
  EXPECT_EQ(DoubleToHalf(std::ldexp(1.0, -24)), 0x0001);            // the smallest subnormal
  EXPECT_EQ(DoubleToHalf(std::ldexp(1.0, -25)), 0x0000);            // a tie: to even (0)
  EXPECT_EQ(DoubleToHalf(std::ldexp(3.0, -25)), 0x0002);            // a tie: to even (2)
  EXPECT_EQ(DoubleToHalf(std::ldexp(1.0, -14)), 0x0400);            // the smallest normal
  EXPECT_EQ(DoubleToHalf(1.0 + std::ldexp(1.0, -11)), 0x3C00);      // a tie: to even
  EXPECT_EQ(DoubleToHalf(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);  // a tie: to even
  EXPECT_EQ(DoubleToHalf(2047.5 / 1024.0), 0x3FFF + 1);             // mantissa carries into the exponent
}

TEST(BatchLayoutTest, NchwFloatIsNormalisedAndTransposed) {
  const int H = 2, W = 3, C = 3;
  std::vector<uint8_t> hwc(H * W * C);  // all 256 values would need more pixels: 18 spread ones
  for (size_t i = 0; i < hwc.size(); ++i) hwc[i] = static_cast<uint8_t>(i * 13 + 7);
  const std::vector<double> mean = {0.485, 0.456, 0.406}, sd = {0.229, 0.224, 0.225};
  auto conv = SampleConverter::Create(Layout::kNCHW, PixelType::kFloat32, mean, sd, H, W, C);
  ASSERT_TRUE(conv.ok()) << conv.status();
  ASSERT_EQ(conv->sample_bytes(), size_t{H * W * C * 4});
  EXPECT_FALSE(conv->identity());
  std::vector<float> out(H * W * C);
  conv->Convert(hwc.data(), out.data());
  for (int c = 0; c < C; ++c)
    for (int p = 0; p < H * W; ++p) {
      const double want = (hwc[p * C + c] / 255.0 - mean[c]) / sd[c];
      EXPECT_NEAR(out[c * H * W + p], want, 1e-6) << "c=" << c << " p=" << p;
    }
}

TEST(BatchLayoutTest, NhwcHalfAndUint8Nchw) {
  const int H = 1, W = 4, C = 3;
  std::vector<uint8_t> hwc = {0, 1, 2, 3, 4, 5, 6, 7, 8, 255, 128, 9};
  auto half = SampleConverter::Create(Layout::kNHWC, PixelType::kFloat16, {}, {}, H, W, C);
  ASSERT_TRUE(half.ok());
  std::vector<uint16_t> h(hwc.size());
  half->Convert(hwc.data(), h.data());
  for (size_t i = 0; i < hwc.size(); ++i) EXPECT_EQ(h[i], DoubleToHalf(hwc[i] / 255.0)) << i;
  EXPECT_EQ(h[9], 0x3C00);
  auto u8 = SampleConverter::Create(Layout::kNCHW, PixelType::kUint8, {}, {}, H, W, C);
  ASSERT_TRUE(u8.ok());
  std::vector<uint8_t> planar(hwc.size());
  u8->Convert(hwc.data(), planar.data());
  EXPECT_EQ(planar, (std::vector<uint8_t>{0, 3, 6, 255, 1, 4, 7, 128, 2, 5, 8, 9}));
  auto id = SampleConverter::Create(Layout::kNHWC, PixelType::kUint8, {}, {}, H, W, C);
  ASSERT_TRUE(id.ok());
  EXPECT_TRUE(id->identity());
}

TEST(BatchLayoutTest, RejectsBadArgumentsNamingThem) {
  auto msg = [](StatusOr<SampleConverter> s) { return s.ok() ? std::string("ok") : s.status().ToString(); };
  EXPECT_NE(msg(SampleConverter::Create(Layout::kNHWC, PixelType::kUint8, {0.5, 0.5, 0.5}, {}, 2, 2, 3))
                .find("mean/std: normalisation needs dtype float32 or float16"),
            std::string::npos);
  EXPECT_NE(msg(SampleConverter::Create(Layout::kNHWC, PixelType::kFloat32, {0.5, 0.5}, {}, 2, 2, 3))
                .find("mean: 2 values for 3 channel(s)"),
            std::string::npos);
  EXPECT_NE(msg(SampleConverter::Create(Layout::kNHWC, PixelType::kFloat32, {}, {1, 0, 1}, 2, 2, 3))
                .find("std: 0.000000 (values must be finite and non-zero)"),
            std::string::npos);
  EXPECT_NE(ParseLayout("CHW").status().ToString().find("layout: unknown layout \"CHW\" (expected NHWC or NCHW)"),
            std::string::npos);
  EXPECT_NE(ParsePixelType("int8").status().ToString().find("dtype: unknown dtype \"int8\""), std::string::npos);
}

// issue 21: std=1e-300 or mean=1e300 put +-inf into batches.
TEST(BatchLayoutTest, RefusesNormalisationWhoseResultsAreNotFiniteInTheDtype) {
  auto msg = [](StatusOr<SampleConverter> s) { return s.ok() ? std::string("ok") : std::string(s.status().message()); };
  EXPECT_EQ(msg(SampleConverter::Create(Layout::kNCHW, PixelType::kFloat32, {}, {1e-300}, 2, 2, 1)),
            "mean/std: channel 0 (mean 0, std 1e-300) gives 1e+300 for pixel value 255, beyond float32's range "
            "(largest 3.40282e+38): (x / 255 - mean) / std must be finite in the chosen dtype");
  EXPECT_EQ(msg(SampleConverter::Create(Layout::kNCHW, PixelType::kFloat32, {0.5, 1e300, 0.5}, {}, 2, 2, 3)),
            "mean/std: channel 1 (mean 1e+300, std 1) gives -1e+300 for pixel value 255, beyond float32's range "
            "(largest 3.40282e+38): (x / 255 - mean) / std must be finite in the chosen dtype");
  // float16's range is far smaller: 1 / 1e-5 = 1e5 > 65504.
  EXPECT_EQ(msg(SampleConverter::Create(Layout::kNHWC, PixelType::kFloat16, {}, {1e-5}, 2, 2, 1)),
            "mean/std: channel 0 (mean 0, std 1e-05) gives 100000 for pixel value 255, beyond float16's range "
            "(largest 65504): (x / 255 - mean) / std must be finite in the chosen dtype");
  EXPECT_EQ(msg(SampleConverter::Create(Layout::kNHWC, PixelType::kFloat32, {}, {1e-5}, 2, 2, 1)), "ok");
  EXPECT_EQ(msg(SampleConverter::Create(Layout::kNHWC, PixelType::kFloat16, {}, {1.0 / 65000}, 2, 2, 1)), "ok");
  // Every value a converter accepts converts to finite numbers.
  for (PixelType t : {PixelType::kFloat32, PixelType::kFloat16}) {
    for (double sd : {1e-3, 1.0 / 255 / 60000, 1e-30, 1e30}) {
      auto conv = SampleConverter::Create(Layout::kNHWC, t, {0.25}, {sd}, 1, 256, 1);
      if (!conv.ok()) continue;
      std::vector<uint8_t> hwc(256);
      for (int x = 0; x < 256; ++x) hwc[x] = static_cast<uint8_t>(x);
      std::vector<uint8_t> out(conv->sample_bytes());
      conv->Convert(hwc.data(), out.data());
      for (int x = 0; x < 256; ++x) {
        const double v = t == PixelType::kFloat32
                             ? reinterpret_cast<const float*>(out.data())[x]
                             : ((reinterpret_cast<const uint16_t*>(out.data())[x] & 0x7C00) == 0x7C00 ? INFINITY : 0.0);
        EXPECT_TRUE(std::isfinite(v)) << PixelTypeName(t) << " std " << sd << " x " << x;
      }
    }
  }
}

TEST(BatchLayoutTest, RefusesValuesOnThe0To255Scale) {
  auto mean = SampleConverter::Create(Layout::kNCHW, PixelType::kFloat32, {123.675, 116.28, 103.53}, {}, 4, 4, 3);
  ASSERT_EQ(mean.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(mean.status().message()).find("mean: 123.675 looks like the 0..255 scale"), std::string::npos)
      << mean.status();
  auto sd = SampleConverter::Create(Layout::kNCHW, PixelType::kFloat32, {}, {58.395, 57.12, 57.375}, 4, 4, 3);
  ASSERT_EQ(sd.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(sd.status().message()).find("std: 58.395"), std::string::npos) << sd.status();
  // torchvision's ImageNet values, and the edges of the 0..1 scale, are fine.
  EXPECT_TRUE(
      SampleConverter::Create(Layout::kNCHW, PixelType::kFloat32, {0.485, 0.456, 0.406}, {0.229, 0.224, 0.225}, 4, 4, 3)
          .ok());
  EXPECT_TRUE(
      SampleConverter::Create(Layout::kNHWC, PixelType::kFloat16, {1.0, 0.0, -1.0}, {1.0, 1.0, 1.0}, 4, 4, 3).ok());
}

}  // namespace
}  // namespace libshard::reader
