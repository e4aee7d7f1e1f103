// Tests of the TFRecord framing: RecordWriter, RecordReader (byte span),
// RecordStreamReader (plain / gzip / zlib files), on generated records, on
// one corruption per field, and on the interop files written by TensorFlow.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/crc32c.h"
#include "libshard/io/mapped_file.h"
#include "libshard/io/writable_file.h"
#include "libshard/record/format.h"
#include "libshard/record/index.h"
#include "libshard/record/record_reader.h"
#include "libshard/record/record_writer.h"
#include "libshard/record/stream_reader.h"
#include "testutil.h"

namespace libshard::record {
namespace {

using ::libshard::testing::MakeTempDir;
using ::libshard::testing::ReadFileOrDie;
using ::libshard::testing::SharedPath;
using ::libshard::testing::WriteFileOrDie;
// Whether `text` contains `part`, with both shown on failure.
using ::libshard::testing::HasSubstr;

// Frames `payloads` with RecordWriter into a string (and its index into *index).
std::string WriteRecords(const std::vector<std::string>& payloads, std::string* index = nullptr) {
  std::string data;
  std::string idx;
  RecordWriter writer(io::NewStringWritableFile(&data), index ? io::NewStringWritableFile(&idx) : nullptr);
  for (const auto& p : payloads) EXPECT_TRUE(writer.Write(p).ok());
  EXPECT_TRUE(writer.Close().ok());
  if (index) *index = idx;
  return data;
}

// Reads every record of `data`; the final status must be `want_end`.
std::vector<std::string> ReadAll(std::string_view data, StatusCode want_end = StatusCode::kOutOfRange) {
  std::vector<std::string> out;
  RecordReader reader(data);
  RecordView rec;
  Status s;
  while ((s = reader.Next(&rec)).ok()) out.emplace_back(rec.data);
  EXPECT_EQ(s.code(), want_end) << s;
  return out;
}

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// ---------------------------------------------------------------- round trips

TEST(RecordRoundTripTest, EmptyRecord) {
  std::string data = WriteRecords({""});
  ASSERT_EQ(data.size(), kFramingOverhead);
  RecordReader reader(data);
  RecordView rec;
  ASSERT_TRUE(reader.Next(&rec).ok());
  EXPECT_EQ(rec.data.size(), 0u);
  EXPECT_EQ(rec.offset, 0u);
  EXPECT_EQ(rec.framed_size(), 16u);
  EXPECT_EQ(reader.Next(&rec).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(reader.fault(), RecordFault::kEndOfData);
}

TEST(RecordRoundTripTest, ManySizesWithIndex) {
  std::mt19937_64 rng(42);
  std::vector<std::string> payloads;
  for (size_t n : {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 100, 255, 256, 4095, 4096, 65535, 65536, 100000, (1 << 20) + 3}) {
    payloads.push_back(RandomBytes(rng, n));
  }
  std::string index_text;
  std::string data = WriteRecords(payloads, &index_text);

  uint64_t expected_size = 0;
  for (const auto& p : payloads) expected_size += p.size() + 16;
  EXPECT_EQ(data.size(), expected_size);

  auto index = ParseIndex(index_text);
  ASSERT_TRUE(index.ok()) << index.status();
  ASSERT_EQ(index->size(), payloads.size());

  RecordReader reader(data);
  RecordView rec;
  uint64_t offset = 0;
  for (size_t i = 0; i < payloads.size(); ++i) {
    ASSERT_TRUE(reader.Next(&rec).ok()) << "record " << i;
    EXPECT_EQ(rec.data, payloads[i]) << "record " << i;
    EXPECT_EQ(rec.offset, offset);
    EXPECT_EQ((*index)[i].offset, rec.offset) << "index line " << i + 1;
    EXPECT_EQ((*index)[i].size, rec.framed_size()) << "index line " << i + 1;
    EXPECT_EQ(FormatIndexLine({rec.offset, rec.framed_size()}),
              std::to_string(offset) + " " + std::to_string(payloads[i].size() + 16) + "\n");
    offset += payloads[i].size() + 16;
  }
  EXPECT_EQ(reader.records_read(), payloads.size());
  EXPECT_EQ(reader.Next(&rec).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(reader.offset(), data.size());
}

TEST(RecordRoundTripTest, WriterCountsAndOffsets) {
  std::string data;
  RecordWriter writer(io::NewStringWritableFile(&data), nullptr);
  EXPECT_EQ(writer.offset(), 0u);
  ASSERT_TRUE(writer.Write("abc").ok());
  EXPECT_EQ(writer.offset(), 19u);
  ASSERT_TRUE(writer.Write("").ok());
  EXPECT_EQ(writer.offset(), 35u);
  EXPECT_EQ(writer.records_written(), 2u);
  ASSERT_TRUE(writer.Close().ok());
  EXPECT_EQ(data.size(), 35u);
  EXPECT_EQ(writer.Write("x").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(writer.Close().code(), StatusCode::kFailedPrecondition);
}

TEST(RecordRoundTripTest, CreateWritesFileAndIndex) {
  std::string dir = MakeTempDir();
  std::string path = dir + "/a.tfrecord";
  std::vector<std::string> payloads = {"alpha", "", std::string(3000, 'z')};
  {
    auto writer = RecordWriter::Create(path, {.write_index = true, .sync_on_close = true});
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (const auto& p : payloads) ASSERT_TRUE((*writer)->Write(p).ok());
    ASSERT_TRUE((*writer)->Close().ok());
  }
  auto file = io::MappedFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(ReadAll((*file)->data()), payloads);
  EXPECT_EQ(ReadFileOrDie(IndexPathFor(path)), "0 21\n21 16\n37 3016\n");
}

// TensorFlow's own bytes (apache/beam's test constants): writing the same
// payloads must give the same file, byte for byte.
TEST(RecordRoundTripTest, BeamFilesAreByteExact) {
  std::string dir = SharedPath("interop/tfrecord");
  if (dir.empty()) GTEST_SKIP() << "shared interop data not found";
  std::string foo = ReadFileOrDie(dir + "/beam_foo.tfrecord");
  EXPECT_EQ(WriteRecords({"foo"}), foo);
  EXPECT_EQ(WriteRecords({"foo", "bar"}), ReadFileOrDie(dir + "/beam_foo_bar.tfrecord"));
  // docs/formats.md's header and footer bytes for "foo".
  const unsigned char header[] = {0x03, 0, 0, 0, 0, 0, 0, 0, 0xb0, 0x99, 0x49, 0x0e};
  const unsigned char footer[] = {0x61, 0x8a, 0xbe, 0xfe};
  EXPECT_EQ(foo, std::string(reinterpret_cast<const char*>(header), 12) + "foo" +
                     std::string(reinterpret_cast<const char*>(footer), 4));
  EXPECT_EQ(ReadAll(foo), std::vector<std::string>{"foo"});
}

// ---------------------------------------------------------------- corruption
//
// Three records; the damage is always in the second, which starts at byte 21.
class RecordCorruptionTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kSecond = 21;  // "first" is 5 bytes + 16
  static constexpr size_t kSecondLen = 100;

  void SetUp() override {
    payloads_ = {"first", std::string(kSecondLen, 'm'), "last"};
    data_ = WriteRecords(payloads_);
    ASSERT_EQ(data_.size(), 21u + 116u + 20u);
  }

  void FlipBit(size_t byte, int bit = 0) { data_[byte] = static_cast<char>(data_[byte] ^ (1 << bit)); }

  // Reads the first record fine, then expects `fault` at kSecond with a
  // message containing `text`; the reader must stay there.
  void ExpectFaultAtSecond(RecordFault fault, const std::string& text) {
    RecordReader reader(data_);
    RecordView rec;
    ASSERT_TRUE(reader.Next(&rec).ok());
    EXPECT_EQ(rec.data, "first");
    Status s = reader.Next(&rec);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s;
    EXPECT_EQ(reader.fault(), fault) << RecordFaultName(reader.fault());
    EXPECT_TRUE(HasSubstr(s.message(), "at byte 21"));
    EXPECT_TRUE(HasSubstr(s.message(), text));
    EXPECT_FALSE(HasSubstr(s.message(), "is this a TFRecord file"));
    EXPECT_EQ(reader.offset(), kSecond);
    EXPECT_EQ(reader.records_read(), 1u);
    // The structured verdict says the same as the text.
    EXPECT_EQ(reader.framing_error().fault, fault);
    EXPECT_EQ(reader.framing_error().offset, kSecond);
    EXPECT_EQ(FramingMessage(reader.framing_error()), s.message());
    EXPECT_EQ(FramingStatus(reader.framing_error(), "f.tfrecord").message(), "f.tfrecord: " + s.message());
    // Next() repeats the same error.
    EXPECT_EQ(reader.Next(&rec), s);
    // DecodeRecordAt agrees and leaves *out untouched.
    RecordView untouched;
    untouched.offset = 12345;
    EXPECT_EQ(DecodeRecordAt(data_, kSecond, {}, &untouched), fault);
    EXPECT_EQ(untouched.offset, 12345u);
  }

  std::vector<std::string> payloads_;
  std::string data_;
};

TEST_F(RecordCorruptionTest, Intact) { EXPECT_EQ(ReadAll(data_), payloads_); }

TEST_F(RecordCorruptionTest, FlippedBitInLength) {
  FlipBit(kSecond + 0, 3);
  ExpectFaultAtSecond(RecordFault::kLengthCrcMismatch, "length CRC mismatch");
}

TEST_F(RecordCorruptionTest, FlippedBitInHighLengthByte) {
  FlipBit(kSecond + 7, 7);  // would be a ~2^63 length if trusted
  ExpectFaultAtSecond(RecordFault::kLengthCrcMismatch, "length CRC mismatch");
}

TEST_F(RecordCorruptionTest, FlippedBitInLengthCrc) {
  uint32_t stored = DecodeFixed32(&data_[kSecond + 8]);
  FlipBit(kSecond + 8, 0);
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08x", stored ^ 1u);
  ExpectFaultAtSecond(RecordFault::kLengthCrcMismatch, std::string("stored ") + hex);
  std::snprintf(hex, sizeof hex, "0x%08x", stored);
  ExpectFaultAtSecond(RecordFault::kLengthCrcMismatch, std::string("computed ") + hex);
}

TEST_F(RecordCorruptionTest, FlippedBitInData) {
  FlipBit(kSecond + 12 + 50, 5);
  ExpectFaultAtSecond(RecordFault::kDataCrcMismatch, "data CRC mismatch");
  // Not checked when the caller opts out.
  RecordReader reader(data_, {.verify_data_crc = false});
  RecordView rec;
  ASSERT_TRUE(reader.Next(&rec).ok());
  ASSERT_TRUE(reader.Next(&rec).ok());
  EXPECT_EQ(rec.data[50], 'm' ^ 32);
}

TEST_F(RecordCorruptionTest, FlippedBitInDataCrc) {
  FlipBit(kSecond + 12 + kSecondLen + 3, 7);
  ExpectFaultAtSecond(RecordFault::kDataCrcMismatch, "data CRC mismatch");
}

TEST_F(RecordCorruptionTest, TruncatedInsideHeader) {
  data_.resize(kSecond + 7);
  ExpectFaultAtSecond(RecordFault::kTruncatedHeader, "truncated record at byte 21: header needs 12 bytes, 7 remain");
}

TEST_F(RecordCorruptionTest, TruncatedInsideData) {
  data_.resize(kSecond + 12 + 50);
  ExpectFaultAtSecond(RecordFault::kTruncatedData,
                      "truncated record at byte 21: length 100 needs 116 bytes, 62 remain");
}

TEST_F(RecordCorruptionTest, TruncatedInsideDataCrc) {
  data_.resize(kSecond + 12 + kSecondLen + 2);
  ExpectFaultAtSecond(RecordFault::kTruncatedData, "length 100 needs 116 bytes, 114 remain");
}

// The values behind each message, as DecodeHeader and DecodeRecordAt report them.
TEST_F(RecordCorruptionTest, FramingErrorCarriesStatedAndComputedValues) {
  FramingError e;
  RecordView rec;
  std::string cut = data_.substr(0, kSecond + 12 + 50);
  EXPECT_EQ(DecodeRecordAt(cut, kSecond, {}, &rec, &e), RecordFault::kTruncatedData);
  EXPECT_EQ(e.offset, kSecond);
  EXPECT_EQ(e.stated, kSecondLen);
  EXPECT_EQ(e.computed, 62u);  // bytes from the header on
  EXPECT_EQ(FramingDetail(e), "length 100 needs 116 bytes, 62 remain");
  EXPECT_EQ(DecodeRecordAt(data_, kSecond, {.max_record_length = 99}, &rec, &e), RecordFault::kLengthTooLarge);
  EXPECT_EQ(e.stated, kSecondLen);
  EXPECT_EQ(e.computed, 99u);
  EXPECT_EQ(FramingMessage(e), "corrupted record at byte 21: length 100 exceeds the limit of 99 bytes");
  uint64_t length = 0;
  e = DecodeHeader(nullptr, 7, 5, kDefaultMaxRecordLength, &length);  // too short: the header is not read
  EXPECT_EQ(e.fault, RecordFault::kTruncatedHeader);
  EXPECT_EQ(e.stated, kHeaderSize);
  EXPECT_EQ(e.computed, 5u);
  e = DecodeHeader(data_.data() + kSecond, kSecond, data_.size() - kSecond, kDefaultMaxRecordLength, &length);
  EXPECT_TRUE(e.ok());
  EXPECT_EQ(length, kSecondLen);
  const uint32_t stored = DecodeFixed32(&data_[kSecond + 12 + kSecondLen]);
  FlipBit(kSecond + 12 + 10, 0);
  EXPECT_EQ(DecodeRecordAt(data_, kSecond, {}, &rec, &e), RecordFault::kDataCrcMismatch);
  EXPECT_EQ(e.stated, stored);
  EXPECT_NE(e.computed, stored);
  // At byte 0 the message asks whether this is a TFRecord file at all.
  EXPECT_EQ(FramingMessage(FramingError{RecordFault::kTruncatedHeader, 0, 12, 3}),
            "truncated record at byte 0: header needs 12 bytes, 3 remain (is this a TFRecord file?)");
}

TEST_F(RecordCorruptionTest, GarbageAfterLastRecord) {
  const uint64_t end = data_.size();
  for (std::string garbage : {std::string("junk"), std::string("this is not a record at all")}) {
    std::string data = data_ + garbage;
    RecordReader reader(data);
    RecordView rec;
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(reader.Next(&rec).ok());
    Status s = reader.Next(&rec);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s;
    EXPECT_EQ(reader.fault(),
              garbage.size() < kHeaderSize ? RecordFault::kTruncatedHeader : RecordFault::kLengthCrcMismatch);
    EXPECT_TRUE(HasSubstr(s.message(), "at byte " + std::to_string(end)));
    EXPECT_EQ(reader.offset(), end);
  }
}

TEST(RecordReaderTest, HugeLengthWithValidCrcIsTooLarge) {
  for (uint64_t length : {uint64_t{1} << 40, ~uint64_t{0}, kDefaultMaxRecordLength + 1}) {
    std::string data = WriteRecords({"ok"});
    char header[kHeaderSize];
    EncodeFixed64(length, header);
    EncodeFixed32(crc32c::Mask(crc32c::Value(header, 8)), header + 8);
    data.append(header, kHeaderSize);
    data += "a little data";
    RecordReader reader(data);
    RecordView rec;
    ASSERT_TRUE(reader.Next(&rec).ok());
    Status s = reader.Next(&rec);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss);
    EXPECT_EQ(reader.fault(), RecordFault::kLengthTooLarge);
    EXPECT_TRUE(HasSubstr(s.message(), "at byte 18"));
    EXPECT_TRUE(HasSubstr(s.message(), "length " + std::to_string(length) + " exceeds the limit of 1073741824 bytes"));
  }
}

TEST(RecordReaderTest, MaxRecordLengthOption) {
  std::string data = WriteRecords({std::string(100, 'x')});
  RecordView rec;
  RecordReader strict(data, {.max_record_length = 99});
  EXPECT_EQ(strict.Next(&rec).code(), StatusCode::kDataLoss);
  EXPECT_EQ(strict.fault(), RecordFault::kLengthTooLarge);
  RecordReader exact(data, {.max_record_length = 100});
  EXPECT_TRUE(exact.Next(&rec).ok());
}

TEST(RecordReaderTest, EmptyInputIsOutOfRange) {
  RecordReader reader(std::string_view{});
  RecordView rec;
  Status s = reader.Next(&rec);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(reader.fault(), RecordFault::kEndOfData);
  EXPECT_EQ(reader.records_read(), 0u);
}

TEST(RecordReaderTest, NotATfRecordHintAtOffsetZero) {
  for (std::string data : {std::string("PK\x03\x04 this is a zip file, not records"), std::string("short")}) {
    RecordReader reader(data);
    RecordView rec;
    Status s = reader.Next(&rec);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss);
    EXPECT_TRUE(HasSubstr(s.message(), "at byte 0"));
    EXPECT_TRUE(HasSubstr(s.message(), "(is this a TFRecord file?)"));
  }
}

TEST(RecordReaderTest, SeekToIndexedRecord) {
  std::string index_text;
  std::string data = WriteRecords({"zero", "one", "two"}, &index_text);
  auto index = ParseIndex(index_text);
  ASSERT_TRUE(index.ok());
  RecordReader reader(data);
  reader.Seek((*index)[2].offset);
  RecordView rec;
  ASSERT_TRUE(reader.Next(&rec).ok());
  EXPECT_EQ(rec.data, "two");
  reader.Seek((*index)[1].offset);
  ASSERT_TRUE(reader.Next(&rec).ok());
  EXPECT_EQ(rec.data, "one");
}

TEST(RecordReaderTest, FaultNamesAreStable) {
  EXPECT_STREQ(RecordFaultName(RecordFault::kLengthCrcMismatch), "length_crc_mismatch");
  EXPECT_STREQ(RecordFaultName(RecordFault::kDataCrcMismatch), "data_crc_mismatch");
  EXPECT_STREQ(RecordFaultName(RecordFault::kTruncatedHeader), "truncated_header");
  EXPECT_STREQ(RecordFaultName(RecordFault::kTruncatedData), "truncated_data");
  EXPECT_STREQ(RecordFaultName(RecordFault::kLengthTooLarge), "length_too_large");
}

// ---------------------------------------------------------------- interop files

struct InteropFile {
  const char* name;
  size_t records;
  uint64_t uncompressed_bytes;
};

const InteropFile kPlainFiles[] = {
    {"beam_foo.tfrecord", 1, 19},
    {"beam_foo_bar.tfrecord", 2, 38},
    {"tfx_cifar10_train.tfrecord", 128, 295752},
    {"tfx_cifar10_test.tfrecord", 128, 290499},
    {"tfx_flowers_jpeg.tfrecord", 25, 1674853},
    {"tfx_mnist_floats.tfrecord", 1000, 3203000},
};
const InteropFile kGzipFiles[] = {
    {"tfx_penguin_train.tfrecord.gz", 234, 35568},
    {"tfx_tfjs_next_page.tfrecord.gz", 100, 8500},
};

TEST(RecordInteropTest, PlainFilesWithMappedReader) {
  std::string dir = SharedPath("interop/tfrecord");
  if (dir.empty()) GTEST_SKIP() << "shared interop data not found";
  for (const auto& f : kPlainFiles) {
    SCOPED_TRACE(f.name);
    auto file = io::MappedFile::Open(dir + "/" + f.name, io::AccessPattern::kSequential);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_EQ((*file)->size(), f.uncompressed_bytes);
    RecordReader reader((*file)->data());
    RecordView rec;
    Status s;
    while ((s = reader.Next(&rec)).ok()) {
    }
    EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s;
    EXPECT_EQ(reader.records_read(), f.records);
    EXPECT_EQ(reader.offset(), f.uncompressed_bytes);
  }
}

TEST(RecordInteropTest, MnistRecordSizes) {
  std::string dir = SharedPath("interop/tfrecord");
  if (dir.empty()) GTEST_SKIP() << "shared interop data not found";
  auto file = io::MappedFile::Open(dir + "/tfx_mnist_floats.tfrecord");
  ASSERT_TRUE(file.ok()) << file.status();
  RecordReader reader((*file)->data());
  RecordView rec;
  while (reader.Next(&rec).ok()) ASSERT_EQ(rec.data.size(), 3187u) << "record at " << rec.offset;
  EXPECT_EQ(reader.records_read(), 1000u);
}

// Reads every record of `path` with RecordStreamReader.
std::vector<std::string> StreamAll(const std::string& path, Compression c, Compression* used = nullptr,
                                   Status* end = nullptr, uint64_t* end_offset = nullptr) {
  std::vector<std::string> out;
  auto reader = RecordStreamReader::Open(path, c);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return out;
  RecordView rec;
  Status s;
  uint64_t offset = 0;
  while ((s = (*reader)->Next(&rec)).ok()) {
    EXPECT_EQ(rec.offset, offset);
    offset += rec.framed_size();
    EXPECT_EQ((*reader)->offset(), offset);
    out.emplace_back(rec.data);
  }
  if (used) *used = (*reader)->compression();
  if (end)
    *end = s;
  else
    EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s;
  if (end_offset) *end_offset = offset;
  return out;
}

TEST(RecordInteropTest, GzipFilesWithStreamReader) {
  std::string dir = SharedPath("interop/tfrecord");
  if (dir.empty()) GTEST_SKIP() << "shared interop data not found";
  for (const auto& f : kGzipFiles) {
    SCOPED_TRACE(f.name);
    std::string path = dir + "/" + f.name;
    Compression used = Compression::kAuto;
    uint64_t end = 0;
    auto detected = StreamAll(path, Compression::kAuto, &used, nullptr, &end);
    EXPECT_EQ(used, Compression::kGzip);
    EXPECT_EQ(detected.size(), f.records);
    EXPECT_EQ(end, f.uncompressed_bytes);
    auto explicit_gzip = StreamAll(path, Compression::kGzip, &used);
    EXPECT_EQ(used, Compression::kGzip);
    EXPECT_EQ(explicit_gzip, detected);
  }
}

TEST(RecordInteropTest, PlainFilesWithStreamReaderMatchSpanReader) {
  std::string dir = SharedPath("interop/tfrecord");
  if (dir.empty()) GTEST_SKIP() << "shared interop data not found";
  for (const auto& f : kPlainFiles) {
    SCOPED_TRACE(f.name);
    std::string path = dir + "/" + f.name;
    Compression used = Compression::kAuto;
    auto streamed = StreamAll(path, Compression::kAuto, &used);
    EXPECT_EQ(used, Compression::kNone);
    EXPECT_EQ(streamed, ReadAll(ReadFileOrDie(path)));
    EXPECT_EQ(streamed.size(), f.records);
  }
}

// ---------------------------------------------------------------- stream reader

std::string Compress(const std::string& raw, int level) {
  uLongf size = compressBound(raw.size());
  std::string out(size, '\0');
  int rc = compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
                     raw.size(), level);
  EXPECT_EQ(rc, Z_OK);
  out.resize(size);
  return out;
}

TEST(RecordStreamReaderTest, ZlibStream) {
  std::mt19937_64 rng(7);
  std::vector<std::string> payloads;
  for (int i = 0; i < 50; ++i) payloads.push_back(RandomBytes(rng, rng() % 5000) + std::string(rng() % 3000, 'r'));
  payloads.push_back(std::string(300000, 'q'));  // spans several inflate buffers
  std::string zlib = Compress(WriteRecords(payloads), 6);
  ASSERT_EQ(static_cast<unsigned char>(zlib[0]) & 0x0f, 8);  // deflate, zlib header
  EXPECT_EQ(DetectCompression(zlib), Compression::kZlib);

  std::string path = MakeTempDir() + "/z.tfrecord.zz";
  WriteFileOrDie(path, zlib);
  Compression used = Compression::kAuto;
  EXPECT_EQ(StreamAll(path, Compression::kAuto, &used), payloads);
  EXPECT_EQ(used, Compression::kZlib);
  EXPECT_EQ(StreamAll(path, Compression::kZlib, &used), payloads);
  EXPECT_EQ(used, Compression::kZlib);
}

TEST(RecordStreamReaderTest, TruncatedGzipIsDataLossNamingTheFile) {
  std::string dir = SharedPath("interop/tfrecord");
  if (dir.empty()) GTEST_SKIP() << "shared interop data not found";
  std::string gz = ReadFileOrDie(dir + "/tfx_penguin_train.tfrecord.gz");
  std::string path = MakeTempDir() + "/half.tfrecord.gz";
  WriteFileOrDie(path, gz.substr(0, gz.size() / 2));
  Status end;
  auto records = StreamAll(path, Compression::kAuto, nullptr, &end);
  EXPECT_LT(records.size(), 234u);
  EXPECT_EQ(end.code(), StatusCode::kDataLoss) << end;
  EXPECT_TRUE(HasSubstr(end.message(), path));
  EXPECT_TRUE(HasSubstr(end.message(), "truncated gzip stream"));
  EXPECT_TRUE(HasSubstr(end.message(), "byte " + std::to_string(gz.size() / 2)));
}

// With an empty name, messages are not prefixed (the caller names the file).
TEST(RecordStreamReaderTest, EmptyNameLeavesMessagesUnprefixed) {
  const std::string data = "definitely not a tfrecord file";
  Status named, unnamed;
  RecordView rec;
  auto a = RecordStreamReader::OpenBuffer(data, "f.tfrecord", Compression::kNone);
  while ((named = a->Next(&rec)).ok()) {
  }
  auto b = RecordStreamReader::OpenBuffer(data, "", Compression::kNone);
  while ((unnamed = b->Next(&rec)).ok()) {
  }
  EXPECT_EQ(unnamed.code(), StatusCode::kDataLoss);
  EXPECT_EQ(named.message(), "f.tfrecord: " + unnamed.message());
}

TEST(RecordStreamReaderTest, CorruptGzipIsDataLoss) {
  std::string dir = SharedPath("interop/tfrecord");
  if (dir.empty()) GTEST_SKIP() << "shared interop data not found";
  std::string gz = ReadFileOrDie(dir + "/tfx_penguin_train.tfrecord.gz");
  gz[gz.size() - 6] = static_cast<char>(gz[gz.size() - 6] ^ 0x55);  // inside the CRC32/ISIZE trailer
  std::string path = MakeTempDir() + "/bad.tfrecord.gz";
  WriteFileOrDie(path, gz);
  Status end;
  StreamAll(path, Compression::kGzip, nullptr, &end);
  EXPECT_EQ(end.code(), StatusCode::kDataLoss) << end;
  EXPECT_TRUE(HasSubstr(end.message(), path));
}

// The stream reader reports the same faults as the span reader, at stream
// offsets, prefixed with the file name.
TEST(RecordStreamReaderTest, PlainFileFaultsMatchSpanReader) {
  std::string good = WriteRecords({"first", std::string(100, 'm'), "last"});
  std::vector<std::string> damaged;
  auto flip = [&](size_t at) {
    std::string d = good;
    d[at] = static_cast<char>(d[at] ^ 1);
    damaged.push_back(d);
  };
  flip(21);
  flip(29);
  flip(21 + 12 + 40);
  flip(21 + 12 + 100);
  damaged.push_back(good.substr(0, 28));
  damaged.push_back(good.substr(0, 21 + 12 + 50));
  damaged.push_back(good + "trailing garbage here");
  damaged.push_back("definitely not a tfrecord file");
  std::string dir = MakeTempDir();
  for (size_t i = 0; i < damaged.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    std::string path = dir + "/d" + std::to_string(i);
    WriteFileOrDie(path, damaged[i]);
    RecordReader span(damaged[i]);
    RecordView rec;
    Status want;
    while ((want = span.Next(&rec)).ok()) {
    }
    ASSERT_EQ(want.code(), StatusCode::kDataLoss);
    Status got;
    auto records = StreamAll(path, Compression::kNone, nullptr, &got);
    EXPECT_EQ(records.size(), span.records_read());
    EXPECT_EQ(got.code(), StatusCode::kDataLoss);
    EXPECT_EQ(got.message(), path + ": " + want.message());
    // The stream reader's verdict is in stream coordinates, as the span reader's.
    auto stream = RecordStreamReader::Open(path, Compression::kNone);
    ASSERT_TRUE(stream.ok());
    while ((*stream)->Next(&rec).ok()) {
    }
    EXPECT_EQ((*stream)->framing_error().fault, span.framing_error().fault);
    EXPECT_EQ((*stream)->framing_error().offset, span.framing_error().offset);
    EXPECT_EQ((*stream)->framing_error().stated, span.framing_error().stated);
    EXPECT_EQ((*stream)->framing_error().computed, span.framing_error().computed);
  }
}

TEST(RecordStreamReaderTest, HugeLengthDoesNotAllocate) {
  char header[kHeaderSize];
  EncodeFixed64(uint64_t{1} << 50, header);
  EncodeFixed32(crc32c::Mask(crc32c::Value(header, 8)), header + 8);
  std::string path = MakeTempDir() + "/huge.tfrecord";
  WriteFileOrDie(path, std::string(header, kHeaderSize) + "tail");
  auto def = RecordStreamReader::Open(path);
  ASSERT_TRUE(def.ok());
  RecordView rec;
  Status s = (*def)->Next(&rec);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_TRUE(HasSubstr(s.message(), "exceeds the limit"));
}

TEST(RecordStreamReaderTest, EmptyAndMissingFiles) {
  std::string dir = MakeTempDir();
  WriteFileOrDie(dir + "/empty", "");
  EXPECT_TRUE(StreamAll(dir + "/empty", Compression::kAuto).empty());
  auto missing = RecordStreamReader::Open(dir + "/missing");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(HasSubstr(missing.status().message(), dir + "/missing"));
}

TEST(RecordStreamReaderTest, CompressionNames) {
  for (Compression c : {Compression::kAuto, Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    auto parsed = ParseCompression(CompressionName(c));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, c);
  }
  EXPECT_EQ(*ParseCompression("GZIP"), Compression::kGzip);
  EXPECT_EQ(*ParseCompression(""), Compression::kNone);
  EXPECT_EQ(ParseCompression("snappy").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseCompression("snappy").status().message(),
            "unknown compression \"snappy\" (expected auto, none, gzip or zlib)");
}

TEST(RecordStreamReaderTest, DataAfterZlibStreamIsDataLoss) {
  std::string zlib = Compress(WriteRecords({"a", "b"}), 6);
  const size_t end = zlib.size();
  std::string path = MakeTempDir() + "/trailing.tfrecord.zz";
  WriteFileOrDie(path, zlib + "junk");
  auto reader = RecordStreamReader::Open(path, Compression::kZlib);
  ASSERT_TRUE(reader.ok());
  RecordView rec;
  Status s;
  int records = 0;
  while ((s = (*reader)->Next(&rec)).ok()) ++records;
  EXPECT_EQ(records, 2);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), path + ": data after the end of the zlib stream at compressed byte " + std::to_string(end));
}

