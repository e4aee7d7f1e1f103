// The PNG decoders (decode.h PngDecoder) against each other: the libdeflate
// decoder must give exactly libpng's pixels wherever it takes a file, take
// the files it is meant to take, and leave every other file -- and every
// error -- to libpng, so that the default (kAuto) behaves as libpng does.
#include <gtest/gtest.h>
#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "libshard/image/decode.h"
#include "libshard/image/encode.h"
#include "testutil.h"

namespace libshard::image {
namespace {

using ::libshard::testing::ReadFileOrDie;
using ::libshard::testing::SharedPath;

std::vector<DecodeOptions> OptionSets() {
  std::vector<DecodeOptions> sets(5);
  sets[1].alpha = AlphaMode::kKeep;
  sets[1].channels = ChannelMode::kAuto;
  sets[2].alpha = AlphaMode::kKeep;
  sets[2].keep_16bit = true;
  sets[3].channels = ChannelMode::kGray;
  sets[3].background = {10, 200, 90};
  sets[4].keep_16bit = true;
  sets[4].channels = ChannelMode::kAuto;
  return sets;
}

// Decodes with `decoder`; the status and, when ok, the image.
struct Result {
  Status status;
  Image image;
};
Result Decode(PngDecoder decoder, const std::string& bytes, const DecodeOptions& o) {
  Result r;
  r.status = DecodePngWith(decoder, bytes, o, &r.image);
  return r;
}

// kAuto must be indistinguishable from kLibpng; kLibdeflate either gives
// the same pixels or declines (kUnimplemented). Returns whether it took it.
bool ExpectSameAsLibpng(const std::string& bytes, const DecodeOptions& o) {
  const Result ref = Decode(PngDecoder::kLibpng, bytes, o);
  const Result automatic = Decode(PngDecoder::kAuto, bytes, o);
  EXPECT_EQ(automatic.status.code(), ref.status.code()) << automatic.status << " vs " << ref.status;
  EXPECT_EQ(automatic.status.message(), ref.status.message());
  if (ref.status.ok() && automatic.status.ok()) {
    EXPECT_TRUE(automatic.image == ref.image);
  }
  const Result fast = Decode(PngDecoder::kLibdeflate, bytes, o);
  if (!fast.status.ok()) {
    // Declined, or refused before any decoder runs (ProbeImage, the limit).
    if (fast.status.code() != StatusCode::kUnimplemented) {
      EXPECT_EQ(fast.status.message(), ref.status.message());
    }
    return false;
  }
  EXPECT_TRUE(ref.status.ok()) << "libdeflate took a file libpng rejects: " << ref.status;
  EXPECT_TRUE(fast.image == ref.image) << "pixels differ from libpng";
  return true;
}

// What the libdeflate decoder is meant to take, from IHDR and the chunks:
// gray, gray + alpha, RGB or RGBA of 8 or 16 bits, interlaced or not, no
// PLTE or tRNS.
bool MeantForLibdeflate(const std::string& bytes) {
  const int depth = uint8_t(bytes[24]), color_type = uint8_t(bytes[25]);
  const bool has_trns = bytes.find("tRNS") != std::string::npos;
  const bool has_plte = bytes.find("PLTE") != std::string::npos;
  return (color_type == 0 || color_type == 2 || color_type == 4 || color_type == 6) && (depth == 8 || depth == 16) &&
         !has_trns && !has_plte;
}

TEST(PngDecodersTest, PngSuiteSamePixelsAsLibpng) {
  const std::string dir = SharedPath("interop/pngsuite");
  if (dir.empty()) GTEST_SKIP() << "shared interop/pngsuite not found";
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 4 && name.substr(name.size() - 4) == ".png") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  int taken = 0, valid = 0;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const std::string bytes = ReadFileOrDie(dir + "/" + name);
    bool took_any = false, took_all = true;
    for (const DecodeOptions& o : OptionSets()) {
      const bool took = ExpectSameAsLibpng(bytes, o);
      took_any |= took;
      took_all &= took;
    }
    EXPECT_EQ(took_any, took_all) << "taken under some options only";
    if (name[0] == 'x') {
      EXPECT_FALSE(took_any) << "a corrupt file was decoded";
      continue;
    }
    ++valid;
    taken += took_any;
    EXPECT_EQ(took_any, MeantForLibdeflate(bytes));
  }
  EXPECT_EQ(valid, 161);
  // Gray, gray + alpha, RGB and RGBA at 8 and 16 bits: the basic files, the
  // five filter types, the compression levels, odd sizes and chunk orders.
  EXPECT_GE(taken, 40) << taken;
  std::printf("libdeflate took %d of %d valid files\n", taken, valid);
}

