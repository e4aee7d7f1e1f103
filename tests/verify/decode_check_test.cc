// Tests of verify --decode (VerifyOptions::decode_images): every image, raw
// array and mask decoded and compared with the size features; each damage
// found with its kind, offset and record number, in record order whatever
// the threads; an image too large for the memory left is a fault, not an
// abort.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "deflate_testutil.h"
#include "libshard/example/example_builder.h"
#include "libshard/image/encode.h"
#include "libshard/io/writable_file.h"
#include "libshard/record/record_writer.h"
#include "libshard/verify/verifier.h"
#include "testutil.h"
#include "verify_samples.h"

namespace libshard::verify {
namespace {

using ::libshard::testing::HasSubstr;
using ::libshard::testing::MakeTempDir;
using ::libshard::testing::ReadFileOrDie;
using ::libshard::testing::WriteFileOrDie;
using test::Frame;
using test::JpegSample;
using test::Pattern;
using test::Png;
using test::PngSample;
using test::RawSample;
using test::Sample;

class DecodeTest : public ::testing::Test {
 protected:
  // Verifies shard bytes holding `samples` with decoding on; the record
  // offsets land in offsets_.
  FileResult Decode(const std::vector<Sample>& samples, int threads = 0) {
    std::string data;
    offsets_.clear();
    {
      record::RecordWriter writer(io::NewStringWritableFile(&data), nullptr);
      for (const Sample& s : samples) {
        offsets_.push_back(data.size());
        EXPECT_TRUE(writer.Write(s.Serialize()).ok());
        EXPECT_TRUE(writer.Flush().ok());
      }
      EXPECT_TRUE(writer.Close().ok());
    }
    VerifyOptions options;
    options.decode_images = true;
    options.threads = threads;
    return VerifyBuffer(data, "d.tfrecord", options);
  }
  Fault OnlyFault(const FileResult& r) {
    EXPECT_EQ(r.faults.size(), 1u);
    return r.faults.empty() ? Fault{} : r.faults[0];
  }
  std::vector<uint64_t> offsets_;
};

TEST_F(DecodeTest, GoodImagesArraysAndMasks) {
  Sample with_png_mask = JpegSample(1, 1);
  with_png_mask.mask = Png(Pattern(8, 6, 1));
  with_png_mask.mask_format = "png";
  Sample with_raw_mask = PngSample(Pattern(8, 6, 4));
  with_raw_mask.mask = std::string(48, '\x02');
  with_raw_mask.mask_format = "raw";
  FileResult r = Decode({JpegSample(0, 0), PngSample(Pattern(8, 6, 1)), RawSample(Pattern(8, 6, 3), 0),
                         RawSample(Pattern(8, 6, 2), 3), with_png_mask, with_raw_mask});
  EXPECT_TRUE(r.ok()) << FaultKindName(r.faults[0].kind) << ": " << r.faults[0].message;
  EXPECT_EQ(r.records, 6u);
}

TEST_F(DecodeTest, UndecodableImage) {
  Sample bad = JpegSample(1, 1);
  bad.encoded = bad.encoded.substr(0, bad.encoded.size() / 2);  // truncated JPEG
  Fault f = OnlyFault(Decode({JpegSample(0, 0), bad}));
  EXPECT_EQ(f.kind, FaultKind::kImageUndecodable);
  EXPECT_EQ(f.offset, offsets_[1]);
  EXPECT_EQ(f.record, 1u);
  // The same record verifies clean without decoding.
  Sample text = JpegSample(2, 2);
  text.encoded = "not an image at all";
  Fault g = OnlyFault(Decode({text}));
  EXPECT_EQ(g.kind, FaultKind::kImageUndecodable);
  EXPECT_TRUE(HasSubstr(g.message, "neither PNG nor JPEG"));
  Sample liar = JpegSample(3, 0);
  liar.format = "png";
  EXPECT_TRUE(HasSubstr(OnlyFault(Decode({liar})).message, "image/format says png, but the bytes are jpeg"));
}

TEST_F(DecodeTest, SizeMismatchWithHeightWidthAndChannels) {
  Sample tall = JpegSample(0, 0);
  tall.height = 7;
  Fault f = OnlyFault(Decode({JpegSample(1, 1), JpegSample(2, 1), tall}));
  EXPECT_EQ(f.kind, FaultKind::kImageSizeMismatch);
  EXPECT_EQ(f.offset, offsets_[2]);
  EXPECT_EQ(f.record, 2u);
  EXPECT_TRUE(HasSubstr(f.message, "image is 8x6, image/width x image/height say 8x7"));
  Sample gray = PngSample(Pattern(8, 6, 1));
  gray.channels = 3;
  Fault g = OnlyFault(Decode({gray}));
  EXPECT_EQ(g.kind, FaultKind::kImageSizeMismatch);
  EXPECT_TRUE(HasSubstr(g.message, "image has 1 channels, image/channels says 3"));
}

TEST_F(DecodeTest, BadRawArrays) {
  Sample wrong_shape = RawSample(Pattern(8, 6, 1), 0);
  wrong_shape.shape = {6, 8, 3};  // the bytes hold one channel
  Fault f = OnlyFault(Decode({RawSample(Pattern(8, 6, 3), 3), wrong_shape}));
  EXPECT_EQ(f.kind, FaultKind::kRawArrayInvalid);
  EXPECT_EQ(f.offset, offsets_[1]);
  EXPECT_EQ(f.record, 1u);
  Sample no_dtype = RawSample(Pattern(8, 6, 3), 3);
  no_dtype.dtype.clear();
  EXPECT_TRUE(HasSubstr(OnlyFault(Decode({no_dtype})).message, "without image/dtype"));
  Sample corrupt = RawSample(Pattern(8, 6, 3), 3);
  corrupt.encoded[corrupt.encoded.size() / 2] ^= 0x5a;
  EXPECT_EQ(OnlyFault(Decode({corrupt})).kind, FaultKind::kRawArrayInvalid);
  Sample no_shape = RawSample(Pattern(8, 6, 3), 0);
  no_shape.shape.clear();
  EXPECT_EQ(OnlyFault(Decode({no_shape})).kind, FaultKind::kRawArrayInvalid);
}

TEST_F(DecodeTest, BadMasks) {
  Sample small = JpegSample(0, 0);
  small.mask = Png(Pattern(4, 4, 1));
  small.mask_format = "png";
  Fault f = OnlyFault(Decode({JpegSample(1, 0), small}));
  EXPECT_EQ(f.kind, FaultKind::kMaskSizeMismatch);
  EXPECT_EQ(f.offset, offsets_[1]);
  EXPECT_EQ(f.record, 1u);
  EXPECT_TRUE(HasSubstr(f.message, "mask is 4x4, the image 8x6"));
  Sample garbage = JpegSample(0, 0);
  garbage.mask = Png(Pattern(8, 6, 1)).substr(0, 40);
  garbage.mask_format = "png";
  EXPECT_EQ(OnlyFault(Decode({garbage})).kind, FaultKind::kMaskUndecodable);
  Sample short_raw = JpegSample(0, 0);
  short_raw.mask = std::string(47, '\x01');
  short_raw.mask_format = "raw";
  Fault g = OnlyFault(Decode({short_raw}));
  EXPECT_EQ(g.kind, FaultKind::kMaskSizeMismatch);
  EXPECT_TRUE(HasSubstr(g.message, "raw mask has 47 bytes, a 8x6 uint8 mask needs 48"));
  Sample unknown = JpegSample(0, 0);
  unknown.mask = "xx";
  unknown.mask_format = "bmp";
  EXPECT_EQ(OnlyFault(Decode({unknown})).kind, FaultKind::kMaskUndecodable);
}

TEST_F(DecodeTest, FaultsInRecordOrderWhateverTheThreads) {
  // More records than one decode batch, damage scattered, not_an_example in between.
  std::vector<Sample> samples;
  for (int i = 0; i < 600; ++i) {
    samples.push_back(JpegSample(i % 5, 0));
    if (i % 97 == 5) samples.back().encoded.resize(100);
    if (i % 131 == 7) samples.back().width = 9;
  }
  FileResult one = Decode(samples, 1);
  FileResult four = Decode(samples, 4);
  ASSERT_EQ(one.faults.size(), four.faults.size());
  ASSERT_GT(one.faults.size(), 8u);
  for (size_t i = 0; i < one.faults.size(); ++i) {
    EXPECT_EQ(one.faults[i].offset, four.faults[i].offset);
    EXPECT_EQ(one.faults[i].kind, four.faults[i].kind);
    EXPECT_EQ(one.faults[i].message, four.faults[i].message);
    if (i > 0) {
      EXPECT_LT(one.faults[i - 1].record, one.faults[i].record);
    }
  }
}

TEST(DecodeOptionsTest, Validate) {
  VerifyOptions bad;
  bad.decode_images = true;
  bad.check_examples = false;
  EXPECT_EQ(ValidateOptions(bad).code(), StatusCode::kInvalidArgument);
  bad = VerifyOptions();
  bad.max_pixels = 0;
  EXPECT_EQ(ValidateOptions(bad).code(), StatusCode::kInvalidArgument);
}

// An image too large for the memory left (10000 x 10000 RGBA 16-bit: 800 MB
// decoded) is a fault of its record and the walk goes on: never
// std::bad_alloc escaping a decode thread, never an abort (issue 12).
TEST(VerifyDecodeTest, OutOfMemoryIsAFaultOfThatRecordNotAnAbort) {
#ifdef LIBSHARD_TEST_ASAN
  GTEST_SKIP() << "address space limits do not work under AddressSanitizer";
#endif
  auto png_example = [](const std::string& png, int64_t side) {
    example::ExampleBuilder b;
    b.AddBytes("image/encoded", png);
    b.AddBytes("image/format", "png");
    b.AddInt64("image/height", side);
    b.AddInt64("image/width", side);
    b.AddInt64("image/channels", 4);
    return b.Serialize();
  };
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/big.tfrecord";
  WriteFileOrDie(path, Frame({png_example(testing::BlankRgba16Png(10000, 10000), 10000),
                              png_example(testing::BlankRgba16Png(3, 3), 3)}));
  const std::string report = dir + "/report.txt";
  const int rc = testing::RunInForkChild([&] {
    VerifyOptions o;
    o.decode_images = true;
    o.threads = 2;
    if (!testing::LimitAddressSpace(uint64_t{256} << 20)) return 5;
    const std::vector<FileResult> r = VerifyFiles({path}, o);
    std::string text = std::to_string(r[0].records) + " records";
    for (const Fault& f : r[0].faults) {
      text += "; record " + std::to_string(f.record) + " " + FaultKindName(f.kind) + ": " + f.message;
    }
    WriteFileOrDie(report, text);
    return 0;
  });
  ASSERT_EQ(rc, 0) << (std::filesystem::exists(report) ? ReadFileOrDie(report) : "no report");
  EXPECT_EQ(ReadFileOrDie(report),
            "2 records; record 0 image_undecodable: out of memory decoding the image (not necessarily damage: "
            "check it with more memory)");
}

}  // namespace
}  // namespace libshard::verify
