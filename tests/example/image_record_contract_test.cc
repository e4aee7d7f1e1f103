// One record contract (example/image_record.h): the same crafted records go
// through `shard verify --decode`'s check (VerifyBuffer) and the batch
// loader's decode path (BatchLoader::DecodeSample), and both must accept or
// refuse each one, with the same message.
#include "libshard/example/image_record.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "libshard/example/example_builder.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/decode.h"
#include "libshard/image/encode.h"
#include "libshard/image/raw_array.h"
#include "libshard/reader/batch_loader.h"
#include "libshard/record/record_writer.h"
#include "libshard/verify/verifier.h"
#include "reader_fixtures.h"
#include "testutil.h"

namespace libshard {
namespace {

using example::ExampleBuilder;

constexpr int kW = 8, kH = 6;

image::Image Pattern(int channels, int bit_depth = 8) {
  image::Image img = testing::PatternImage(kW, kH, channels, 3);
  if (bit_depth == 8) return img;
  image::Image wide(kW, kH, channels, 16);
  uint16_t* p = reinterpret_cast<uint16_t*>(wide.data());
  for (size_t i = 0; i < static_cast<size_t>(kW) * kH * channels; ++i)
    p[i] = static_cast<uint16_t>(img.data()[i] * 251 + i);
  return wide;
}

std::string Png(const image::Image& img) { return *image::EncodePng(img); }
std::string Jpeg() { return *image::EncodeJpeg(Pattern(3)); }
std::string Raw(const image::Image& img, int level, image::RawFilter filter = image::RawFilter::kNone) {
  image::RawEncodeOptions o;
  o.zstd_level = level;
  o.filter = filter;
  return *image::EncodeRaw(img, o);
}

// A record: the image, and whatever else the row sets.
struct Row {
  std::string name;
  std::string encoded;
  std::string format;  // "" = no format feature
  std::vector<int64_t> shape{};
  std::string dtype{};
  bool bytes_label = false;  // label as bytes_list instead of int64
  std::string mask{}, mask_format{};
  // Expected: "" = accepted; else the fault kind and the exact message.
  std::string fault{};
  std::string message{};