// ---------------------------------------------------------------- write errors

TEST(RecordWriterTest, DiskFullOnLargeWrite) {
  auto file = io::NewPosixWritableFile("/dev/full");
  if (!file.ok()) GTEST_SKIP() << "/dev/full unavailable: " << file.status();
  RecordWriter writer(std::move(*file), nullptr);
  Status s = writer.Write(std::string((1 << 20) + 100, 'x'));
  EXPECT_EQ(s.code(), StatusCode::kIOError) << s;
  EXPECT_TRUE(HasSubstr(s.message(), "No space left"));
  EXPECT_TRUE(HasSubstr(s.message(), "/dev/full"));
  // The error is sticky.
  EXPECT_EQ(writer.Write("small"), s);
  EXPECT_EQ(writer.Close(), s);
  EXPECT_EQ(writer.records_written(), 0u);
}

TEST(RecordWriterTest, DiskFullOnClose) {
  auto writer = RecordWriter::Create("/dev/full");
  if (!writer.ok()) GTEST_SKIP() << "/dev/full unavailable: " << writer.status();
  ASSERT_TRUE((*writer)->Write("buffered, not yet written").ok());
  Status s = (*writer)->Close();
  EXPECT_EQ(s.code(), StatusCode::kIOError) << s;
  EXPECT_TRUE(HasSubstr(s.message(), "No space left"));
}

