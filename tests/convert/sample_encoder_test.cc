// Sample encoder: the Example's keys and values (read with ExampleView and
// with protobuf's tensorflow::Example), resizing, JPEG pass-through, raw
// arrays, masks, errors, and the source SHA-256.
#include "libshard/convert/sample_encoder.h"

#include <gtest/gtest.h>

#include <set>

#include "fixtures.h"
#include "libshard/example/example_view.h"
#include "libshard/example/image_keys.h"
#include "libshard/util/sha256.h"
#include "tensorflow/core/example/example.pb.h"

namespace libshard::convert {
namespace {

using example::ExampleView;
using example::FeatureKind;
using example::FeatureView;
using testing::JpegBytes;
using testing::PngBytes;
using testing::RandomImage;

std::string Bytes(const ExampleView& ex, const char* key) {
  FeatureView f;
  if (!ex.Find(key, &f) || f.kind() != FeatureKind::kBytes || f.size() != 1) return "<missing>";
  return std::string(f.bytes(0));
}

int64_t Int(const ExampleView& ex, const char* key) {
  FeatureView f;
  if (!ex.Find(key, &f) || f.kind() != FeatureKind::kInt64 || f.size() != 1) return -999;
  return f.int64(0);
}

std::string StatsBytes(const StatsAccumulator& s) {
  DatasetStats p;
  s.ToProto(&p);
  return p.SerializeAsString();
}

SourceSample Sample(const std::string& path, int64_t label = -1) {
  SourceSample s;
  s.path = path;
  s.label = label;
  return s;
}

TEST(SampleEncoderTest, KeysAndValuesReadByExampleViewAndProtobuf) {
  const std::string png = PngBytes(20, 10, 3, 7);
  EncodeOptions o;
  o.format = image::OutputFormat::kPng;
  EncodedSample out;
  StatsAccumulator stats;
  ASSERT_TRUE(EncodeSample(Sample("cat/x.png", 2), "cat", png, "", o, &out, &stats).ok());
  EXPECT_FALSE(out.passed_through);
  EXPECT_EQ(out.source.format, image::ImageFormat::kPng);
  EXPECT_EQ(out.source.width, 20);

  StatusOr<ExampleView> ex = ExampleView::Parse(out.record);
  ASSERT_TRUE(ex.ok()) << ex.status();
  EXPECT_EQ(Bytes(*ex, keys::kFormat), "png");
  EXPECT_EQ(Int(*ex, keys::kHeight), 10);
  EXPECT_EQ(Int(*ex, keys::kWidth), 20);
  EXPECT_EQ(Int(*ex, keys::kChannels), 3);
  EXPECT_EQ(Bytes(*ex, keys::kColorspace), "RGB");
  EXPECT_EQ(Int(*ex, keys::kLabel), 2);
  EXPECT_EQ(Bytes(*ex, keys::kText), "cat");
  EXPECT_EQ(Bytes(*ex, keys::kFilename), "cat/x.png");
  EXPECT_EQ(Bytes(*ex, keys::kSha256), util::Sha256Hex(png));
  const std::string encoded = Bytes(*ex, keys::kEncoded);
  EXPECT_EQ(out.image_bytes, encoded.size());
  StatusOr<image::Image> img = image::DecodeImage(encoded);
  ASSERT_TRUE(img.ok());
  EXPECT_TRUE(*img == RandomImage(20, 10, 3, 8, 7));  // PNG in, PNG out: lossless
  FeatureView none;
  EXPECT_FALSE(ex->Find(keys::kShape, &none));
  EXPECT_FALSE(ex->Find(keys::kMaskEncoded, &none));

  tensorflow::Example pb;
  ASSERT_TRUE(pb.ParseFromString(out.record));
  std::set<std::string> keys;
  for (const auto& [k, v] : pb.features().feature()) keys.insert(k);
  EXPECT_EQ(keys,
            (std::set<std::string>{keys::kEncoded, keys::kFormat, keys::kHeight, keys::kWidth, keys::kChannels,
                                   keys::kColorspace, keys::kLabel, keys::kText, keys::kFilename, keys::kSha256}));
  const auto& f = pb.features().feature();
  EXPECT_EQ(f.at(keys::kEncoded).bytes_list().value(0), encoded);
  EXPECT_EQ(f.at(keys::kLabel).int64_list().value(0), 2);
  EXPECT_EQ(f.at(keys::kWidth).int64_list().value(0), 20);
  EXPECT_EQ(f.at(keys::kFilename).bytes_list().value(0), "cat/x.png");

  DatasetStats p;
  stats.ToProto(&p);
  EXPECT_EQ(p.converted(), 1u);
  EXPECT_EQ(p.source_bytes(), png.size());
  EXPECT_EQ(p.output_bytes(), encoded.size());
  ASSERT_EQ(p.labels_size(), 1);
  EXPECT_EQ(p.labels(0).label(), 2);
  ASSERT_EQ(p.source_sizes_size(), 1);
  EXPECT_EQ(p.source_sizes(0).name(), "20x10");
  ASSERT_EQ(p.channels_size(), 3);
  EXPECT_EQ(p.channels(0).count(), 200u);
}

TEST(SampleEncoderTest, UnlabeledSampleHasNoLabelKeys) {
  EncodedSample out;
  StatsAccumulator stats;
  ASSERT_TRUE(EncodeSample(Sample("a.png"), "", PngBytes(4, 4, 1, 1), "", EncodeOptions{}, &out, &stats).ok());
  tensorflow::Example pb;
  ASSERT_TRUE(pb.ParseFromString(out.record));
  EXPECT_EQ(pb.features().feature().count(keys::kLabel), 0u);
  EXPECT_EQ(pb.features().feature().count(keys::kText), 0u);
  // A gray PNG under the default RGB policy is stored as RGB JPEG.
  EXPECT_EQ(pb.features().feature().at(keys::kChannels).int64_list().value(0), 3);
  EXPECT_EQ(pb.features().feature().at(keys::kFormat).bytes_list().value(0), "jpeg");
}

TEST(SampleEncoderTest, ResizeToSpec) {
  EncodeOptions o;
  o.transform.mode = image::ResizeMode::kCenterCrop;
  o.transform.width = 8;
  o.transform.height = 6;
  EncodedSample out;
  StatsAccumulator stats;
  ASSERT_TRUE(EncodeSample(Sample("a.png"), "", PngBytes(40, 25, 3, 2), "", o, &out, &stats).ok());
  StatusOr<ExampleView> ex = ExampleView::Parse(out.record);
  ASSERT_TRUE(ex.ok());
  EXPECT_EQ(Int(*ex, keys::kWidth), 8);
  EXPECT_EQ(Int(*ex, keys::kHeight), 6);
  StatusOr<image::ImageInfo> info = image::ProbeImage(Bytes(*ex, keys::kEncoded));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->format, image::ImageFormat::kJpeg);
  EXPECT_EQ(info->width, 8);
  EXPECT_EQ(info->height, 6);
  DatasetStats p;
  stats.ToProto(&p);
  EXPECT_EQ(p.channels(0).count(), 48u);  // statistics are of the output pixels
  EXPECT_EQ(p.source_sizes(0).name(), "40x25");
}

TEST(SampleEncoderTest, JpegPassThroughIsByteIdenticalOnlyWithoutChanges) {
  const std::string jpeg = JpegBytes(32, 24, 3, 5);
  EncodedSample out;
  StatsAccumulator stats;
  ASSERT_TRUE(EncodeSample(Sample("a.jpg"), "", jpeg, "", EncodeOptions{}, &out, &stats).ok());
  EXPECT_TRUE(out.passed_through);
  StatusOr<ExampleView> ex = ExampleView::Parse(out.record);
  ASSERT_TRUE(ex.ok());
  EXPECT_EQ(Bytes(*ex, keys::kEncoded), jpeg);
  EXPECT_EQ(Int(*ex, keys::kWidth), 32);
  DatasetStats p;
  stats.ToProto(&p);
  EXPECT_EQ(p.passed_through(), 1u);
  EXPECT_EQ(p.channels(0).count(), 32u * 24);  // decoded once, to count its pixels

  EncodeOptions resize;
  resize.transform.mode = image::ResizeMode::kStretch;
  resize.transform.width = resize.transform.height = 16;
  ASSERT_TRUE(EncodeSample(Sample("a.jpg"), "", jpeg, "", resize, &out, &stats).ok());
  EXPECT_FALSE(out.passed_through);
  ex = ExampleView::Parse(out.record);
  EXPECT_NE(Bytes(*ex, keys::kEncoded), jpeg);
  EXPECT_EQ(Int(*ex, keys::kWidth), 16);

  EncodeOptions always;
  always.reencode = image::ReencodeMode::kAlways;
  ASSERT_TRUE(EncodeSample(Sample("a.jpg"), "", jpeg, "", always, &out, &stats).ok());
  EXPECT_FALSE(out.passed_through);
  ex = ExampleView::Parse(out.record);
  EXPECT_NE(Bytes(*ex, keys::kEncoded), jpeg);

  // An EXIF-rotated JPEG is not passed through: its pixels must turn.
  const std::string rotated = testing::WithExifOrientation(jpeg, 6);
  ASSERT_TRUE(EncodeSample(Sample("r.jpg"), "", rotated, "", EncodeOptions{}, &out, &stats).ok());
  EXPECT_FALSE(out.passed_through);
  ex = ExampleView::Parse(out.record);
  EXPECT_EQ(Int(*ex, keys::kWidth), 24);
  EXPECT_EQ(Int(*ex, keys::kHeight), 32);
  EXPECT_EQ(Bytes(*ex, keys::kSha256), util::Sha256Hex(rotated));
}

TEST(SampleEncoderTest, RawKeepsSixteenBitsWithShapeAndDtype) {
  const std::string png16 = PngBytes(5, 4, 3, 11, 16);
  for (int level : {0, 3}) {
    EncodeOptions o;
    o.format = image::OutputFormat::kRaw;
    o.raw.zstd_level = level;
    EncodedSample out;
    StatsAccumulator stats;
    ASSERT_TRUE(EncodeSample(Sample("d.png"), "", png16, "", o, &out, &stats).ok());
    tensorflow::Example pb;
    ASSERT_TRUE(pb.ParseFromString(out.record));
    const auto& f = pb.features().feature();
    const auto& shape = f.at(keys::kShape).int64_list().value();
    ASSERT_EQ(shape.size(), 3);
    EXPECT_EQ(shape[0], 4);
    EXPECT_EQ(shape[1], 5);
    EXPECT_EQ(shape[2], 3);
    EXPECT_EQ(f.at(keys::kDtype).bytes_list().value(0), "uint16");
    EXPECT_EQ(f.at(keys::kFormat).bytes_list().value(0), level == 0 ? "raw" : "raw.zst");
    StatusOr<image::RawCompression> comp = image::ParseRawFormat(f.at(keys::kFormat).bytes_list().value(0));
    ASSERT_TRUE(comp.ok());
    image::RawShape rs{4, 5, 3, 16};
    StatusOr<image::Image> back = image::DecodeRaw(f.at(keys::kEncoded).bytes_list().value(0), rs, *comp);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(*back == RandomImage(5, 4, 3, 16, 11));
    DatasetStats p;
    stats.ToProto(&p);
    EXPECT_GT(p.channels(0).sum(), 255u * 20);  // 16-bit sums, not 8-bit
  }
  // 8-bit source in raw: uint8.
  EncodeOptions o;
  o.format = image::OutputFormat::kRaw;
  EncodedSample out;
  StatsAccumulator stats;
  ASSERT_TRUE(EncodeSample(Sample("e.png"), "", PngBytes(5, 4, 3, 12), "", o, &out, &stats).ok());
  StatusOr<ExampleView> ex = ExampleView::Parse(out.record);
  EXPECT_EQ(Bytes(*ex, keys::kDtype), "uint8");
  StatusOr<image::Image> back =
      image::DecodeRaw(Bytes(*ex, keys::kEncoded), {4, 5, 3, 8}, image::RawCompression::kZstd);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(*back == RandomImage(5, 4, 3, 8, 12));
}

TEST(SampleEncoderTest, IndexMaskFollowsTheImageGeometry) {
  const std::string img = PngBytes(30, 20, 3, 1);
  image::Image mask(30, 20, 1);
  for (int y = 0; y < 20; ++y) {
    for (int x = 0; x < 30; ++x) mask.row(y)[x] = x < 15 ? 1 : 7;
  }
  const std::string mask_png = *image::EncodePng(mask);
  EncodeOptions o;
  o.transform.mode = image::ResizeMode::kStretch;
  o.transform.width = 10;
  o.transform.height = 8;
  SourceSample s = Sample("a.png", 0);
  s.mask_path = "/masks/a.png";
  EncodedSample out;
  StatsAccumulator stats;
  ASSERT_TRUE(EncodeSample(s, "road", img, mask_png, o, &out, &stats).ok());
  StatusOr<ExampleView> ex = ExampleView::Parse(out.record);
  ASSERT_TRUE(ex.ok());
  EXPECT_EQ(Bytes(*ex, keys::kMaskFormat), "png");
  const std::string m = Bytes(*ex, keys::kMaskEncoded);
  ASSERT_EQ(image::DetectFormat(m), image::ImageFormat::kPng);
  StatusOr<image::Image> idx = image::DecodeIndexMask(m);
  ASSERT_TRUE(idx.ok());
  EXPECT_EQ(idx->width(), 10);
  EXPECT_EQ(idx->height(), 8);
  EXPECT_EQ(idx->channels(), 1);
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 10; ++x) EXPECT_EQ(idx->row(y)[x], x < 5 ? 1 : 7) << x << "," << y;
  }
  EXPECT_EQ(Int(*ex, keys::kWidth), 10);
}

