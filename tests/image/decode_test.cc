// Decoding PngSuite and the JPEG edge-case corpus against Pillow references,
// the pixel policy, and corrupt input.
#include "libshard/image/decode.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "golden.h"
#include "libshard/image/encode.h"
#include "libshard/image/probe.h"
#include "testutil.h"

namespace libshard::image {
namespace {

using ::libshard::testing::Compare;
using ::libshard::testing::Contains;
using ::libshard::testing::LoadGoldenSet;
using ::libshard::testing::ReadFileOrDie;
using ::libshard::testing::SharedPath;

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

DecodeOptions KeepAlpha() {
  DecodeOptions o;
  o.alpha = AlphaMode::kKeep;
  return o;
}

TEST(PngSuiteTest, ValidFilesMatchPillow) {
  const std::string dir = SharedPath("interop/pngsuite");
  if (dir.empty()) GTEST_SKIP() << "shared interop/pngsuite not found";
  auto golden = LoadGoldenSet("pngsuite");
  int checked = 0;
  for (const std::string& name : ListDir(dir)) {
    if (name.size() < 4 || name.substr(name.size() - 4) != ".png" || name[0] == 'x') continue;
    SCOPED_TRACE(name);
    auto it = golden.find(name);
    ASSERT_NE(it, golden.end()) << "no golden entry";
    StatusOr<Image> img = DecodeImage(ReadFileOrDie(dir + "/" + name), KeepAlpha());
    ASSERT_TRUE(img.ok()) << img.status();
    const auto& g = it->second;
    const auto d = Compare(*img, g);
    ASSERT_TRUE(d.same_shape) << img->width() << "x" << img->height();
    EXPECT_LE(d.max_abs, g.tolerance);
    if (img->channels() == 3) {  // alpha dropped: the reference must be opaque
      for (size_t i = 3; i < g.values.size(); i += 4) ASSERT_EQ(g.values[i], 255) << "alpha lost";
    }
    ++checked;
  }
  EXPECT_EQ(checked, 161);
}

TEST(PngSuiteTest, CorruptFilesFailClealy) {
  const std::string dir = SharedPath("interop/pngsuite");
  if (dir.empty()) GTEST_SKIP() << "shared interop/pngsuite not found";
  int checked = 0;
  for (const std::string& name : ListDir(dir)) {
    if (name[0] != 'x') continue;
    SCOPED_TRACE(name);
    StatusOr<Image> img = DecodeImage(ReadFileOrDie(dir + "/" + name));
    ASSERT_FALSE(img.ok());
    const StatusCode code = img.status().code();
    EXPECT_TRUE(code == StatusCode::kDataLoss || code == StatusCode::kInvalidArgument) << img.status();
    EXPECT_FALSE(img.status().message().empty());
    ++checked;
  }
  EXPECT_EQ(checked, 14);
}

TEST(PngSuiteTest, ErrorsNameTheProblem) {
  const std::string dir = SharedPath("interop/pngsuite");
  if (dir.empty()) GTEST_SKIP() << "shared interop/pngsuite not found";
  const std::pair<const char*, const char*> cases[] = {
      {"xs1n0g01.png", "unrecognised format"}, {"xhdn0g08.png", "IHDR CRC"},    {"xcsn0g01.png", "CRC"},
      {"xc9n2c08.png", "colour type 9"},       {"xd3n2c08.png", "bit depth 3"}, {"xdtn0g01.png", "no IDAT"},
  };
  for (const auto& [name, want] : cases) {
    StatusOr<Image> img = DecodeImage(ReadFileOrDie(dir + "/" + name));
    ASSERT_FALSE(img.ok()) << name;
    EXPECT_NE(img.status().message().find(want), std::string::npos) << name << ": " << img.status();
  }
}

TEST(PixelPolicyTest, AlphaIsCompositedOverBackground) {
  const std::string dir = SharedPath("interop/pngsuite");
  if (dir.empty()) GTEST_SKIP() << "shared interop/pngsuite not found";
  auto golden = LoadGoldenSet("pngsuite");
  for (const char* name : {"basn6a08.png", "tbrn2c08.png", "basn4a08.png", "tp1n3p08.png"}) {
    SCOPED_TRACE(name);
    const auto& g = golden.at(name);
    DecodeOptions o;
    o.background = {10, 200, 90};
    StatusOr<Image> img = DecodeImage(ReadFileOrDie(dir + "/" + name), o);
    ASSERT_TRUE(img.ok()) << img.status();
    ASSERT_EQ(img->channels(), 3);
    for (size_t i = 0; i < size_t(g.width) * g.height; ++i) {
      const int a = g.values[i * 4 + 3];
      for (int k = 0; k < 3; ++k) {
        const double want = (g.values[i * 4 + k] * a + o.background[k] * (255 - a)) / 255.0;
        ASSERT_NEAR(img->data()[i * 3 + k], want, 0.51) << "pixel " << i;
      }
    }
  }
}

TEST(PixelPolicyTest, GrayKeptAsOneChannelOnRequest) {
  const std::string dir = SharedPath("interop/pngsuite");
  if (dir.empty()) GTEST_SKIP() << "shared interop/pngsuite not found";
  auto golden = LoadGoldenSet("pngsuite");
  DecodeOptions o;
  o.channels = ChannelMode::kAuto;
  StatusOr<Image> gray = DecodeImage(ReadFileOrDie(dir + "/basn0g04.png"), o);
  ASSERT_TRUE(gray.ok()) << gray.status();
  ASSERT_EQ(gray->channels(), 1);
  const auto& g = golden.at("basn0g04.png");
  for (size_t i = 0; i < gray->byte_size(); ++i) ASSERT_EQ(gray->data()[i], g.values[i * 4]);
  // kAuto leaves colour as RGB; kGray reduces it with the L weights.
  StatusOr<Image> color = DecodeImage(ReadFileOrDie(dir + "/basn2c08.png"), o);
  ASSERT_TRUE(color.ok());
  EXPECT_EQ(color->channels(), 3);
  o.channels = ChannelMode::kGray;
  StatusOr<Image> luma = DecodeImage(ReadFileOrDie(dir + "/basn2c08.png"), o);
  ASSERT_TRUE(luma.ok());
  ASSERT_EQ(luma->channels(), 1);
  const auto& c = golden.at("basn2c08.png");
  for (size_t i = 0; i < luma->byte_size(); ++i) {
    const double want = 0.299 * c.values[i * 4] + 0.587 * c.values[i * 4 + 1] + 0.114 * c.values[i * 4 + 2];
    ASSERT_NEAR(luma->data()[i], want, 0.51) << i;
  }
}

TEST(PixelPolicyTest, SixteenBitKeptOrRounded) {
  const std::string dir = SharedPath("interop/pngsuite");
  if (dir.empty()) GTEST_SKIP() << "shared interop/pngsuite not found";
  for (const char* name : {"basn0g16.png", "basn2c16.png", "basn6a16.png", "basi4a16.png"}) {
    SCOPED_TRACE(name);
    const std::string bytes = ReadFileOrDie(dir + "/" + name);
    DecodeOptions o = KeepAlpha();
    o.channels = ChannelMode::kAuto;
    StatusOr<Image> eight = DecodeImage(bytes, o);
    o.keep_16bit = true;
    StatusOr<Image> sixteen = DecodeImage(bytes, o);
    ASSERT_TRUE(eight.ok() && sixteen.ok());
    ASSERT_EQ(sixteen->bit_depth(), 16);
    ASSERT_EQ(eight->bit_depth(), 8);
    ASSERT_EQ(sixteen->channels(), eight->channels());
    const size_t n = eight->byte_size();
    bool any_low_bits = false;
    for (size_t i = 0; i < n; ++i) {
      const uint16_t v = sixteen->samples16()[i];
      ASSERT_EQ(eight->data()[i], (v + 128) / 257) << "sample " << i << " = " << v;
      any_low_bits |= (v % 257) != 0;
    }
    EXPECT_TRUE(any_low_bits) << "16-bit samples look like scaled 8-bit ones";
  }
}

TEST(PngDecodeTest, MatchesManifestDimensions) {
  const std::string dir = SharedPath("interop/pngsuite");
  if (dir.empty()) GTEST_SKIP() << "shared interop/pngsuite not found";
  std::istringstream tsv(ReadFileOrDie(dir + "/MANIFEST.tsv"));
  std::string line;
  std::getline(tsv, line);
  int rows = 0;
  while (std::getline(tsv, line)) {
    std::istringstream f(line);
    std::string name, bytes, sha, sig;
    int w, h;
    f >> name >> bytes >> sha >> sig >> w >> h;
    if (name[0] == 'x') continue;
    StatusOr<Image> img = DecodeImage(ReadFileOrDie(dir + "/" + name));
    ASSERT_TRUE(img.ok()) << name << ": " << img.status();
    EXPECT_EQ(img->width(), w) << name;
    EXPECT_EQ(img->height(), h) << name;
    ++rows;
  }
  EXPECT_EQ(rows, 161);
}

TEST(JpegDecodeTest, ValidFilesMatchPillow) {
  const std::string dir = SharedPath("interop/jpeg");
  if (dir.empty()) GTEST_SKIP() << "shared interop/jpeg not found";
  auto golden = LoadGoldenSet("jpeg");
  ASSERT_FALSE(golden.empty());
  for (const auto& [key, g] : golden) {
    SCOPED_TRACE(key);
    const std::string file = key.substr(0, key.find('@'));
    std::string bytes = ReadFileOrDie(dir + "/" + file);
    if (key.find('@') != std::string::npos) {
      ASSERT_TRUE(testing::PatchExifOrientation(&bytes, std::stoi(key.substr(key.find('@') + 1))));
    }
    StatusOr<Image> img = DecodeImage(bytes);
    ASSERT_TRUE(img.ok()) << img.status();
    ASSERT_EQ(img->channels(), 3);
    const auto d = Compare(*img, g);
    ASSERT_TRUE(d.same_shape) << img->width() << "x" << img->height();
    EXPECT_LE(d.max_abs, g.tolerance) << "mean " << d.mean_abs;
  }
}

struct BrokenJpeg {
  const char* file;
  StatusCode code;
  const char* want;
};
const BrokenJpeg kBrokenJpegs[] = {
    {"jpegdecoder_crash_empty.jpg", StatusCode::kInvalidArgument, "empty"},
    {"jpegdecoder_crash_missing-sof.jpg", StatusCode::kDataLoss, "SOF"},
    {"jpegdecoder_crash_missing-sos.jpg", StatusCode::kDataLoss, "SOS"},
    {"jpegdecoder_crash_null_height.jpg", StatusCode::kDataLoss, "zero image dimension"},
    {"jpegdecoder_crash_max_size.jpg", StatusCode::kResourceExhausted, "65535x65535"},
    {"libjpegturbo_monkey12.jpg", StatusCode::kUnimplemented, "12-bit"},
    // Their scans end at a marker before the image does: libjpeg would fill
    // the rest with grey (Pillow does); we refuse them.
    {"jpegdecoder_crash_dc-predictor-overflow.jpg", StatusCode::kDataLoss,
     "truncated data (Corrupt JPEG data: premature end of data segment)"},
    {"jpegdecoder_partial_progressive.jpg", StatusCode::kDataLoss,
     "truncated data (Corrupt JPEG data: premature end of data segment)"},
};

TEST(JpegDecodeTest, EveryCorpusFileIsCovered) {
  const std::string dir = SharedPath("interop/jpeg");
  if (dir.empty()) GTEST_SKIP() << "shared interop/jpeg not found";
  auto golden = LoadGoldenSet("jpeg");
  std::set<std::string> known = {"jpegdecoder_mozilla_jpg-size-6x6.jpg"};  // a PNG
  for (const auto& [key, g] : golden) known.insert(key.substr(0, key.find('@')));
  for (const BrokenJpeg& b : kBrokenJpegs) known.insert(b.file);
  for (const std::string& name : ListDir(dir)) {
    if (name.size() > 4 && name.substr(name.size() - 4) == ".jpg") {
      EXPECT_TRUE(known.count(name)) << name << " is neither golden nor an expected failure";
    }
  }
}

TEST(JpegDecodeTest, BrokenFilesFailWithNamedProblem) {
  const std::string dir = SharedPath("interop/jpeg");
  if (dir.empty()) GTEST_SKIP() << "shared interop/jpeg not found";
  for (const BrokenJpeg& c : kBrokenJpegs) {
    SCOPED_TRACE(c.file);
    StatusOr<Image> img = DecodeImage(ReadFileOrDie(dir + "/" + c.file));
    ASSERT_FALSE(img.ok());
    EXPECT_EQ(img.status().code(), c.code) << img.status();
    EXPECT_NE(img.status().message().find(c.want), std::string::npos) << img.status();
  }
}

TEST(JpegDecodeTest, FormatComesFromContentNotName) {
  const std::string dir = SharedPath("interop/jpeg");
  if (dir.empty()) GTEST_SKIP() << "shared interop/jpeg not found";
  const std::string bytes = ReadFileOrDie(dir + "/jpegdecoder_mozilla_jpg-size-6x6.jpg");
  EXPECT_EQ(DetectFormat(bytes), ImageFormat::kPng);
  StatusOr<Image> img = DecodeImage(bytes);
  ASSERT_TRUE(img.ok()) << img.status();
  EXPECT_EQ(img->width(), 6);
}

TEST(JpegDecodeTest, OrientationCanBeLeftAlone) {
  const std::string dir = SharedPath("interop/jpeg");
  if (dir.empty()) GTEST_SKIP() << "shared interop/jpeg not found";
  DecodeOptions o;
  o.apply_orientation = false;
  StatusOr<Image> img = DecodeImage(ReadFileOrDie(dir + "/exif_Landscape_6.jpg"), o);
  ASSERT_TRUE(img.ok());
  EXPECT_EQ(img->width(), 1200);
  EXPECT_EQ(img->height(), 1800);
}

TEST(JpegDecodeTest, TruncatedAtAnyPointIsDataLoss) {
  const std::string dir = SharedPath("interop/jpeg");
  if (dir.empty()) GTEST_SKIP() << "shared interop/jpeg not found";
  for (const char* name : {"libjpegturbo_testorig.jpg", "jpegdecoder_progressive3.jpg"}) {
    const std::string bytes = ReadFileOrDie(dir + "/" + name);
    for (size_t cut : {size_t{3}, size_t{100}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 2}) {
      SCOPED_TRACE(std::string(name) + " cut at " + std::to_string(cut));
      StatusOr<Image> img = DecodeImage(bytes.substr(0, cut));
      ASSERT_FALSE(img.ok());
      EXPECT_EQ(img.status().code(), StatusCode::kDataLoss) << img.status();
      EXPECT_NE(img.status().message().find("truncated"), std::string::npos) << img.status();
    }
  }
}

TEST(JpegDecodeTest, DctScalingGivesCeilSizes) {
  const std::string dir = SharedPath("interop/jpeg");
  if (dir.empty()) GTEST_SKIP() << "shared interop/jpeg not found";
  const std::string bytes = ReadFileOrDie(dir + "/libjpegturbo_testorig.jpg");  // 227x149
  for (int d : {2, 4, 8}) {
    DecodeOptions o;
    o.jpeg_scale_denom = d;
    StatusOr<Image> img = DecodeImage(bytes, o);
    ASSERT_TRUE(img.ok());
    EXPECT_EQ(img->width(), (227 + d - 1) / d);
    EXPECT_EQ(img->height(), (149 + d - 1) / d);
  }
  DecodeOptions bad;
  bad.jpeg_scale_denom = 3;
  EXPECT_EQ(DecodeImage(bytes, bad).status().code(), StatusCode::kInvalidArgument);
}

// Crop-decode (DecodeJpegRegion) is tested in jpeg_region_test.cc.

TEST(JpegDecodeTest, StrictModeRejectsExtraneousBytes) {
  const std::string dir = SharedPath("interop/jpeg");
  if (dir.empty()) GTEST_SKIP() << "shared interop/jpeg not found";
  const std::string bytes = ReadFileOrDie(dir + "/jpegdecoder_extraneous-data.jpg");
  EXPECT_TRUE(DecodeImage(bytes).ok());
  DecodeOptions o;
  o.strict_jpeg = true;
  StatusOr<Image> img = DecodeImage(bytes, o);
  ASSERT_FALSE(img.ok());
  EXPECT_NE(img.status().message().find("extraneous"), std::string::npos) << img.status();
}

// `jpeg` without its DHT segments (as motion-JPEG frames and some cameras
// write them): a decoder must use the standard tables the format defines.
std::string WithoutHuffmanTables(const std::string& jpeg) {
  std::string out = jpeg.substr(0, 2);
  size_t i = 2;
  while (i + 4 <= jpeg.size() && uint8_t(jpeg[i]) == 0xFF && uint8_t(jpeg[i + 1]) != 0xDA) {
    const size_t len = (uint8_t(jpeg[i + 2]) << 8) | uint8_t(jpeg[i + 3]);
    if (uint8_t(jpeg[i + 1]) != 0xC4) out += jpeg.substr(i, 2 + len);
    i += 2 + len;
  }
  return out + jpeg.substr(i);
}

Image Noise(int w, int h, unsigned seed) {
  Image img(w, h, 3);
  for (size_t i = 0; i < img.byte_size(); ++i) img.data()[i] = uint8_t((i * 2654435761u + seed) >> 13);
  return img;
}

// The decoder keeps one libjpeg object per thread, and libjpeg keeps the
// tables a file defined. A file that leaves them out must not decode with
// the tables of the file the thread decoded before it.
TEST(JpegDecodeTest, TablesOfTheLastFileDoNotCarryOver) {
  StatusOr<std::string> plain = EncodeJpeg(Noise(64, 48, 1), {});
  JpegEncodeOptions opt;
  opt.optimize_huffman = true;
  StatusOr<std::string> other = EncodeJpeg(Noise(40, 40, 7), opt);
  ASSERT_TRUE(plain.ok() && other.ok());
  const std::string stripped = WithoutHuffmanTables(*plain);
  ASSERT_LT(stripped.size(), plain->size());
  StatusOr<Image> want = DecodeImage(*plain);
  ASSERT_TRUE(want.ok());
  std::thread([&] {
    StatusOr<Image> alone = DecodeImage(stripped);
    ASSERT_TRUE(alone.ok()) << alone.status();
    EXPECT_EQ(*alone, *want);
  }).join();
  std::thread([&] {
    ASSERT_TRUE(DecodeImage(*other).ok());
    StatusOr<Image> after = DecodeImage(stripped);
    ASSERT_TRUE(after.ok()) << after.status();
    EXPECT_EQ(*after, *want);
  }).join();
}

// `jpeg` with its last scan (SOS to EOI) repeated `extra` times more.
std::string WithLastScanRepeated(const std::string& jpeg, int extra) {
  const size_t sos = jpeg.rfind("\xFF\xDA");
  const std::string scan = jpeg.substr(sos, jpeg.size() - 2 - sos);
  std::string out = jpeg.substr(0, jpeg.size() - 2);
  for (int i = 0; i < extra; ++i) out += scan;
  return out + "\xFF\xD9";
}

// SOS markers (entropy-coded data stuffs every 0xFF with a 0x00).
int CountScans(const std::string& jpeg) {
  int n = 0;
  for (size_t at = jpeg.find("\xFF\xDA"); at != std::string::npos; at = jpeg.find("\xFF\xDA", at + 2)) ++n;
  return n;
}

// libjpeg decodes each scan of a progressive JPEG over the whole image, so
// a file repeating a scan makes work without end: past kMaxJpegScans
// (libjpeg-turbo's djpeg -maxscans, DALI's limit) it is refused.
TEST(JpegDecodeTest, ScansPastTheLimitAreRefused) {
  JpegEncodeOptions opt;
  opt.progressive = true;
  StatusOr<std::string> prog = EncodeJpeg(Noise(32, 32, 3), opt);
  ASSERT_TRUE(prog.ok());
  const int scans = CountScans(*prog);
  ASSERT_GT(scans, 2);
  StatusOr<Image> at = DecodeImage(WithLastScanRepeated(*prog, kMaxJpegScans - scans));
  EXPECT_TRUE(at.ok()) << at.status();
  for (int extra : {kMaxJpegScans - scans + 1, 10000}) {
    SCOPED_TRACE(extra);
    StatusOr<Image> past = DecodeImage(WithLastScanRepeated(*prog, extra));
    ASSERT_FALSE(past.ok());
    EXPECT_EQ(past.status().code(), StatusCode::kResourceExhausted) << past.status();
    EXPECT_TRUE(Contains(past.status().message(), "JPEG: scan 257 is past the limit of 256 scans")) << past.status();
  }
}

// A PNG header claiming width x height, with a valid IHDR CRC and a tiny IDAT.
std::string PngHeader(uint32_t w, uint32_t h);

TEST(PixelLimitTest, HugeHeaderRejectedBeforeAllocation) {
  // 60000 x 60000 RGB would need 10.8 GB; the limit must stop it first (ASan
  // would report the allocation otherwise).
  const std::string png = PngHeader(60000, 60000);
  StatusOr<Image> img = DecodeImage(png);
  ASSERT_FALSE(img.ok());
  EXPECT_EQ(img.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(img.status().message().find("60000x60000 exceeds the pixel limit of 100000000"), std::string::npos)
      << img.status();
}

TEST(PixelLimitTest, LimitIsConfigurable) {
  const std::string png = PngHeader(32, 32);
  DecodeOptions o;
  o.max_pixels = 1023;
  EXPECT_EQ(DecodeImage(png, o).status().code(), StatusCode::kResourceExhausted);
  o.max_pixels = 1024;
  // Passes the limit and then fails on the bogus IDAT, not on the limit.
  StatusOr<Image> img = DecodeImage(png, o);
  ASSERT_FALSE(img.ok());
  EXPECT_EQ(img.status().code(), StatusCode::kDataLoss) << img.status();
}

TEST(PngDecodeTest, FlippedBytesAreDataLoss) {
  const std::string dir = SharedPath("interop/pngsuite");
  if (dir.empty()) GTEST_SKIP() << "shared interop/pngsuite not found";
  const std::string bytes = ReadFileOrDie(dir + "/basn2c08.png");
  const size_t idat = bytes.find("IDAT");
  ASSERT_NE(idat, std::string::npos);
  const size_t len = (uint8_t(bytes[idat - 4]) << 24) | (uint8_t(bytes[idat - 3]) << 16) |
                     (uint8_t(bytes[idat - 2]) << 8) | uint8_t(bytes[idat - 1]);
  // A flipped byte in the compressed data: zlib or the CRC notices first.
  std::string data_flip = bytes;
  data_flip[idat + 20] ^= 0x55;
  StatusOr<Image> img = DecodeImage(data_flip);
  ASSERT_FALSE(img.ok());
  EXPECT_EQ(img.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(img.status().message().find("IDAT"), std::string::npos) << img.status();
  // A flipped byte in the stored CRC.
  std::string crc_flip = bytes;
  crc_flip[idat + 4 + len] ^= 0x01;
  img = DecodeImage(crc_flip);
  ASSERT_FALSE(img.ok());
  EXPECT_EQ(img.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(img.status().message().find("CRC"), std::string::npos) << img.status();
}

TEST(PngDecodeTest, TruncatedIsDataLoss) {
  const std::string dir = SharedPath("interop/pngsuite");
  if (dir.empty()) GTEST_SKIP() << "shared interop/pngsuite not found";
  const std::string bytes = ReadFileOrDie(dir + "/basi6a08.png");
  for (size_t cut : {size_t{20}, size_t{40}, bytes.size() / 2, bytes.size() - 1}) {
    StatusOr<Image> img = DecodeImage(bytes.substr(0, cut));
    ASSERT_FALSE(img.ok()) << cut;
    EXPECT_EQ(img.status().code(), StatusCode::kDataLoss) << cut << ": " << img.status();
    EXPECT_NE(img.status().message().find("truncated"), std::string::npos) << img.status();
  }
}

TEST(DecodeTest, UnknownFormatIsInvalidArgument) {
  StatusOr<Image> img = DecodeImage("P6 2 2 255 ........");  // a PPM: not read
  ASSERT_FALSE(img.ok());
  EXPECT_EQ(img.status().code(), StatusCode::kInvalidArgument);
}

TEST(DecodeTest, DecodeIntoReusesTheBuffer) {
  const std::string dir = SharedPath("interop/pngsuite");
  if (dir.empty()) GTEST_SKIP() << "shared interop/pngsuite not found";
  Image img;
  ASSERT_TRUE(DecodeImageInto(ReadFileOrDie(dir + "/basn2c08.png"), {}, &img).ok());
  const uint8_t* before = img.data();
  ASSERT_TRUE(DecodeImageInto(ReadFileOrDie(dir + "/basn0g08.png"), {}, &img).ok());
  EXPECT_EQ(img.data(), before);
  EXPECT_EQ(img, *DecodeImage(ReadFileOrDie(dir + "/basn0g08.png")));
}

std::string Be32(uint32_t v) { return std::string{char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }

uint32_t Crc32(const std::string& s) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
  }
  return ~c;
}

std::string Chunk(const std::string& type, const std::string& data) {
  return Be32(static_cast<uint32_t>(data.size())) + type + data + Be32(Crc32(type + data));
}

std::string PngHeader(uint32_t w, uint32_t h) {
  const std::string ihdr = Be32(w) + Be32(h) + std::string("\x08\x02\x00\x00\x00", 5);
  return std::string("\x89PNG\r\n\x1a\n", 8) + Chunk("IHDR", ihdr) + Chunk("IDAT", "xx") + Chunk("IEND", "");
}

TEST(DecodeOptionsTest, ChannelAndAlphaModesParse) {
  EXPECT_EQ(*ParseChannelMode("rgb"), ChannelMode::kRgb);
  EXPECT_EQ(*ParseChannelMode("gray"), ChannelMode::kGray);
  EXPECT_EQ(*ParseChannelMode("auto"), ChannelMode::kAuto);
  EXPECT_EQ(ParseChannelMode("cmyk").status().message(), "unknown channel mode 'cmyk' (expected rgb, gray or auto)");
  EXPECT_EQ(*ParseAlphaMode("composite"), AlphaMode::kComposite);
  EXPECT_EQ(*ParseAlphaMode("keep"), AlphaMode::kKeep);
  EXPECT_EQ(ParseAlphaMode("Keep").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace libshard::image
