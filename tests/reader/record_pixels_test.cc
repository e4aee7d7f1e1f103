// Record pixels (reader/record_pixels.h): an image record into a batch slot
// with the loader's geometry, called directly (batch_loader_test.cc checks
// the same paths through the loader).
#include "libshard/reader/record_pixels.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "libshard/example/example_builder.h"
#include "libshard/example/example_view.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/decode.h"
#include "libshard/image/encode.h"
#include "libshard/image/raw_array.h"
#include "reader_fixtures.h"

namespace libshard::reader {
namespace {

constexpr int kW = 16, kH = 12;

// An index mask of kW x kH: class (x / 4 + y / 3) % 5.
image::Image Mask() {
  image::Image m(kW, kH, 1);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) m.row(y)[x] = static_cast<uint8_t>((x / 4 + y / 3) % 5);
  return m;
}

// A record of `encoded` (format "" = detected) with the PNG mask of Mask().
struct Record {
  std::string bytes;
  example::ImageRecord rec;
};

void MakeRecord(const std::string& encoded, const std::string& format, const image::Image* raw_shape, Record* out) {
  example::ExampleBuilder b;
  b.AddBytes(keys::kEncoded, encoded);
  if (!format.empty()) b.AddBytes(keys::kFormat, format);
  if (raw_shape != nullptr) {
    const int64_t shape[3] = {raw_shape->height(), raw_shape->width(), raw_shape->channels()};
    b.AddInt64List(keys::kShape, shape, 3);
    b.AddBytes(keys::kDtype, "uint8");
  }
  b.AddInt64(keys::kLabel, 3);
  b.AddBytes(keys::kMaskEncoded, *image::EncodePng(Mask()));
  out->bytes = b.Serialize();
  auto ex = example::ExampleView::Parse(out->bytes);
  ASSERT_TRUE(ex.ok()) << ex.status();
  auto rec = example::ParseImageRecord(*ex, example::ImageRecordKeys{}, {});
  ASSERT_TRUE(rec.ok()) << rec.status();
  out->rec = *rec;
}

PixelRequest Request(int width, int height) {
  PixelRequest r;
  r.width = width;
  r.height = height;
  return r;
}

TEST(RecordPixelsTest, AnImageOfTheSlotsSizeIsCopiedAsDecoded) {
  const image::Image img = testing::PatternImage(kW, kH, 3, 1);
  Record r;
  ASSERT_NO_FATAL_FAILURE(MakeRecord(*image::EncodePng(img), "png", nullptr, &r));
  std::vector<uint8_t> px(kW * kH * 3), mask(kW * kH);
  ASSERT_TRUE(DecodeRecordPixels(r.rec, {}, {}, Request(kW, kH), px.data(), mask.data()).ok());
  EXPECT_EQ(std::string(px.begin(), px.end()), std::string(img.data(), img.data() + img.byte_size()));
  const image::Image m = Mask();
  EXPECT_EQ(std::string(mask.begin(), mask.end()), std::string(m.data(), m.data() + m.byte_size()));

  // A raw uint8 array of the slot's shape goes straight in.
  Record raw;
  ASSERT_NO_FATAL_FAILURE(MakeRecord(*image::EncodeRaw(img, {}), "raw.zst", &img, &raw));
  std::vector<uint8_t> rpx(px.size());
  ASSERT_TRUE(DecodeRecordPixels(raw.rec, {}, {}, Request(kW, kH), rpx.data(), nullptr).ok());
  EXPECT_EQ(rpx, px);

  // No geometry asked for, another size: refused, naming both sizes.
  std::vector<uint8_t> wide((kW + 2) * kH * 3);
  const Status s = DecodeRecordPixels(r.rec, {}, {}, Request(kW + 2, kH), wide.data(), nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "the image came out 16x12x3 (8-bit), the batch needs 18x12x3 8-bit");
}

TEST(RecordPixelsTest, FlipMirrorsTheImageAndTheMask) {
  const image::Image img = testing::PatternImage(kW, kH, 3, 2);
  Record r;
  ASSERT_NO_FATAL_FAILURE(MakeRecord(*image::EncodePng(img), "", nullptr, &r));
  PixelRequest req = Request(kW, kH);
  req.flip = true;
  std::vector<uint8_t> px(kW * kH * 3), mask(kW * kH);
  ASSERT_TRUE(DecodeRecordPixels(r.rec, {}, {}, req, px.data(), mask.data()).ok());
  const image::Image m = Mask();
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) {
      for (int c = 0; c < 3; ++c) ASSERT_EQ(px[(y * kW + x) * 3 + c], img.row(y)[(kW - 1 - x) * 3 + c]);
      ASSERT_EQ(mask[y * kW + x], m.row(y)[kW - 1 - x]);
    }
}