TEST(SampleEncoderTest, ColourMaskThroughMaskColorMap) {
  StatusOr<image::MaskColorMap> map = image::MaskColorMap::FromCsv("name,r,g,b\nsky,0,0,255\nroad,128,64,128\n");
  ASSERT_TRUE(map.ok());
  image::Image colour(6, 4, 3);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 6; ++x) {
      uint8_t* p = colour.row(y) + 3 * x;
      if (y < 2) {
        p[0] = 0, p[1] = 0, p[2] = 255;
      } else {
        p[0] = 128, p[1] = 64, p[2] = 128;
      }
    }
  }
  EncodeOptions o;
  o.mask_labels = &*map;
  SourceSample s = Sample("a.png");
  s.mask_path = "m.png";
  EncodedSample out;
  StatsAccumulator stats;
  ASSERT_TRUE(EncodeSample(s, "", PngBytes(6, 4, 3, 2), *image::EncodePng(colour), o, &out, &stats).ok());
  EXPECT_FALSE(out.passed_through);
  StatusOr<ExampleView> ex = ExampleView::Parse(out.record);
  StatusOr<image::Image> idx = image::DecodeIndexMask(Bytes(*ex, keys::kMaskEncoded));
  ASSERT_TRUE(idx.ok());
  ASSERT_EQ(idx->width(), 6);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 6; ++x) EXPECT_EQ(idx->row(y)[x], y < 2 ? 0 : 1);
  }
  // An unknown colour is an error by default.
  colour.row(0)[0] = 1;
  const StatsAccumulator before = stats;
  Status st = EncodeSample(s, "", PngBytes(6, 4, 3, 2), *image::EncodePng(colour), o, &out, &stats);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(StatsBytes(stats), StatsBytes(before));
}