  std::string Serialize() const {
    ExampleBuilder b;
    b.AddBytes(keys::kEncoded, encoded);
    if (!format.empty()) b.AddBytes(keys::kFormat, format);
    if (!shape.empty()) b.AddInt64List(keys::kShape, shape.data(), shape.size());
    if (!dtype.empty()) b.AddBytes(keys::kDtype, dtype);
    if (bytes_label) {
      b.AddBytes(keys::kLabel, "cat");
    } else {
      b.AddInt64(keys::kLabel, 4);
    }
    if (!mask.empty()) b.AddBytes(keys::kMaskEncoded, mask);
    if (!mask_format.empty()) b.AddBytes(keys::kMaskFormat, mask_format);
    return b.Serialize();
  }
};

Row RawRow(std::string name, const image::Image& img, int level, image::RawFilter filter = image::RawFilter::kNone) {
  Row r{std::move(name), Raw(img, level, filter), image::RawFormatName(image::RawCompressionFor({level, filter}))};
  r.shape = {img.height(), img.width(), img.channels()};
  r.dtype = image::RawDtypeName(img.bit_depth());
  return r;
}

std::vector<Row> Rows() {
  std::vector<Row> rows;
  rows.push_back({"good jpeg", Jpeg(), "jpeg"});
  rows.push_back({"good png", Png(Pattern(3)), "png"});
  rows.push_back({"good png, format in capitals", Png(Pattern(1)), "PNG"});
  rows.push_back(RawRow("good raw", Pattern(3), 0));
  rows.push_back(RawRow("good raw.zst", Pattern(3), 3));
  rows.push_back(RawRow("good raw uint16", Pattern(3, 16), 0));
  rows.push_back(RawRow("good raw.zst gray+alpha uint16", Pattern(2, 16), 3));
  rows.push_back(RawRow("good raw.zst fast level", Pattern(3), -5));
  rows.push_back(RawRow("good raw.up.zst", Pattern(3), 1, image::RawFilter::kUp));
  rows.push_back(RawRow("good raw.up.zst gray+alpha uint16", Pattern(2, 16), 1, image::RawFilter::kUp));
  Row updtype = RawRow("shape/dtype mismatch in raw.up.zst", Pattern(3), 1, image::RawFilter::kUp);
  updtype.dtype = "uint16";
  updtype.fault = "raw_array_invalid";
  updtype.message =
      "raw.up.zst array of shape 8x6x3 uint16: raw decode: zstd frame holds 144 bytes, but shape "
      "6x8x3 uint16 needs 288";
  rows.push_back(updtype);
  rows.push_back({"missing format, png by content", Png(Pattern(3)), ""});

  Row huge = RawRow("shape [2^32+10, 10, 3]", Pattern(3), 0);
  huge.encoded = std::string(10 * 10 * 3, '\x07');
  huge.shape = {(int64_t{1} << 32) + 10, 10, 3};
  huge.fault = "raw_array_invalid";
  huge.message = "image/shape [4294967306, 10, 3]: 10x4294967306 exceeds the pixel limit of 100000000";
  rows.push_back(huge);

  Row negative = RawRow("negative dims", Pattern(3), 0);
  negative.shape = {-6, -8, 3};
  negative.fault = "raw_array_invalid";
  negative.message = "image/shape [-6, -8, 3] is not a valid image shape (height and width >= 1, channels 1..4)";
  rows.push_back(negative);

  Row dtype = RawRow("shape/dtype mismatch", Pattern(3), 0);
  dtype.dtype = "uint16";
  dtype.fault = "raw_array_invalid";
  dtype.message = "raw array has 144 bytes, image/shape [6, 8, 3] uint16 needs 288";
  rows.push_back(dtype);

  Row zdtype = RawRow("shape/dtype mismatch in zstd", Pattern(3), 3);
  zdtype.dtype = "uint16";
  zdtype.fault = "raw_array_invalid";
  zdtype.message =
      "raw.zst array of shape 8x6x3 uint16: raw decode: zstd frame holds 144 bytes, but shape 6x8x3 "
      "uint16 needs 288";
  rows.push_back(zdtype);

  Row webp{"webp on PNG bytes", Png(Pattern(3)), "webp"};
  webp.fault = "image_undecodable";
  webp.message = "image/format \"webp\" is not jpeg, png, raw, raw.zst or raw.up.zst";
  rows.push_back(webp);

  // A WebP header (RIFF, VP8L 8x6): convert reads WebP sources, but records
  // carry only jpeg, png or raw, whatever image/format says.
  std::string webp_bytes = std::string("RIFF\x11\0\0\0WEBPVP8L\x05\0\0\0\x2f", 21);
  const uint32_t vp8l_bits = (kW - 1) | ((kH - 1) << 14);
  for (int i = 0; i < 4; ++i) webp_bytes.push_back(static_cast<char>((vp8l_bits >> (8 * i)) & 0xFF));
  for (const char* stated : {"", "png"}) {
    Row w{std::string("webp bytes, format \"") + stated + "\"", webp_bytes, stated};
    w.fault = "image_undecodable";
    w.message = "image/encoded (25 bytes) is webp; records carry jpeg, png or raw";
    rows.push_back(w);
  }

  Row liar{"jpeg on PNG bytes", Png(Pattern(3)), "jpeg"};
  liar.fault = "image_undecodable";
  liar.message = "image/format says jpeg, but the bytes are png";
  rows.push_back(liar);

  Row label{"wrong label kind", Jpeg(), "jpeg"};
  label.bytes_label = true;
  label.fault = "label_invalid";
  label.message = "feature \"image/class/label\" is bytes_list, expected int64_list";
  rows.push_back(label);

  Row unformatted = RawRow("missing format on a raw array", Pattern(3), 0);
  unformatted.format.clear();
  unformatted.fault = "image_undecodable";
  unformatted.message = "image/encoded (144 bytes) is neither PNG nor JPEG";
  rows.push_back(unformatted);

  Row mask{"good png mask", Jpeg(), "jpeg"};
  mask.mask = Png(image::Image(kW, kH, 1));
  mask.mask_format = "png";
  rows.push_back(mask);

  Row up_mask = mask;
  up_mask.name = "good raw.up.zst mask";
  up_mask.mask = Raw(Pattern(1), 1, image::RawFilter::kUp);
  up_mask.mask_format = "raw.up.zst";
  rows.push_back(up_mask);

  Row small = mask;
  small.name = "mask size mismatch";
  small.mask = Png(image::Image(4, 4, 1));
  small.fault = "mask_size_mismatch";
  small.message = "mask is 4x4, the image 8x6";
  rows.push_back(small);

  Row short_raw = mask;
  short_raw.name = "raw mask size mismatch";
  short_raw.mask = std::string(47, '\x01');
  short_raw.mask_format = "raw";
  short_raw.fault = "mask_size_mismatch";
  short_raw.message = "raw mask has 47 bytes, a 8x6 uint8 mask needs 48";
  rows.push_back(short_raw);

  Row bmp = mask;
  bmp.name = "unknown mask format";
  bmp.mask_format = "bmp";
  bmp.fault = "mask_undecodable";
  bmp.message = "image/segmentation/class/format \"bmp\" is not png, raw, raw.zst or raw.up.zst";
  rows.push_back(bmp);
  return rows;
}

// What verify --decode says about the record: "" or "kind: message".
std::string VerifyVerdict(const std::string& record) {
  std::string data;
  {
    record::RecordWriter writer(io::NewStringWritableFile(&data), nullptr);
    EXPECT_TRUE(writer.Write(record).ok());
    EXPECT_TRUE(writer.Close().ok());
  }
  verify::VerifyOptions o;
  o.decode_images = true;
  verify::FileResult r = verify::VerifyBuffer(data, "r.tfrecord", o);
  if (r.faults.empty()) return "";
  EXPECT_EQ(r.faults.size(), 1u);
  return std::string(verify::FaultKindName(r.faults[0].kind)) + ": " + r.faults[0].message;
}

// What the loader says: "" or the error with the record's location removed.
std::string LoaderVerdict(const std::string& dir, const std::string& record, bool masks) {
  const std::string path = dir + "/r.tfrecord";
  {
    auto w = record::RecordWriter::Create(path, {});
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE((*w)->Write(record).ok());
    EXPECT_TRUE((*w)->Close().ok());
  }
  auto ds = reader::Dataset::Open({path});
  EXPECT_TRUE(ds.ok()) << ds.status();
  reader::BatchLoaderOptions o;
  o.width = kW;
  o.height = kH;
  o.batch_size = 1;
  o.masks = masks;
  auto loader = reader::BatchLoader::Create(std::shared_ptr<const reader::Dataset>(std::move(*ds)), o);
  EXPECT_TRUE(loader.ok()) << loader.status();
  std::vector<uint8_t> image(kW * kH * 3), mask(kW * kH);
  int64_t label = 0;
  Status s = (*loader)->DecodeSample(0, 0, image.data(), mask.data(), &label);
  if (s.ok()) {
    EXPECT_EQ(label, 4);
    return "";
  }
  const std::string where = path + ": record 0 at byte 0: ";
  EXPECT_EQ(s.message().rfind(where, 0), 0u) << s.message();
  return s.message().substr(where.size());
}

TEST(ImageRecordContractTest, VerifyAndTheLoaderAgreeOnEveryRecord) {
  const std::string dir = testing::MakeTempDir();
  for (const Row& row : Rows()) {
    SCOPED_TRACE(row.name);
    const std::string record = row.Serialize();
    const std::string verdict = VerifyVerdict(record);
    const std::string loader = LoaderVerdict(dir, record, !row.mask.empty());
    if (row.fault.empty()) {
      EXPECT_EQ(verdict, "");
      EXPECT_EQ(loader, "");
    } else {
      EXPECT_EQ(verdict, row.fault + ": " + row.message);
      EXPECT_EQ(loader, row.message);
    }
  }
}

TEST(ImageRecordContractTest, Uint16RawArraysLoadAsThe16BitPngDoes) {
  // --format raw keeps 16-bit samples; the loader reduces them as a 16-bit
  // PNG decode does (round(v / 257)), so both stores give the same batch.
  const std::string dir = testing::MakeTempDir();
  const image::Image wide = Pattern(3, 16);
  auto ref = image::DecodeImage(Png(wide));
  ASSERT_TRUE(ref.ok());
  ASSERT_EQ(ref->bit_depth(), 8);
  for (int level : {0, 3, 1}) {
    const Row row = RawRow("uint16", wide, level, level == 1 ? image::RawFilter::kUp : image::RawFilter::kNone);
    const std::string path = dir + "/u16-" + std::to_string(level) + ".tfrecord";
    auto w = record::RecordWriter::Create(path, {});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Write(row.Serialize()).ok());
    ASSERT_TRUE((*w)->Close().ok());
    reader::BatchLoaderOptions o;
    o.width = kW;
    o.height = kH;
    o.batch_size = 1;
    auto loader = reader::BatchLoader::Create(std::move(*reader::Dataset::Open({path})), o);
    ASSERT_TRUE(loader.ok());
    std::vector<uint8_t> image(kW * kH * 3);
    int64_t label = 0;
    ASSERT_TRUE((*loader)->DecodeSample(0, 0, image.data(), nullptr, &label).ok());
    EXPECT_EQ(std::memcmp(image.data(), ref->data(), image.size()), 0) << level;
  }
}

// A small JPEG whose SOF0 states width x height instead of its own size.
std::string InflatedJpeg(int width, int height) {
  std::string jpeg = Jpeg();
  const size_t sof = jpeg.find("\xFF\xC0");
  EXPECT_NE(sof, std::string::npos);
  jpeg[sof + 5] = static_cast<char>(height >> 8);
  jpeg[sof + 6] = static_cast<char>(height & 255);
  jpeg[sof + 7] = static_cast<char>(width >> 8);
  jpeg[sof + 8] = static_cast<char>(width & 255);
  return jpeg;
}

std::string LoaderError(const std::string& dir, const std::string& jpeg, reader::Augment augment) {
  const std::string path = dir + "/inflated.tfrecord";
  {
    auto w = record::RecordWriter::Create(path, {});
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE((*w)->Write(Row{"", jpeg, "jpeg"}.Serialize()).ok());
    EXPECT_TRUE((*w)->Close().ok());
  }
  reader::BatchLoaderOptions o;
  o.width = kW;
  o.height = kH;
  o.batch_size = 1;
  o.augment = augment;
  auto loader = reader::BatchLoader::Create(std::move(*reader::Dataset::Open({path})), o);
  EXPECT_TRUE(loader.ok());
  std::vector<uint8_t> image(kW * kH * 3);
  int64_t label = 0;
  Status s = (*loader)->DecodeSample(0, 0, image.data(), nullptr, &label);
  return s.ok() ? "" : s.message();
}

TEST(ImageRecordContractTest, HugeStatedJpegIsRefusedBeforeAllocationEvenWithRandomCrops) {
  const std::string dir = testing::MakeTempDir();
  const std::string jpeg = InflatedJpeg(60000, 60000);
  ASSERT_LT(jpeg.size(), 1000u);
  const std::string want = "jpeg of 60000x60000 exceeds the pixel limit of 100000000";
  for (reader::Augment a : {reader::Augment::kNone, reader::Augment::kRandomResizedCrop}) {
    EXPECT_EQ(LoaderError(dir, jpeg, a), dir + "/inflated.tfrecord: record 0 at byte 0: " + want)
        << reader::AugmentName(a);
  }
  EXPECT_EQ(VerifyVerdict(Row{"", jpeg, "jpeg"}.Serialize()), "image_undecodable: " + want);
}

TEST(ImageRecordContractTest, JpegInflatedBeyondItsDataFailsEverywhere) {
  // 10000x10000 stated, 8x6 of data: libjpeg warns "premature end of data
  // segment" and would return grey; convert, verify --decode and the loader
  // all refuse it.
  const std::string dir = testing::MakeTempDir();
  const std::string jpeg = InflatedJpeg(10000, 10000);
  const std::string why = "JPEG: truncated data (Corrupt JPEG data: premature end of data segment)";
  for (reader::Augment a : {reader::Augment::kNone, reader::Augment::kRandomResizedCrop}) {
    EXPECT_EQ(LoaderError(dir, jpeg, a), dir + "/inflated.tfrecord: record 0 at byte 0: " + why)
        << reader::AugmentName(a);
  }
  EXPECT_EQ(VerifyVerdict(Row{"", jpeg, "jpeg"}.Serialize()), "image_undecodable: jpeg does not decode: " + why);
#ifdef SHARD_BIN
  std::filesystem::create_directories(dir + "/in/a");
  testing::WriteFileOrDie(dir + "/in/a/good.jpg", Jpeg());
  testing::WriteFileOrDie(dir + "/in/a/inflated.jpg", jpeg);
  testing::CommandResult r = testing::RunShard("convert " + dir + "/in -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const std::string tsv = testing::ReadFileOrDie(dir + "/out/rejects.tsv");
  EXPECT_TRUE(testing::Contains(tsv, "a/inflated.jpg\t")) << tsv;
  EXPECT_TRUE(testing::Contains(tsv, "premature end of data segment")) << tsv;
#endif
}

#ifdef SHARD_BIN
TEST(ImageRecordContractTest, ConvertRawOf16BitPngVerifiesAndLoads) {
  // `--format raw` keeps the 16-bit samples; verify --decode passes them and
  // the loader reads them (as the 16-bit PNG itself would be read), in every
  // raw encoding the converter writes; the manifest records the filter.
  const std::string dir = testing::MakeTempDir();
  std::filesystem::create_directories(dir + "/in/a");
  const std::string png = Png(Pattern(3, 16));
  testing::WriteFileOrDie(dir + "/in/a/wide.png", png);
  const std::pair<const char*, const char*> cases[] = {
      {"", "raw.zst"},
      {"--zstd-level -3", "raw.zst"},
      {"--raw-filter up --zstd-level 1", "raw.up.zst"},
      {"--zstd-level 0 --raw-filter up", "raw"},
  };
  int n = 0;
  for (const auto& [flags, format] : cases) {
    SCOPED_TRACE(flags);
    const std::string out = dir + "/out" + std::to_string(n++);
    testing::CommandResult r =
        testing::RunShard("convert " + dir + "/in -o " + out + " --format raw " + std::string(flags));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = testing::RunShard("verify --decode " + out);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    const std::string manifest = testing::ReadFileOrDie(out + "/manifest.json");
    EXPECT_TRUE(testing::Contains(
        manifest, std::string("\"raw_filter\": \"") + (testing::Contains(flags, "up") ? "up" : "none") + "\""))
        << manifest;
    auto ds = reader::Dataset::Open({out});
    ASSERT_TRUE(ds.ok()) << ds.status();
    ASSERT_EQ((*ds)->size(), 1u);
    std::string_view rec;
    reader::RecordBuffer buf;
    ASSERT_TRUE((*ds)->ReadRecord(0, &buf, &rec).ok());
    example::FeatureView dtype, fmt;
    ASSERT_TRUE(example::ExampleView::Parse(rec)->Find(keys::kDtype, &dtype));
    EXPECT_EQ(dtype.bytes(0), "uint16");
    ASSERT_TRUE(example::ExampleView::Parse(rec)->Find(keys::kFormat, &fmt));
    EXPECT_EQ(fmt.bytes(0), format);
    reader::BatchLoaderOptions o;
    o.width = kW;
    o.height = kH;
    o.batch_size = 1;
    auto loader = reader::BatchLoader::Create(std::move(*ds), o);
    ASSERT_TRUE(loader.ok());
    std::vector<uint8_t> image(kW * kH * 3);
    int64_t label = -2;
    Status s = (*loader)->DecodeSample(0, 0, image.data(), nullptr, &label);
    ASSERT_TRUE(s.ok()) << s;
    auto ref = image::DecodeImage(png);
    ASSERT_TRUE(ref.ok());
    EXPECT_EQ(std::memcmp(image.data(), ref->data(), image.size()), 0);
  }
}
#endif

TEST(ImageRecordContractTest, FormatParserIsTheOneForEveryName) {
  for (const char* name : {"jpeg", "JPEG", "jpg", "png", "PNG", "raw", "raw.zst", "raw.up.zst"}) {
    EXPECT_TRUE(example::ParseImageRecordFormat(name).ok()) << name;
  }
  for (const char* name : {"webp", "RAW", "raw.gz", "raw.up", "raw.up.ZST", "", "jpeg "}) {
    auto f = example::ParseImageRecordFormat(name);
    ASSERT_FALSE(f.ok()) << name;
    EXPECT_EQ(f.status().message(),
              "format \"" + std::string(name) + "\" is not jpeg, png, raw, raw.zst or raw.up.zst");
  }
}

// DecodeStoredRawInto (the loader's straight-into-the-batch path) gives
// DecodeStoredImage's bytes and messages, and only for raw arrays.
TEST(ImageRecordContractTest, StoredRawIntoGivesTheStoredImage) {
  auto parse = [](const Row& row, std::string* bytes) {
    *bytes = row.Serialize();
    auto ex = example::ExampleView::Parse(*bytes);
    EXPECT_TRUE(ex.ok());
    return example::ParseImageRecord(*ex, example::ImageRecordKeys{}, {});
  };
  std::string bytes;
  for (int level : {0, 3, 1}) {  // raw, raw.zst, raw.up.zst
    auto rec =
        parse(RawRow("raw", Pattern(3), level, level == 1 ? image::RawFilter::kUp : image::RawFilter::kNone), &bytes);
    ASSERT_TRUE(rec.ok()) << rec.status();
    image::Image stored;
    ASSERT_TRUE(example::DecodeStoredImage(*rec, {}, &stored).ok());
    std::vector<uint8_t> into(stored.byte_size());
    ASSERT_TRUE(example::DecodeStoredRawInto(*rec, into.data(), into.size()).ok()) << level;
    EXPECT_EQ(std::memcmp(into.data(), stored.data(), into.size()), 0) << level;
    Status wrong = example::DecodeStoredRawInto(*rec, into.data(), into.size() - 1);
    EXPECT_EQ(wrong.code(), StatusCode::kInvalidArgument) << level;
  }
  Row mismatch = RawRow("uint16 stated", Pattern(3), 3);
  mismatch.dtype = "uint16";
  auto rec = parse(mismatch, &bytes);
  ASSERT_TRUE(rec.ok()) << rec.status();
  std::vector<uint8_t> into(image::RawByteSize(rec->shape));
  image::Image stored;
  const Status whole = example::DecodeStoredImage(*rec, {}, &stored);
  const Status s = example::DecodeStoredRawInto(*rec, into.data(), into.size());
  EXPECT_EQ(s.message(), whole.message());
  EXPECT_EQ(s.message(),
            "raw.zst array of shape 8x6x3 uint16: raw decode: zstd frame holds 144 bytes, but shape "
            "6x8x3 uint16 needs 288");
  rec = parse(Row{"png", Png(Pattern(3)), "png"}, &bytes);
  ASSERT_TRUE(rec.ok()) << rec.status();
  const Status png = example::DecodeStoredRawInto(*rec, into.data(), into.size());
  EXPECT_EQ(png.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(png.message(), "a png record is not a raw array");
}

}  // namespace
}  // namespace libshard