TEST(RecordPixelsTest, LetterboxPadsTheMaskWithMaskFill) {
  // 16x12 into 16x16: 2 rows of padding above and below.
  Record r;
  ASSERT_NO_FATAL_FAILURE(MakeRecord(*image::EncodePng(testing::PatternImage(kW, kH, 3, 3)), "png", nullptr, &r));
  PixelRequest req = Request(kW, kW);
  req.spec.mode = image::ResizeMode::kLetterbox;
  req.spec.width = req.spec.height = kW;
  req.mask_fill = 255;
  std::vector<uint8_t> px(kW * kW * 3), mask(kW * kW);
  ASSERT_TRUE(DecodeRecordPixels(r.rec, {}, {}, req, px.data(), mask.data()).ok());
  const image::Image m = Mask();
  for (int y = 0; y < kW; ++y)
    for (int x = 0; x < kW; ++x) {
      const bool pad = y < 2 || y >= 2 + kH;
      ASSERT_EQ(mask[y * kW + x], pad ? 255 : m.row(y - 2)[x]) << x << "," << y;
    }
}

TEST(RecordPixelsTest, CropDecodeGivesTheFullDecodesPixels) {
  const image::Image big = testing::PatternImage(96, 80, 3, 4);
  Record r;
  ASSERT_NO_FATAL_FAILURE(MakeRecord(*image::EncodeJpeg(big), "jpeg", nullptr, &r));
  for (image::Filter f : {image::Filter::kBilinear, image::Filter::kLanczos3}) {
    PixelRequest req = Request(12, 10);
    req.spec.mode = image::ResizeMode::kStretch;
    req.spec.width = 12;
    req.spec.height = 10;
    req.spec.filter = f;
    req.spec.crop = image::PixelRect{37, 21, 50, 44};
    std::vector<uint8_t> crop(12 * 10 * 3), full(crop.size());
    req.crop_decode = true;
    ASSERT_TRUE(DecodeRecordPixels(r.rec, {}, {}, req, crop.data(), nullptr).ok());
    req.crop_decode = false;
    ASSERT_TRUE(DecodeRecordPixels(r.rec, {}, {}, req, full.data(), nullptr).ok());
    EXPECT_EQ(crop, full);
  }
}