TEST(SampleEncoderTest, MaskOfAnotherSizeIsAnError) {
  SourceSample s = Sample("a.png");
  s.mask_path = "/m/a.png";
  EncodedSample out;
  StatsAccumulator stats;
  Status st = EncodeSample(s, "", PngBytes(8, 8, 3, 1), PngBytes(8, 7, 1, 1), EncodeOptions{}, &out, &stats);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("/m/a.png"), std::string::npos) << st;
  EXPECT_NE(st.message().find("8x7"), std::string::npos) << st;
  EXPECT_EQ(StatsBytes(stats), StatsBytes(StatsAccumulator()));
}

TEST(SampleEncoderTest, NonImageIsAnErrorAndLeavesStatsUntouched) {
  StatsAccumulator stats;
  EncodedSample ok;
  ASSERT_TRUE(EncodeSample(Sample("a.png", 1), "x", PngBytes(4, 4, 3, 1), "", EncodeOptions{}, &ok, &stats).ok());
  const std::string before = StatsBytes(stats);
  EncodedSample out;
  Status st = EncodeSample(Sample("notes.txt", 1), "x", "hello, world", "", EncodeOptions{}, &out, &stats);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(StatsBytes(stats), before);
  // A truncated PNG: its header probes, the data does not decode.
  const std::string png = PngBytes(16, 16, 3, 2);
  st = EncodeSample(Sample("t.png"), "", png.substr(0, png.size() / 2), "", EncodeOptions{}, &out, &stats);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st;
  EXPECT_EQ(StatsBytes(stats), before);
  st = EncodeSample(Sample("e.png"), "", "", "", EncodeOptions{}, &out, &stats);
  EXPECT_FALSE(st.ok());
}