TEST(RecordWriterTest, DiskFullOnFlush) {
  auto writer = RecordWriter::Create("/dev/full");
  if (!writer.ok()) GTEST_SKIP() << "/dev/full unavailable: " << writer.status();
  ASSERT_TRUE((*writer)->Write("buffered").ok());
  Status s = (*writer)->Flush();
  EXPECT_TRUE(HasSubstr(s.message(), "No space left"));
  // A writer whose flush failed must not report a clean close.
  EXPECT_FALSE((*writer)->Close().ok());
}

TEST(RecordWriterTest, WriteOrCloseAfterCloseFails) {
  std::string out;
  RecordWriter writer(io::NewStringWritableFile(&out, "mem"), nullptr);
  ASSERT_TRUE(writer.Write("x").ok());
  ASSERT_TRUE(writer.Close().ok());
  Status w = writer.Write("y");
  EXPECT_EQ(w.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(w.message(), "mem: write after close");
  Status c = writer.Close();
  EXPECT_EQ(c.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(c.message(), "mem: already closed");
  EXPECT_EQ(out.size(), 1 + kFramingOverhead);
}

TEST(RecordWriterTest, CreateInMissingDirectoryNamesPath) {
  std::string path = MakeTempDir() + "/no/such/dir/a.tfrecord";
  auto writer = RecordWriter::Create(path);
  EXPECT_EQ(writer.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(HasSubstr(writer.status().message(), path));
}

}  // namespace
}  // namespace libshard::record
