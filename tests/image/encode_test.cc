// JPEG / PNG / raw-array encoding round trips and the pass-through decision.
#include "libshard/image/encode.h"

#include <gtest/gtest.h>
#include <turbojpeg.h>
#include <zstd.h>

#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "golden.h"
#include "libshard/image/decode.h"
#include "libshard/image/passthrough.h"
#include "libshard/image/probe.h"
#include "libshard/image/raw_array.h"
#include "testutil.h"

namespace libshard::image {
namespace {

using ::libshard::testing::GoldenPath;
using ::libshard::testing::ReadFileOrDie;
using ::libshard::testing::SharedPath;

Image Photo() {
  StatusOr<Image> img = DecodeImage(ReadFileOrDie(GoldenPath("resize_input.png")));
  EXPECT_TRUE(img.ok()) << img.status();
  return img.ok() ? *img : Image(1, 1, 3);
}

double MeanAbsDiff(const Image& a, const Image& b) {
  EXPECT_EQ(a.byte_size(), b.byte_size());
  if (a.byte_size() != b.byte_size()) return 1e9;
  double sum = 0;
  for (size_t i = 0; i < a.byte_size(); ++i) sum += std::abs(int(a.data()[i]) - int(b.data()[i]));
  return sum / a.byte_size();
}

// The luma component's sampling byte from the SOF segment (0x22 = 4:2:0).
int LumaSampling(const std::string& jpeg) {
  for (size_t i = 2; i + 10 < jpeg.size(); ++i) {
    const auto m = static_cast<uint8_t>(jpeg[i + 1]);
    if (uint8_t(jpeg[i]) == 0xFF && (m == 0xC0 || m == 0xC1 || m == 0xC2)) {
      return static_cast<uint8_t>(jpeg[i + 11]);
    }
  }
  return -1;
}

TEST(JpegEncodeTest, RoundTripQualityAndSubsampling) {
  const Image src = Photo();
  JpegEncodeOptions o;
  StatusOr<std::string> j420 = EncodeJpeg(src, o);
  o.subsampling = ChromaSubsampling::k444;
  StatusOr<std::string> j444 = EncodeJpeg(src, o);
  ASSERT_TRUE(j420.ok() && j444.ok()) << j420.status();
  EXPECT_EQ(LumaSampling(*j420), 0x22);
  EXPECT_EQ(LumaSampling(*j444), 0x11);
  StatusOr<Image> d420 = DecodeImage(*j420);
  StatusOr<Image> d444 = DecodeImage(*j444);
  ASSERT_TRUE(d420.ok() && d444.ok());
  const double e420 = MeanAbsDiff(src, *d420), e444 = MeanAbsDiff(src, *d444);
  EXPECT_LT(e444, e420);
  EXPECT_LT(e420, 10.0);  // noisy, checkered test card: chroma halving costs
  EXPECT_LT(e444, 6.0);
  o.quality = 30;
  StatusOr<std::string> low = EncodeJpeg(src, o);
  ASSERT_TRUE(low.ok());
  EXPECT_LT(low->size(), j444->size());
  EXPECT_GT(MeanAbsDiff(src, *DecodeImage(*low)), e444);
}

// Our encoder and TurboJPEG's one-call API set libjpeg up the same way, so
// their output must be identical byte for byte (with TurboJPEG told to use
// the accurate integer DCT, which libshard always uses).
TEST(JpegEncodeTest, SameBytesAsTurboJpeg) {
  const Image src = Photo();
  tjhandle tj = tjInitCompress();
  ASSERT_NE(tj, nullptr);
  for (auto [sub, tjsub] : {std::pair{ChromaSubsampling::k420, TJSAMP_420}, {ChromaSubsampling::k444, TJSAMP_444}}) {
    for (int quality : {50, 90}) {
      unsigned char* buf = nullptr;
      unsigned long size = 0;
      ASSERT_EQ(tjCompress2(tj, src.data(), src.width(), 0, src.height(), TJPF_RGB, &buf, &size, tjsub, quality,
                            TJFLAG_ACCURATEDCT),
                0);
      const std::string want(reinterpret_cast<char*>(buf), size);
      tjFree(buf);
      JpegEncodeOptions o;
      o.quality = quality;
      o.subsampling = sub;
      StatusOr<std::string> got = EncodeJpeg(src, o);
      ASSERT_TRUE(got.ok());
      EXPECT_TRUE(*got == want) << "quality " << quality << ": " << got->size() << " vs " << size;
    }
  }
  tjDestroy(tj);
}

TEST(JpegEncodeTest, ProgressiveAndOptimizedAreLosslessRecodings) {
  const Image src = Photo();
  JpegEncodeOptions o;
  StatusOr<std::string> base = EncodeJpeg(src, o);
  o.optimize_huffman = true;
  StatusOr<std::string> opt = EncodeJpeg(src, o);
  o.optimize_huffman = false;
  o.progressive = true;
  StatusOr<std::string> prog = EncodeJpeg(src, o);
  ASSERT_TRUE(base.ok() && opt.ok() && prog.ok());
  EXPECT_LT(opt->size(), base->size());
  EXPECT_TRUE(ProbeImage(*prog)->progressive);
  EXPECT_FALSE(ProbeImage(*base)->progressive);
  // Huffman coding and scan order do not touch the coefficients.
  EXPECT_EQ(*DecodeImage(*opt), *DecodeImage(*base));
  EXPECT_EQ(*DecodeImage(*prog), *DecodeImage(*base));
}

// The encoder keeps one libjpeg object per thread. An optimized (or
// progressive) encode leaves its image's own Huffman tables in that object,
// and jpeg_set_defaults only installs the standard tables where none are: the
// next plain encode on the thread then wrote the earlier image's tables, so
// the bytes depended on which images a thread had encoded before (and a symbol
// missing from them failed the encode). Each encode must stand alone.
TEST(JpegEncodeTest, AnOptimizedEncodeLeavesNothingForTheNextOnItsThread) {
  const Image src = Photo();
  JpegEncodeOptions plain;
  std::string alone;
  std::thread([&] { alone = *EncodeJpeg(src, plain); }).join();
  for (bool progressive : {false, true}) {
    Image flat(8, 8, 3);
    std::memset(flat.data(), 90, flat.byte_size());
    JpegEncodeOptions first;
    first.optimize_huffman = !progressive;
    first.progressive = progressive;
    std::string after;
    std::thread([&] {
      ASSERT_TRUE(EncodeJpeg(flat, first).ok());
      StatusOr<std::string> next = EncodeJpeg(src, plain);
      ASSERT_TRUE(next.ok()) << next.status();
      after = *next;
    }).join();
    EXPECT_TRUE(after == alone) << (progressive ? "after a progressive encode: " : "after an optimized encode: ")
                                << after.size() << " bytes vs " << alone.size();
  }
}

TEST(JpegEncodeTest, GrayAndRejectedInputs) {
  Image gray(33, 17, 1);
  for (size_t i = 0; i < gray.byte_size(); ++i) gray.data()[i] = static_cast<uint8_t>(i * 7);
  StatusOr<std::string> j = EncodeJpeg(gray);
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(ProbeImage(*j)->channels, 1);
  DecodeOptions keep_gray;
  keep_gray.channels = ChannelMode::kAuto;
  EXPECT_EQ(DecodeImage(*j, keep_gray)->channels(), 1);

  StatusOr<std::string> rgba = EncodeJpeg(Image(4, 4, 4));
  EXPECT_EQ(rgba.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rgba.status().message().find("alpha"), std::string::npos);
  EXPECT_EQ(EncodeJpeg(Image(4, 4, 3, 16)).status().code(), StatusCode::kInvalidArgument);
  JpegEncodeOptions bad;
  bad.quality = 0;
  EXPECT_EQ(EncodeJpeg(Image(4, 4, 3), bad).status().code(), StatusCode::kInvalidArgument);
}

TEST(PngEncodeTest, LosslessForEveryLayout) {
  const Image photo = Photo();
  for (int channels = 1; channels <= 4; ++channels) {
    for (int depth : {8, 16}) {
      SCOPED_TRACE(std::to_string(channels) + " channels, " + std::to_string(depth) + " bits");
      Image img(41, 29, channels, depth);
      for (size_t i = 0; i < size_t(41) * 29 * channels; ++i) {
        const uint32_t v = photo.data()[i % photo.byte_size()];
        if (depth == 16) {
          img.samples16()[i] = static_cast<uint16_t>(v * 257 + (i % 251));
        } else {
          img.data()[i] = static_cast<uint8_t>(v);
        }
      }
      StatusOr<std::string> png = EncodePng(img);
      ASSERT_TRUE(png.ok()) << png.status();
      DecodeOptions o;
      o.channels = ChannelMode::kAuto;
      o.alpha = AlphaMode::kKeep;
      o.keep_16bit = true;
      StatusOr<Image> back = DecodeImage(*png, o);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(*back, img);
    }
  }
}

TEST(PngEncodeTest, CompressionLevel) {
  const Image img = Photo();
  PngEncodeOptions o;
  o.compression_level = 0;
  StatusOr<std::string> stored = EncodePng(img, o);
  o.compression_level = 9;
  StatusOr<std::string> best = EncodePng(img, o);
  ASSERT_TRUE(stored.ok() && best.ok());
  EXPECT_GT(stored->size(), img.byte_size());
  EXPECT_LT(best->size(), stored->size());
  EXPECT_EQ(*DecodeImage(*stored), *DecodeImage(*best));
  o.compression_level = 10;
  EXPECT_EQ(EncodePng(img, o).status().code(), StatusCode::kInvalidArgument);
}

Image Wide() {
  Image img(37, 23, 3, 16);
  for (size_t i = 0; i < size_t(37) * 23 * 3; ++i) img.samples16()[i] = static_cast<uint16_t>(i * 977);
  return img;
}

TEST(RawArrayTest, RoundTripStoredAndZstd) {
  for (const Image& img : {Photo(), Wide()}) {
    for (int level : {0, 1, 3, 19}) {
      SCOPED_TRACE("level " + std::to_string(level) + " depth " + std::to_string(img.bit_depth()));
      RawEncodeOptions o;
      o.zstd_level = level;
      StatusOr<std::string> bytes = EncodeRaw(img, o);
      ASSERT_TRUE(bytes.ok()) << bytes.status();
      if (level == 0) {
        EXPECT_EQ(bytes->size(), img.byte_size());
      } else {
        EXPECT_EQ(bytes->compare(0, 4, "\x28\xB5\x2F\xFD"), 0);  // zstd magic
      }
      StatusOr<Image> back = DecodeRaw(*bytes, RawShapeOf(img), RawCompressionFor(o));
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(*back, img);
    }
  }
  // uint16 samples are little-endian in the bytes.
  StatusOr<std::string> stored = EncodeRaw(Wide(), RawEncodeOptions{0});
  EXPECT_EQ(uint8_t((*stored)[2]), 977 & 0xFF);
  EXPECT_EQ(uint8_t((*stored)[3]), 977 >> 8);
}

TEST(RawArrayTest, ShapeMismatchAndCorruption) {
  const Image img = Photo();  // 97x83x3
  const std::string zst = *EncodeRaw(img);
  const std::string raw = *EncodeRaw(img, RawEncodeOptions{0});
  RawShape wrong = RawShapeOf(img);
  wrong.height = 82;
  StatusOr<Image> r = DecodeRaw(zst, wrong, RawCompression::kZstd);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("24153 bytes, but shape 82x97x3 uint8 needs 23862"), std::string::npos)
      << r.status();
  EXPECT_EQ(DecodeRaw(raw, wrong, RawCompression::kNone).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(DecodeRaw(raw.substr(1), RawShapeOf(img), RawCompression::kNone).status().code(), StatusCode::kDataLoss);
  // Truncated frame, a flipped payload byte (checksum), a non-zstd buffer.
  EXPECT_EQ(DecodeRaw(zst.substr(0, zst.size() - 10), RawShapeOf(img), RawCompression::kZstd).status().code(),
            StatusCode::kDataLoss);
  std::string flipped = zst;
  flipped[flipped.size() / 2] ^= 0x10;
  EXPECT_EQ(DecodeRaw(flipped, RawShapeOf(img), RawCompression::kZstd).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(DecodeRaw(raw, RawShapeOf(img), RawCompression::kZstd).status().code(), StatusCode::kDataLoss);
}

TEST(RawArrayTest, LimitCheckedBeforeAllocation) {
  const std::string zst = *EncodeRaw(Photo());
  StatusOr<Image> r = DecodeRaw(zst, RawShape{100000, 100000, 4, 16}, RawCompression::kZstd);
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("80000000000 bytes"), std::string::npos) << r.status();
  EXPECT_EQ(DecodeRaw(zst, RawShape{0, 5, 3, 8}, RawCompression::kZstd).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*ParseRawFormat("raw.zst"), RawCompression::kZstd);
  EXPECT_EQ(*ParseRawDtype("uint16"), 16);
  EXPECT_FALSE(ParseRawDtype("float32").ok());
  EXPECT_EQ(EncodeRaw(Photo(), RawEncodeOptions{23}).status().code(), StatusCode::kInvalidArgument);
}

// The Up filter ("raw.up.zst") and zstd's fast levels, over shapes whose
// rows are shorter than, equal to and not a multiple of 16 bytes.
TEST(RawArrayTest, RoundTripUpFilterAndFastLevels) {
  std::vector<Image> images = {Photo(), Wide()};
  for (int c : {1, 2, 4}) {
    for (int w : {1, 5, 16, 33}) {
      Image img(w, 7, c, c == 2 ? 16 : 8);
      for (size_t i = 0; i < img.byte_size(); ++i) img.data()[i] = static_cast<uint8_t>(i * 37 + (i >> 3));
      images.push_back(std::move(img));
    }
  }
  for (const Image& img : images) {
    for (RawFilter filter : {RawFilter::kNone, RawFilter::kUp}) {
      for (int level : {-131072, -5, -1, 1, 3}) {
        SCOPED_TRACE(std::to_string(img.width()) + "x" + std::to_string(img.height()) + "x" +
                     std::to_string(img.channels()) + " depth " + std::to_string(img.bit_depth()) + " level " +
                     std::to_string(level) + " filter " + RawFilterName(filter));
        const RawEncodeOptions o{level, filter};
        StatusOr<std::string> bytes = EncodeRaw(img, o);
        ASSERT_TRUE(bytes.ok()) << bytes.status();
        EXPECT_EQ(RawCompressionFor(o), filter == RawFilter::kUp ? RawCompression::kZstdUp : RawCompression::kZstd);
        StatusOr<Image> back = DecodeRaw(*bytes, RawShapeOf(img), RawCompressionFor(o));
        ASSERT_TRUE(back.ok()) << back.status();
        EXPECT_EQ(*back, img);
        // Into a caller buffer of exactly the shape's size, and no other.
        std::vector<uint8_t> out(img.byte_size());
        ASSERT_TRUE(DecodeRawInto(*bytes, RawShapeOf(img), RawCompressionFor(o), out.data(), out.size()).ok());
        EXPECT_EQ(std::memcmp(out.data(), img.data(), out.size()), 0);
        EXPECT_EQ(DecodeRawInto(*bytes, RawShapeOf(img), RawCompressionFor(o), out.data(), out.size() - 1).code(),
                  StatusCode::kInvalidArgument);
      }
    }
  }
  // Stored ignores the filter: the samples as they are, format "raw".
  const Image img = Photo();
  const RawEncodeOptions stored{0, RawFilter::kUp};
  EXPECT_EQ(RawCompressionFor(stored), RawCompression::kNone);
  EXPECT_EQ(*EncodeRaw(img, stored), std::string(reinterpret_cast<const char*>(img.data()), img.byte_size()));
}

// The bytes inside a raw.up.zst frame are what docs/formats.md states: row 0
// as it is, then each sample minus the one above, mod 2^8 or 2^16.
TEST(RawArrayTest, UpFilterGoldenBytes) {
  Image u8(2, 3, 1);
  const uint8_t px[6] = {10, 20, 15, 5, 0, 255};
  std::memcpy(u8.data(), px, 6);
  std::string frame = *EncodeRaw(u8, RawEncodeOptions{1, RawFilter::kUp});
  std::string inner(6, '\0');
  ASSERT_EQ(ZSTD_decompress(inner.data(), inner.size(), frame.data(), frame.size()), 6u);
  EXPECT_EQ(inner, std::string("\x0a\x14\x05\xf1\xf1\xfa", 6));

  Image u16(2, 2, 1, 16);
  const uint16_t wide[4] = {1000, 2, 500, 1};
  std::memcpy(u16.data(), wide, 8);
  frame = *EncodeRaw(u16, RawEncodeOptions{1, RawFilter::kUp});
  inner.assign(8, '\0');
  ASSERT_EQ(ZSTD_decompress(inner.data(), inner.size(), frame.data(), frame.size()), 8u);
  // 1000, 2, 500 - 1000 = 65036, 1 - 2 = 65535; little-endian.
  EXPECT_EQ(inner, std::string("\xe8\x03\x02\x00\x0c\xfe\xff\xff", 8));
  EXPECT_EQ(*DecodeRaw(frame, RawShapeOf(u16), RawCompression::kZstdUp), u16);
}

TEST(RawArrayTest, UpFilterCorruptionAndNames) {
  const Image img = Photo();
  const std::string up = *EncodeRaw(img, RawEncodeOptions{1, RawFilter::kUp});
  EXPECT_EQ(DecodeRaw(up.substr(0, up.size() - 10), RawShapeOf(img), RawCompression::kZstdUp).status().code(),
            StatusCode::kDataLoss);
  std::string flipped = up;
  flipped[flipped.size() / 2] ^= 0x10;
  EXPECT_EQ(DecodeRaw(flipped, RawShapeOf(img), RawCompression::kZstdUp).status().code(), StatusCode::kDataLoss);
  RawShape wrong = RawShapeOf(img);
  wrong.width = 96;
  EXPECT_EQ(DecodeRaw(up, wrong, RawCompression::kZstdUp).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(*ParseRawFormat("raw.up.zst"), RawCompression::kZstdUp);
  EXPECT_STREQ(RawFormatName(RawCompression::kZstdUp), "raw.up.zst");
  EXPECT_FALSE(ParseRawFormat("raw.up").ok());
  EXPECT_EQ(*ParseRawFilter("up"), RawFilter::kUp);
  EXPECT_EQ(*ParseRawFilter("none"), RawFilter::kNone);
  EXPECT_FALSE(ParseRawFilter("delta").ok());
  EXPECT_EQ(EncodeRaw(img, RawEncodeOptions{-131073}).status().code(), StatusCode::kInvalidArgument);
  // The default: zstd's fast level -5, no filter ("raw.zst").
  EXPECT_EQ(RawCompressionFor(RawEncodeOptions{}), RawCompression::kZstd);
  EXPECT_EQ(RawEncodeOptions{}.zstd_level, -5);
}

TEST(PassThroughTest, DecisionsOnTheCorpus) {
  const std::string dir = SharedPath("interop/jpeg");
  if (dir.empty()) GTEST_SKIP() << "shared interop/jpeg not found";
  struct Case {
    const char* file;
    ChannelMode channels;
    bool want;
    const char* reason;
  };
  const Case cases[] = {
      {"libjpegturbo_testorig.jpg", ChannelMode::kRgb, true, "unchanged"},
      {"jpegdecoder_progressive3.jpg", ChannelMode::kRgb, true, "unchanged"},
      {"exif_Landscape_6.jpg", ChannelMode::kRgb, false, "orientation 6"},
      {"exif_Landscape_1.jpg", ChannelMode::kRgb, true, "unchanged"},
      {"jpegdecoder_mozilla_jpg-cmyk-1.jpg", ChannelMode::kRgb, false, "CMYK"},
      {"jpegdecoder_ycck.jpg", ChannelMode::kRgb, false, "YCCK"},
      {"libjpegturbo_testimgari.jpg", ChannelMode::kRgb, false, "arithmetic"},
      {"jpegdecoder_mozilla_jpg-gray.jpg", ChannelMode::kRgb, false, "gray JPEG must become RGB"},
      {"jpegdecoder_mozilla_jpg-gray.jpg", ChannelMode::kAuto, true, "unchanged"},
      {"libjpegturbo_testorig.jpg", ChannelMode::kGray, false, "must become gray"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    StatusOr<ImageInfo> info = ProbeImage(ReadFileOrDie(dir + "/" + c.file));
    ASSERT_TRUE(info.ok());
    DecodeOptions d;
    d.channels = c.channels;
    const Geometry g = *PlanGeometry(info->oriented_width(), info->oriented_height(), {});
    const PassThroughDecision p = DecidePassThrough(*info, d, g, OutputFormat::kJpeg, ReencodeMode::kAuto);
    EXPECT_EQ(p.pass_through, c.want) << p.reason;
    EXPECT_NE(p.reason.find(c.reason), std::string::npos) << p.reason;
  }
  StatusOr<ImageInfo> info = ProbeImage(ReadFileOrDie(dir + "/libjpegturbo_testorig.jpg"));
  const Geometry same = *PlanGeometry(227, 149, {});
  EXPECT_FALSE(DecidePassThrough(*info, {}, same, OutputFormat::kJpeg, ReencodeMode::kAlways).pass_through);
  EXPECT_FALSE(DecidePassThrough(*info, {}, same, OutputFormat::kPng, ReencodeMode::kAuto).pass_through);
  TransformSpec resize;
  resize.mode = ResizeMode::kStretch;
  resize.width = 100;
  resize.height = 100;
  EXPECT_FALSE(DecidePassThrough(*info, {}, *PlanGeometry(227, 149, resize), OutputFormat::kJpeg, ReencodeMode::kAuto)
                   .pass_through);
  // A resize mode whose target equals the source is still the identity.
  resize.width = 227;
  resize.height = 149;
  EXPECT_TRUE(DecidePassThrough(*info, {}, *PlanGeometry(227, 149, resize), OutputFormat::kJpeg, ReencodeMode::kAuto)
                  .pass_through);
}

}  // namespace
}  // namespace libshard::image