// A w x h image of `channels` x `depth` samples: smooth areas, edges and
// noise, so that the encoder's adaptive filter picks every filter type.
Image TestImage(int w, int h, int channels, int depth, unsigned seed) {
  Image im(w, h, channels, depth);
  std::mt19937 rng(seed);
  const int max = depth == 16 ? 65535 : 255;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < channels; ++c) {
        int v = (x * (37 + c * 11) + y * (53 - c * 7)) % (max + 1);
        if ((x / 5 + y / 3) % 4 == 0) v = static_cast<int>(rng() % (max + 1));
        if (depth == 16) {
          im.samples16()[(size_t(y) * w + x) * channels + c] = static_cast<uint16_t>(v);
        } else {
          im.row(y)[x * channels + c] = static_cast<uint8_t>(v);
        }
      }
    }
  }
  return im;
}

// `im` as an Adam7-interlaced PNG, written with libpng (EncodePng does not
// interlace).
std::string EncodeInterlaced(const Image& im) {
  std::string out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return "";
  }
  png_set_write_fn(
      png, &out,
      [](png_structp p, png_bytep data, size_t n) {
        static_cast<std::string*>(png_get_io_ptr(p))->append(reinterpret_cast<char*>(data), n);
      },
      nullptr);
  static const int kColorType[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                    PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_IHDR(png, info, im.width(), im.height(), im.bit_depth(), kColorType[im.channels()], PNG_INTERLACE_ADAM7,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  if (im.bit_depth() == 16) png_set_swap(png);  // Image holds native (little-endian) samples
  std::vector<png_bytep> rows(im.height());
  for (int y = 0; y < im.height(); ++y) rows[y] = const_cast<png_bytep>(im.row(y));
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

TEST(PngDecodersTest, RoundTripsThroughTheEncoder) {
  int taken = 0;
  for (int channels = 1; channels <= 4; ++channels) {
    for (int depth : {8, 16}) {
      for (const auto& [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {1, 7}, {5, 1}, {33, 17}, {127, 64}}) {
        SCOPED_TRACE(std::to_string(channels) + " channels, " + std::to_string(depth) + " bits, " + std::to_string(w) +
                     "x" + std::to_string(h));
        const Image src = TestImage(w, h, channels, depth, static_cast<unsigned>(w * h + channels));
        StatusOr<std::string> png = EncodePng(src);
        ASSERT_TRUE(png.ok()) << png.status();
        for (const DecodeOptions& o : OptionSets()) taken += ExpectSameAsLibpng(*png, o);
        // Kept as stored, the pixels are the source's.
        DecodeOptions keep;
        keep.alpha = AlphaMode::kKeep;
        keep.channels = ChannelMode::kAuto;
        keep.keep_16bit = true;
        Image back;
        ASSERT_TRUE(DecodePngWith(PngDecoder::kLibdeflate, *png, keep, &back).ok());
        EXPECT_TRUE(back == src);
      }
    }
  }
  EXPECT_EQ(taken, 4 * 2 * 5 * static_cast<int>(OptionSets().size()));
}

// Adam7 at sizes where some passes are empty or one pixel wide.
TEST(PngDecodersTest, InterlacedRoundTrips) {
  int taken = 0, cases = 0;
  for (int channels = 1; channels <= 4; ++channels) {
    for (int depth : {8, 16}) {
      for (const auto& [w, h] :
           std::vector<std::pair<int, int>>{{1, 1}, {2, 3}, {5, 1}, {1, 6}, {7, 9}, {8, 8}, {33, 17}}) {
        SCOPED_TRACE(std::to_string(channels) + " channels, " + std::to_string(depth) + " bits, " + std::to_string(w) +
                     "x" + std::to_string(h));
        const Image src = TestImage(w, h, channels, depth, static_cast<unsigned>(w + h * channels));
        const std::string png = EncodeInterlaced(src);
        ASSERT_FALSE(png.empty());
        ASSERT_EQ(png[28], 1) << "not interlaced";
        for (const DecodeOptions& o : OptionSets()) {
          taken += ExpectSameAsLibpng(png, o);
          ++cases;
        }
        DecodeOptions keep;
        keep.alpha = AlphaMode::kKeep;
        keep.channels = ChannelMode::kAuto;
        keep.keep_16bit = true;
        Image back;
        ASSERT_TRUE(DecodePngWith(PngDecoder::kLibdeflate, png, keep, &back).ok());
        EXPECT_TRUE(back == src);
      }
    }
  }
  EXPECT_EQ(taken, cases);
}

// Every single-byte corruption and truncation of small files: whatever the
// damage, the default decoder answers exactly as libpng does (same status
// and message, or the same pixels), and libdeflate never takes a file libpng
// rejects. Bad Adler-32 or zlib data that libpng tolerates still decodes.
TEST(PngDecodersTest, CorruptionAnswersAsLibpng) {
  std::vector<std::string> files;
  for (int channels : {3, 4, 1}) {
    StatusOr<std::string> png = EncodePng(TestImage(13, 9, channels, 8, 7));
    ASSERT_TRUE(png.ok());
    files.push_back(*png);
  }
  const DecodeOptions o;
  for (const std::string& good : files) {
    for (size_t i = 8; i < good.size(); ++i) {
      for (unsigned char flip : {0x01, 0x80, 0xFF}) {
        std::string bad = good;
        bad[i] = static_cast<char>(bad[i] ^ flip);
        SCOPED_TRACE("byte " + std::to_string(i) + " ^ " + std::to_string(flip));
        ExpectSameAsLibpng(bad, o);
      }
    }
    for (size_t cut = 8; cut < good.size(); ++cut) {
      SCOPED_TRACE("cut at " + std::to_string(cut));
      EXPECT_FALSE(ExpectSameAsLibpng(good.substr(0, cut), o));
    }
  }
}

// Recomputes every chunk's CRC, so that damage reaches the zlib stream, the
// filter bytes and IHDR's fields instead of stopping at the CRC check.
std::string FixCrcs(std::string png) {
  auto be32 = [&](size_t at) {
    return (uint32_t{uint8_t(png[at])} << 24) | (uint32_t{uint8_t(png[at + 1])} << 16) |
           (uint32_t{uint8_t(png[at + 2])} << 8) | uint8_t(png[at + 3]);
  };
  for (size_t pos = 8; pos + 12 <= png.size();) {
    const uint32_t len = be32(pos);
    if (len > png.size() - pos - 12) break;
    const uint32_t crc = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(png.data() + pos + 4), len + 4));
    for (int k = 0; k < 4; ++k) png[pos + 8 + len + k] = static_cast<char>(crc >> (24 - 8 * k));
    pos += size_t{len} + 12;
  }
  return png;
}