// An eval centre crop (center-crop, and crop-or-pad cutting a larger image)
// decodes only its window: the same pixels as the full decode, for every
// filter, with and without DCT scaling, RGB and gray, flipped or not; plans
// that pad (crop-or-pad of a smaller side) or keep the whole image take the
// full decode and agree too.
TEST(RecordPixelsTest, EvalCentreCropsDecodeOnlyTheWindowWithTheFullDecodesPixels) {
  struct Case {
    int src_w, src_h, out_w, out_h;
  };
  for (const Case& k : {Case{341, 256, 224, 224}, Case{256, 341, 224, 224}, Case{200, 150, 64, 48},
                        Case{121, 97, 96, 96}, Case{80, 200, 96, 64}, Case{90, 60, 90, 60}}) {
    const image::Image big = testing::PatternImage(k.src_w, k.src_h, 3, 6);
    Record r;
    ASSERT_NO_FATAL_FAILURE(MakeRecord(*image::EncodeJpeg(big), "jpeg", nullptr, &r));
    for (image::ResizeMode mode : {image::ResizeMode::kCenterCrop, image::ResizeMode::kCropOrPad}) {
      for (image::Filter f : {image::Filter::kBilinear, image::Filter::kBicubic, image::Filter::kLanczos3,
                              image::Filter::kBox, image::Filter::kNearest}) {
        for (int channels : {3, 1}) {
          for (bool dct : {true, false}) {
            for (bool flip : {false, true}) {
              PixelRequest req = Request(k.out_w, k.out_h);
              req.channels = channels;
              req.spec.mode = mode;
              req.spec.width = k.out_w;
              req.spec.height = k.out_h;
              req.spec.filter = f;
              req.dct_scale = dct;
              req.flip = flip;
              std::vector<uint8_t> window(static_cast<size_t>(k.out_w) * k.out_h * channels), full(window.size());
              req.crop_decode = true;
              ASSERT_TRUE(DecodeRecordPixels(r.rec, {}, {}, req, window.data(), nullptr).ok());
              req.crop_decode = false;
              ASSERT_TRUE(DecodeRecordPixels(r.rec, {}, {}, req, full.data(), nullptr).ok());
              ASSERT_EQ(window, full) << k.src_w << "x" << k.src_h << " -> " << k.out_w << "x" << k.out_h << " "
                                      << image::ResizeModeName(mode) << " filter " << static_cast<int>(f) << " C "
                                      << channels << " dct " << dct << " flip " << flip;
            }
          }
        }
      }
    }
  }
}

// The crop decode with DCT scaling off gives, byte for byte, the whole
// image decoded at full scale and then resampled over the crop box (the
// pixels of every release before crop decode), for RGB and gray; with a
// flip, those pixels mirrored (the crop path mirrors while it copies into
// the slot).
TEST(RecordPixelsTest, CropDecodeWithoutDctScalingIsTheWholeDecodeByteForByte) {
  const image::Image big = testing::PatternImage(200, 150, 3, 5);
  Record r;
  ASSERT_NO_FATAL_FAILURE(MakeRecord(*image::EncodeJpeg(big), "jpeg", nullptr, &r));
  const int W = 24, H = 20;
  for (int channels : {3, 1}) {
    image::DecodeOptions d;
    d.channels = channels == 1 ? image::ChannelMode::kGray : image::ChannelMode::kRgb;
    StatusOr<image::Image> whole = image::DecodeImage(r.rec.encoded, d);
    ASSERT_TRUE(whole.ok()) << whole.status();
    // Shrinks of 0.5x (an enlargement), 1.6x, 2.5x and 6x: the last two
    // would be DCT scaled if it were on.
    for (const image::PixelRect& c : {image::PixelRect{90, 60, 12, 10}, image::PixelRect{33, 17, 38, 32},
                                      image::PixelRect{41, 29, 60, 50}, image::PixelRect{0, 0, 144, 120}}) {
      for (bool flip : {false, true}) {
        PixelRequest req = Request(W, H);
        req.channels = channels;
        req.spec.mode = image::ResizeMode::kStretch;
        req.spec.width = W;
        req.spec.height = H;
        req.spec.crop = c;
        req.dct_scale = false;
        req.flip = flip;
        std::vector<uint8_t> got(static_cast<size_t>(W) * H * channels);
        ASSERT_TRUE(DecodeRecordPixels(r.rec, {}, {}, req, got.data(), nullptr).ok());
        StatusOr<image::Image> want = image::Resample(
            *whole, {double(c.x), double(c.y), double(c.x + c.width), double(c.y + c.height)}, W, H, req.spec.filter);
        ASSERT_TRUE(want.ok()) << want.status();
        for (int y = 0; y < H; ++y)
          for (int x = 0; x < W; ++x)
            for (int k = 0; k < channels; ++k) {
              const int sx = flip ? W - 1 - x : x;
              ASSERT_EQ(got[(static_cast<size_t>(y) * W + x) * channels + k], want->row(y)[sx * channels + k])
                  << channels << " channels, crop at " << c.x << "," << c.y << ", flip " << flip << ", pixel " << x
                  << "," << y;
            }
      }
    }
  }
}

}  // namespace
}  // namespace libshard::reader