TEST(SampleEncoderTest, ColorspaceNamesAndOptionChecks) {
  EXPECT_STREQ(ColorspaceName(1), "Grayscale");
  EXPECT_STREQ(ColorspaceName(2), "GrayscaleAlpha");
  EXPECT_STREQ(ColorspaceName(3), "RGB");
  EXPECT_STREQ(ColorspaceName(4), "RGBA");
  EXPECT_TRUE(ValidateEncodeOptions(EncodeOptions{}).ok());
  EncodeOptions o;
  o.jpeg.quality = 0;
  EXPECT_EQ(ValidateEncodeOptions(o).code(), StatusCode::kInvalidArgument);
  o = EncodeOptions{};
  o.raw.zstd_level = 23;
  EXPECT_FALSE(ValidateEncodeOptions(o).ok());
  o = EncodeOptions{};
  o.png.compression_level = 10;
  EXPECT_FALSE(ValidateEncodeOptions(o).ok());
  o = EncodeOptions{};
  o.transform.mode = image::ResizeMode::kStretch;
  EXPECT_FALSE(ValidateEncodeOptions(o).ok());
  // Issue 23 item 9: alpha kept in JPEG is refused up front (it decoded,
  // then rejected every image with alpha).
  o = EncodeOptions{};
  o.decode.alpha = image::AlphaMode::kKeep;
  EXPECT_EQ(ValidateEncodeOptions(o).message(),
            "--alpha keep needs --format png or raw: JPEG has no alpha channel (every image with alpha would be "
            "rejected); --alpha composite flattens it over the background");
  o.format = image::OutputFormat::kPng;
  EXPECT_TRUE(ValidateEncodeOptions(o).ok());
  o.format = image::OutputFormat::kRaw;
  EXPECT_TRUE(ValidateEncodeOptions(o).ok());
}

TEST(SampleEncoderTest, AlphaKeptAndGrayAuto) {
  EncodeOptions o;
  o.format = image::OutputFormat::kPng;
  o.decode.alpha = image::AlphaMode::kKeep;
  EncodedSample out;
  StatsAccumulator stats;
  ASSERT_TRUE(EncodeSample(Sample("a.png"), "", PngBytes(3, 3, 4, 1), "", o, &out, &stats).ok());
  StatusOr<ExampleView> ex = ExampleView::Parse(out.record);
  EXPECT_EQ(Int(*ex, keys::kChannels), 4);
  EXPECT_EQ(Bytes(*ex, keys::kColorspace), "RGBA");
  o.decode.channels = image::ChannelMode::kAuto;
  ASSERT_TRUE(EncodeSample(Sample("g.png"), "", PngBytes(3, 3, 1, 1), "", o, &out, &stats).ok());
  ex = ExampleView::Parse(out.record);
  EXPECT_EQ(Int(*ex, keys::kChannels), 1);
  EXPECT_EQ(Bytes(*ex, keys::kColorspace), "Grayscale");
}

}  // namespace
}  // namespace libshard::convert