TEST(PngDecodersTest, CorruptionBehindValidCrcsAnswersAsLibpng) {
  for (int channels : {3, 2}) {
    for (int depth : {8, 16}) {
      StatusOr<std::string> png = EncodePng(TestImage(11, 6, channels, depth, 3));
      ASSERT_TRUE(png.ok());
      const std::string& good = *png;
      for (size_t i = 16; i + 12 < good.size(); ++i) {  // IHDR fields onwards, not IEND
        for (unsigned char flip : {0x01, 0x10, 0xFF}) {
          std::string bad = good;
          bad[i] = static_cast<char>(bad[i] ^ flip);
          SCOPED_TRACE("byte " + std::to_string(i) + " ^ " + std::to_string(flip));
          for (const DecodeOptions& o : OptionSets()) ExpectSameAsLibpng(FixCrcs(bad), o);
        }
      }
    }
  }
}

// The one file class the two decoders answer differently (found by
// fuzz_png_decode): libdeflate maps the reserved fixed-Huffman length
// symbols 286/287 to a valid length instead of rejecting them, so a stream
// zlib calls invalid can still inflate to bytes whose Adler-32 matches. Here
// a symbol 285 (length 258) of basn4a08 is changed to 286: libpng reports
// the zlib error, the default decoder gives the original pixels.
TEST(PngDecodersTest, ReservedLengthSymbolIsLibdeflatesOnlyLeniency) {
  const std::string dir = SharedPath("interop/pngsuite");
  if (dir.empty()) GTEST_SKIP() << "shared interop/pngsuite not found";
  const std::string good = ReadFileOrDie(dir + "/basn4a08.png");
  ASSERT_EQ(uint8_t(good[98]), 0x06);
  std::string bad = good;
  bad[98] = 0x07;
  bad = FixCrcs(bad);
  const DecodeOptions o;
  const Result ref = Decode(PngDecoder::kLibpng, bad, o);
  EXPECT_EQ(ref.status.code(), StatusCode::kDataLoss);
  EXPECT_NE(ref.status.message().find("IDAT: invalid literal/length code"), std::string::npos) << ref.status;
  const Result automatic = Decode(PngDecoder::kAuto, bad, o);
  ASSERT_TRUE(automatic.status.ok()) << automatic.status;
  EXPECT_TRUE(automatic.image == Decode(PngDecoder::kLibpng, good, o).image);
}

TEST(PngDecodersTest, NamesAndNonPng) {
  EXPECT_STREQ(PngDecoderName(PngDecoder::kAuto), "auto");
  EXPECT_STREQ(PngDecoderName(PngDecoder::kLibpng), "libpng");
  EXPECT_STREQ(PngDecoderName(PngDecoder::kLibdeflate), "libdeflate");
  Image out;
  const Status st = DecodePngWith(PngDecoder::kAuto, "\xFF\xD8\xFF\xE0 not png", {}, &out);
  EXPECT_FALSE(st.ok());
}

}  // namespace
}  // namespace libshard::image
