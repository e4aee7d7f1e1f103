// Tests of libshard::verify: every kind of damage, generated on real bytes,
// reported with its kind, offset and record number; index checks; argument
// expansion; several files in parallel; TensorFlow-written interop files.
// (--decode: decode_test.cc; the pread walk: read_window_test.cc; manifests
// and sets: verify_set_test.cc.)
#include "libshard/verify/verifier.h"
#include "libshard/io/shard_paths.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "deflate_testutil.h"
#include "libshard/example/example_builder.h"
#include "libshard/io/writable_file.h"
#include "libshard/record/format.h"
#include "libshard/record/index.h"
#include "libshard/record/record_writer.h"
#include "testutil.h"
#include "verify_samples.h"

namespace libshard::verify {
namespace {

using ::libshard::testing::MakeTempDir;
using ::libshard::testing::ReadFileOrDie;
using ::libshard::testing::SharedPath;
using ::libshard::testing::WriteFileOrDie;
using record::Compression;
using record::RecordFault;

using ::libshard::testing::HasSubstr;

using test::Frame;

std::string MakeExample(int i, size_t bytes) {
  example::ExampleBuilder b;
  b.AddBytes("image/encoded", std::string(bytes, static_cast<char>('a' + i)));
  b.AddInt64("image/class/label", i);
  return b.Serialize();
}

using ::libshard::testing::Deflate;

// The only fault of `r`, which must exist.
const Fault& OnlyFault(const FileResult& r) {
  EXPECT_EQ(r.faults.size(), 1u);
  static const Fault none{0, 0, FaultKind::kUnreadable, "<no fault>"};
  return r.faults.empty() ? none : r.faults[0];
}

// ------------------------------------------------------------- framing damage
//
// Three Examples; the damage is in the second one unless said otherwise.
class VerifyDamageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    payloads_ = {MakeExample(0, 10), MakeExample(1, 100), MakeExample(2, 20)};
    data_ = Frame(payloads_);
    second_ = payloads_[0].size() + record::kFramingOverhead;
    second_len_ = payloads_[1].size();
  }
  void FlipBit(size_t byte, int bit) { data_[byte] = static_cast<char>(data_[byte] ^ (1 << bit)); }

  // Verifies data_ and expects exactly one framing fault at the second record.
  void ExpectFaultAtSecond(FaultKind kind, const std::string& text) {
    FileResult r = VerifyBuffer(data_, "s.tfrecord", VerifyOptions());
    const Fault& f = OnlyFault(r);
    EXPECT_EQ(f.kind, kind) << FaultKindName(f.kind) << ": " << f.message;
    EXPECT_EQ(f.offset, second_);
    EXPECT_EQ(f.record, 1u);
    EXPECT_TRUE(HasSubstr(f.message, text));
    EXPECT_EQ(r.records, 1u);
    EXPECT_EQ(r.bytes, second_);
    ASSERT_TRUE(r.unchecked_bytes.has_value());
    EXPECT_EQ(*r.unchecked_bytes, data_.size() - second_);
    EXPECT_FALSE(r.ok());
  }

  std::vector<std::string> payloads_;
  std::string data_;
  uint64_t second_ = 0;
  uint64_t second_len_ = 0;
};

TEST_F(VerifyDamageTest, IntactFileIsClean) {
  FileResult r = VerifyBuffer(data_, "s.tfrecord", VerifyOptions());
  EXPECT_TRUE(r.ok()) << (r.faults.empty() ? "" : r.faults[0].message);
  EXPECT_EQ(r.path, "s.tfrecord");
  EXPECT_EQ(r.compression, Compression::kNone);
  EXPECT_EQ(r.records, 3u);
  EXPECT_EQ(r.bytes, data_.size());
  EXPECT_EQ(r.unchecked_bytes, std::optional<uint64_t>(0));
}

TEST_F(VerifyDamageTest, FlippedBitInLength) {
  FlipBit(second_ + 1, 2);
  ExpectFaultAtSecond(FaultKind::kLengthCrcMismatch, "length CRC mismatch");
}

TEST_F(VerifyDamageTest, FlippedBitInLengthCrc) {
  FlipBit(second_ + 9, 0);
  ExpectFaultAtSecond(FaultKind::kLengthCrcMismatch, "length CRC mismatch");
}

TEST_F(VerifyDamageTest, FlippedBitInData) {
  FlipBit(second_ + record::kHeaderSize + 40, 6);
  ExpectFaultAtSecond(FaultKind::kDataCrcMismatch, "data CRC mismatch");
}

TEST_F(VerifyDamageTest, FlippedBitInDataCrc) {
  FlipBit(second_ + record::kHeaderSize + second_len_ + 2, 7);
  ExpectFaultAtSecond(FaultKind::kDataCrcMismatch, "data CRC mismatch");
}

TEST_F(VerifyDamageTest, TruncatedInsideHeader) {
  data_.resize(second_ + 5);
  ExpectFaultAtSecond(FaultKind::kTruncatedHeader, "header needs 12 bytes, 5 remain");
}

TEST_F(VerifyDamageTest, TruncatedInsideData) {
  data_.resize(second_ + record::kHeaderSize + 30);
  ExpectFaultAtSecond(FaultKind::kTruncatedData, "42 remain");
}

TEST_F(VerifyDamageTest, HugeLengthWithValidCrc) {
  char header[record::kHeaderSize];
  record::EncodeHeader(uint64_t{1} << 40, header);
  data_.replace(second_, record::kHeaderSize, header, record::kHeaderSize);
  ExpectFaultAtSecond(FaultKind::kLengthTooLarge, "exceeds the limit of 1073741824 bytes");
}

TEST_F(VerifyDamageTest, TrailingGarbage) {
  const uint64_t end = data_.size();
  data_ += "trailing garbage after the last record";
  FileResult r = VerifyBuffer(data_, "s.tfrecord", VerifyOptions());
  const Fault& f = OnlyFault(r);
  EXPECT_EQ(f.kind, FaultKind::kLengthCrcMismatch);
  EXPECT_EQ(f.offset, end);
  EXPECT_EQ(f.record, 3u);
  EXPECT_EQ(r.records, 3u);
  EXPECT_EQ(r.unchecked_bytes, std::optional<uint64_t>(data_.size() - end));
}

TEST_F(VerifyDamageTest, ShortTrailingGarbageIsTruncatedHeader) {
  const uint64_t end = data_.size();
  data_ += "\n\n\n";
  FileResult r = VerifyBuffer(data_, "s.tfrecord", VerifyOptions());
  const Fault& f = OnlyFault(r);
  EXPECT_EQ(f.kind, FaultKind::kTruncatedHeader);
  EXPECT_EQ(f.offset, end);
  EXPECT_EQ(f.record, 3u);
}

TEST_F(VerifyDamageTest, FlippedBitInFirstHeaderReadsAsNotTfrecord) {
  FlipBit(3, 1);
  FileResult r = VerifyBuffer(data_, "s.tfrecord", VerifyOptions());
  const Fault& f = OnlyFault(r);
  EXPECT_EQ(f.kind, FaultKind::kNotTfrecord);
  EXPECT_EQ(f.offset, 0u);
  EXPECT_TRUE(HasSubstr(f.message, "length CRC mismatch"));
  EXPECT_EQ(r.unchecked_bytes, std::optional<uint64_t>(data_.size()));
}

TEST_F(VerifyDamageTest, MaxRecordLengthOption) {
  VerifyOptions options;
  options.max_record_length = second_len_ - 1;
  FileResult r = VerifyBuffer(data_, "s.tfrecord", options);
  EXPECT_EQ(OnlyFault(r).kind, FaultKind::kLengthTooLarge);
  EXPECT_EQ(OnlyFault(r).offset, second_);
}

// ------------------------------------------------------------ payload checks

TEST(VerifyPayloadTest, ValidRecordsThatAreNotExamples) {
  const std::string data = Frame({"foo", "bar"});
  FileResult r = VerifyBuffer(data, "beam.tfrecord", VerifyOptions());
  ASSERT_EQ(r.faults.size(), 2u);
  EXPECT_EQ(r.faults[0].kind, FaultKind::kNotAnExample);
  EXPECT_EQ(r.faults[0].offset, 0u);
  EXPECT_EQ(r.faults[0].record, 0u);
  EXPECT_EQ(r.faults[1].offset, 19u);
  EXPECT_EQ(r.faults[1].record, 1u);
  EXPECT_TRUE(HasSubstr(r.faults[0].message, "is not a tf.Example"));
  EXPECT_TRUE(HasSubstr(r.faults[0].message, "at byte 0"));  // within the record, from ExampleView
  // The framing is intact: all records counted, nothing left unchecked.
  EXPECT_EQ(r.records, 2u);
  EXPECT_EQ(r.unchecked_bytes, std::optional<uint64_t>(0));

  VerifyOptions framing_only;
  framing_only.check_examples = false;
  EXPECT_TRUE(VerifyBuffer(data, "beam.tfrecord", framing_only).ok());
}

TEST(VerifyPayloadTest, NotAnExampleDoesNotHideLaterFramingFaults) {
  std::string data = Frame({"foo", MakeExample(1, 10)});
  data += "junk";
  FileResult r = VerifyBuffer(data, "x", VerifyOptions());
  ASSERT_EQ(r.faults.size(), 2u);
  EXPECT_EQ(r.faults[0].kind, FaultKind::kNotAnExample);
  EXPECT_EQ(r.faults[1].kind, FaultKind::kTruncatedHeader);
  EXPECT_EQ(r.faults[1].record, 2u);
}

TEST(VerifyPayloadTest, FaultsBeyondTheLimitAreCounted) {
  const std::string data = Frame({"a1", "a2", "a3", "a4", "a5"});
  VerifyOptions options;
  options.max_faults_per_file = 2;
  FileResult r = VerifyBuffer(data, "x", options);
  EXPECT_EQ(r.faults.size(), 2u);
  EXPECT_EQ(r.faults_omitted, 3u);
  EXPECT_EQ(r.fault_count(), 5u);
  EXPECT_EQ(r.records, 5u);
}

// ------------------------------------------------------------ not a TFRecord

TEST(VerifyNotTfrecordTest, PngBytes) {
  const std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0", 29);
  FileResult r = VerifyBuffer(png, "image.png", VerifyOptions());
  const Fault& f = OnlyFault(r);
  EXPECT_EQ(f.kind, FaultKind::kNotTfrecord);
  EXPECT_EQ(f.offset, 0u);
  EXPECT_EQ(f.record, 0u);
  EXPECT_TRUE(HasSubstr(f.message, "PNG"));
  EXPECT_EQ(r.records, 0u);
  EXPECT_EQ(r.unchecked_bytes, std::optional<uint64_t>(png.size()));
}

// What the file looks like comes from image::DescribeContent, the formats
// that are not read and a zstd frame included.
TEST(VerifyNotTfrecordTest, WhatTheFileLooksLike) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {std::string("RIFF\x10\0\0\0WEBPVP8 \x01\x02\x03\x04", 20), "(looks like a WebP image)"},
      {std::string("GIF89a\x01\0\x01\0\x80\0\0\x01\x02", 15), "(looks like a GIF image)"},
      {std::string("(\xb5/\xfd\x01\x02\x03\x04\x05\x06\x07\x08", 12), "(looks like zstd data)"},
      {std::string("\xff\xd8\xff\xe0\x01\x02\x03\x04\x05\x06\x07\x08", 12), "(looks like a JPEG image)"}};
  for (const auto& [bytes, what] : cases) {
    const Fault f = OnlyFault(VerifyBuffer(bytes, "x", VerifyOptions()));
    EXPECT_EQ(f.kind, FaultKind::kNotTfrecord);
    EXPECT_EQ(f.message.rfind("not a TFRecord file " + what + ": first record's ", 0), 0u) << f.message;
  }
  const Fault none = OnlyFault(VerifyBuffer(std::string(12, '\x01'), "x", VerifyOptions()));
  EXPECT_EQ(none.message.rfind("not a TFRecord file: first record's ", 0), 0u) << none.message;
}

TEST(VerifyNotTfrecordTest, TextFiles) {
  FileResult r = VerifyBuffer("label,path\n3,cat.png\n", "list.csv", VerifyOptions());
  EXPECT_EQ(OnlyFault(r).kind, FaultKind::kNotTfrecord);
  EXPECT_TRUE(HasSubstr(OnlyFault(r).message, "text"));
  FileResult short_text = VerifyBuffer("hi\n", "x", VerifyOptions());
  EXPECT_EQ(OnlyFault(short_text).kind, FaultKind::kNotTfrecord);
  EXPECT_TRUE(HasSubstr(OnlyFault(short_text).message, "header needs 12 bytes"));
}

TEST(VerifyEmptyTest, EmptyFileIsAFaultByDefault) {
  FileResult r = VerifyBuffer("", "empty.tfrecord", VerifyOptions());
  EXPECT_EQ(OnlyFault(r).kind, FaultKind::kEmptyFile);
  EXPECT_EQ(OnlyFault(r).offset, 0u);
  VerifyOptions allow;
  allow.allow_empty = true;
  FileResult ok = VerifyBuffer("", "empty.tfrecord", allow);
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.records, 0u);
}

// ----------------------------------------------------------------- compressed

TEST(VerifyCompressedTest, GzipAndZlibAutoDetected) {
  const std::string plain = Frame({MakeExample(0, 500), MakeExample(1, 700)});
  for (auto [wbits, want] : {std::pair{16 + MAX_WBITS, Compression::kGzip}, std::pair{MAX_WBITS, Compression::kZlib}}) {
    const std::string packed = Deflate(plain, wbits);
    FileResult r = VerifyBuffer(packed, "s.tfrecord.gz", VerifyOptions());
    EXPECT_TRUE(r.ok()) << (r.faults.empty() ? "" : r.faults[0].message);
    EXPECT_EQ(r.compression, want);
    EXPECT_EQ(r.records, 2u);
    EXPECT_EQ(r.bytes, plain.size());  // uncompressed bytes
    VerifyOptions explicit_opt;
    explicit_opt.compression = want;
    EXPECT_TRUE(VerifyBuffer(packed, "s.tfrecord.gz", explicit_opt).ok());
  }
}

TEST(VerifyCompressedTest, TruncatedAndCorruptGzip) {
  const std::string plain = Frame({MakeExample(0, 5000), MakeExample(1, 7000)});
  const std::string packed = Deflate(plain, 16 + MAX_WBITS);
  FileResult cut = VerifyBuffer(packed.substr(0, packed.size() - 10), "s.gz", VerifyOptions());
  const Fault& f = OnlyFault(cut);
  EXPECT_EQ(f.kind, FaultKind::kCompressedStreamCorrupt) << f.message;
  EXPECT_TRUE(HasSubstr(f.message, "truncated gzip stream"));
  EXPECT_FALSE(cut.unchecked_bytes.has_value());

  std::string bad = packed;
  bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x55);
  FileResult r = VerifyBuffer(bad, "s.gz", VerifyOptions());
  ASSERT_FALSE(r.ok());
  // Inflate may or may not notice; if it does not, the record CRC does.
  FaultKind k = r.faults[0].kind;
  EXPECT_TRUE(k == FaultKind::kCompressedStreamCorrupt || k == FaultKind::kDataCrcMismatch ||
              k == FaultKind::kLengthCrcMismatch)
      << FaultKindName(k);
}

TEST(VerifyCompressedTest, PlainDataReadAsGzipIsStreamCorrupt) {
  VerifyOptions options;
  options.compression = Compression::kGzip;
  FileResult r = VerifyBuffer(Frame({MakeExample(0, 10)}), "s", options);
  EXPECT_EQ(OnlyFault(r).kind, FaultKind::kCompressedStreamCorrupt);
}

TEST(VerifyCompressedTest, FramingDamageInsideGzip) {
  std::string plain = Frame({MakeExample(0, 10), MakeExample(1, 10)});
  const uint64_t second = plain.size() / 2;
  plain[second + record::kHeaderSize + 3] ^= 1;
  FileResult r = VerifyBuffer(Deflate(plain, 16 + MAX_WBITS), "s.gz", VerifyOptions());
  const Fault& f = OnlyFault(r);
  EXPECT_EQ(f.kind, FaultKind::kDataCrcMismatch);
  EXPECT_EQ(f.offset, second);
  EXPECT_EQ(f.record, 1u);
  EXPECT_EQ(f.message.find("s.gz"), std::string::npos) << f.message;
}

// ---------------------------------------------------------------------- index

// Through VerifyFile, with the index as `s.tfrecord.idx` beside the shard.
class VerifyIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = Frame({MakeExample(0, 10), MakeExample(1, 20), MakeExample(2, 30)}, &index_);
    dir_ = MakeTempDir();
    WriteFileOrDie(Shard(), data_);
  }
  std::string Shard() const { return dir_ + "/s.tfrecord"; }
  // The shard verified with `index_text` as its index.
  FileResult WithIndex(const std::string& index_text) {
    WriteFileOrDie(Shard() + ".idx", index_text);
    return VerifyFile(Shard(), VerifyOptions());
  }
  std::string data_, index_, dir_;
};

TEST_F(VerifyIndexTest, MatchingIndex) { EXPECT_TRUE(WithIndex(index_).ok()); }

TEST_F(VerifyIndexTest, MissingLastLine) {
  std::string stale = index_.substr(0, index_.rfind('\n', index_.size() - 2) + 1);
  const FileResult r = WithIndex(stale);
  const Fault& f = OnlyFault(r);
  EXPECT_EQ(f.kind, FaultKind::kIndexMismatch);
  EXPECT_EQ(f.record, 2u);
  EXPECT_TRUE(HasSubstr(f.message, Shard() + ".idx has 2 lines")) << f.message;
}

TEST_F(VerifyIndexTest, WrongOffset) {
  auto entries = record::ParseIndex(index_);
  ASSERT_TRUE(entries.ok());
  (*entries)[1].offset += 1;
  const FileResult r = WithIndex(record::FormatIndex(*entries));
  const Fault& f = OnlyFault(r);
  EXPECT_EQ(f.kind, FaultKind::kIndexMismatch);
  EXPECT_EQ(f.record, 1u);
  EXPECT_EQ(f.offset, (*entries)[1].offset - 1);
  EXPECT_TRUE(HasSubstr(f.message, "line 2"));
}

TEST_F(VerifyIndexTest, ExtraLine) {
  const FileResult r = WithIndex(index_ + std::to_string(data_.size()) + " 30\n");
  EXPECT_EQ(OnlyFault(r).kind, FaultKind::kIndexMismatch);
  EXPECT_EQ(OnlyFault(r).offset, data_.size());
  EXPECT_TRUE(HasSubstr(OnlyFault(r).message, "s.tfrecord.idx line 4")) << OnlyFault(r).message;
}

TEST_F(VerifyIndexTest, UnparseableIndex) {
  const FileResult r = WithIndex("0 46\nbanana\n");
  EXPECT_EQ(OnlyFault(r).kind, FaultKind::kIndexMismatch);
  EXPECT_TRUE(HasSubstr(OnlyFault(r).message, "line 2"));
}

// An index is compared only with intact framing: a broken shard reports its
// framing fault alone.
TEST_F(VerifyIndexTest, NotComparedWithBrokenFraming) {
  WriteFileOrDie(Shard(), data_.substr(0, data_.size() - 3));
  const FileResult r = WithIndex(index_);
  EXPECT_EQ(OnlyFault(r).kind, FaultKind::kTruncatedData);
}

// ------------------------------------------------------------- files on disk

TEST(VerifyFileTest, StaleIndexBesideTheShard) {
  const std::string dir = MakeTempDir();
  std::string index;
  const std::string data = Frame({MakeExample(0, 10), MakeExample(1, 20)}, &index);
  WriteFileOrDie(dir + "/a.tfrecord", data);
  WriteFileOrDie(dir + "/a.tfrecord.idx", index);
  EXPECT_TRUE(VerifyFile(dir + "/a.tfrecord", VerifyOptions()).ok());
  WriteFileOrDie(dir + "/a.tfrecord.idx", index.substr(0, index.find('\n') + 1));
  FileResult r = VerifyFile(dir + "/a.tfrecord", VerifyOptions());
  EXPECT_EQ(OnlyFault(r).kind, FaultKind::kIndexMismatch);
  VerifyOptions no_index;
  no_index.check_index = false;
  EXPECT_TRUE(VerifyFile(dir + "/a.tfrecord", no_index).ok());
}

TEST(VerifyFileTest, MissingFileIsUnreadable) {
  const std::string path = MakeTempDir() + "/nope.tfrecord";
  FileResult r = VerifyFile(path, VerifyOptions());
  EXPECT_EQ(OnlyFault(r).kind, FaultKind::kUnreadable);
  EXPECT_EQ(OnlyFault(r).message, "open " + path + ": No such file or directory");
  EXPECT_EQ(r.records, 0u);
}

// io's errors name the file once; the verifier passes them on as they are.
TEST(VerifyFileTest, UnreadableFaultsCarryIosMessageAsItIs) {
  const std::string dir = MakeTempDir();
  ASSERT_EQ(::mkfifo((dir + "/f.tfrecord").c_str(), 0600), 0);
  FileResult r = VerifyFile(dir + "/f.tfrecord", VerifyOptions());
  EXPECT_EQ(OnlyFault(r).kind, FaultKind::kUnreadable);
  EXPECT_EQ(OnlyFault(r).message, dir + "/f.tfrecord: is a FIFO, not a regular file");
}

// A compressed stream's fault is the stream reader's message, not naming
// the file (the result does).
TEST(VerifyCompressedTest, StreamFaultsDoNotNameTheFile) {
  const std::string packed = Deflate(Frame({MakeExample(0, 5000)}), 16 + MAX_WBITS);
  const std::string dir = MakeTempDir();
  WriteFileOrDie(dir + "/s.gz", packed.substr(0, packed.size() - 10));
  for (const FileResult& r : {VerifyBuffer(packed.substr(0, packed.size() - 10), dir + "/s.gz", VerifyOptions()),
                              VerifyFile(dir + "/s.gz", VerifyOptions())}) {
    EXPECT_EQ(OnlyFault(r).message.rfind("truncated gzip stream: compressed data ends at byte ", 0), 0u)
        << OnlyFault(r).message;
  }
}

TEST(VerifyFileTest, ManyFilesInArgumentOrderWhateverTheThreads) {
  const std::string dir = MakeTempDir();
  std::vector<std::string> paths;
  for (int i = 0; i < 12; ++i) {
    std::string data = Frame({MakeExample(i, 100 + i), MakeExample(i + 1, 50)});
    if (i == 7) data[data.size() - 1] ^= 1;
    paths.push_back(dir + "/f" + std::to_string(11 - i) + ".tfrecord");
    WriteFileOrDie(paths.back(), data);
  }
  for (int threads : {1, 2, 4}) {
    VerifyOptions options;
    options.threads = threads;
    std::vector<FileResult> results = VerifyFiles(paths, options);
    ASSERT_EQ(results.size(), paths.size());
    for (size_t i = 0; i < paths.size(); ++i) {
      EXPECT_EQ(results[i].path, paths[i]);
      EXPECT_EQ(results[i].records, i == 7 ? 1u : 2u) << i;
      EXPECT_EQ(results[i].ok(), i != 7) << i;
    }
    EXPECT_EQ(OnlyFault(results[7]).kind, FaultKind::kDataCrcMismatch);
  }
}

TEST(VerifyOptionsTest, Validate) {
  EXPECT_TRUE(ValidateOptions(VerifyOptions()).ok());
  VerifyOptions bad;
  bad.max_faults_per_file = 0;
  EXPECT_EQ(ValidateOptions(bad).code(), StatusCode::kInvalidArgument);
  bad = VerifyOptions();
  bad.threads = -1;
  EXPECT_EQ(ValidateOptions(bad).code(), StatusCode::kInvalidArgument);
  bad.threads = 257;  // 70000 threads crashed oneTBB
  EXPECT_EQ(ValidateOptions(bad).message(), "threads must be in 0..256 (0: one per core)");
  bad.threads = 256;
  EXPECT_TRUE(ValidateOptions(bad).ok());
}

TEST(FaultKindTest, FramingKindsShareTheRecordModulesNames) {
  for (RecordFault f : {RecordFault::kTruncatedHeader, RecordFault::kLengthCrcMismatch, RecordFault::kLengthTooLarge,
                        RecordFault::kTruncatedData, RecordFault::kDataCrcMismatch}) {
    EXPECT_STREQ(FaultKindName(FramingFaultKind(f)), record::RecordFaultName(f));
  }
  EXPECT_EQ(FramingFaultKind(RecordFault::kNone), FaultKind::kUnreadable);
}

TEST(FaultKindTest, NamesAreStable) {
  EXPECT_STREQ(FaultKindName(FaultKind::kLengthCrcMismatch), "length_crc_mismatch");
  EXPECT_STREQ(FaultKindName(FaultKind::kLengthTooLarge), "length_too_large");
  EXPECT_STREQ(FaultKindName(FaultKind::kTruncatedHeader), "truncated_header");
  EXPECT_STREQ(FaultKindName(FaultKind::kTruncatedData), "truncated_data");
  EXPECT_STREQ(FaultKindName(FaultKind::kDataCrcMismatch), "data_crc_mismatch");
  EXPECT_STREQ(FaultKindName(FaultKind::kNotAnExample), "not_an_example");
  EXPECT_STREQ(FaultKindName(FaultKind::kEmptyFile), "empty_file");
  EXPECT_STREQ(FaultKindName(FaultKind::kIndexMismatch), "index_mismatch");
  EXPECT_STREQ(FaultKindName(FaultKind::kNotTfrecord), "not_tfrecord");
  EXPECT_STREQ(FaultKindName(FaultKind::kUnreadable), "unreadable");
  EXPECT_STREQ(FaultKindName(FaultKind::kCompressedStreamCorrupt), "compressed_stream_corrupt");
  EXPECT_STREQ(FaultKindName(FaultKind::kManifestLabelOutOfRange), "manifest_label_out_of_range");
  EXPECT_STREQ(FaultKindName(FaultKind::kManifestSchema), "manifest_schema");
  // The set-level kinds: their own enum, the same names.
  EXPECT_STREQ(FaultKindName(SetFaultKind::kManifestUnreadable), "manifest_unreadable");
  EXPECT_STREQ(FaultKindName(SetFaultKind::kManifestInvalid), "manifest_invalid");
  EXPECT_STREQ(FaultKindName(SetFaultKind::kManifestFormat), "manifest_format");
  EXPECT_STREQ(FaultKindName(SetFaultKind::kManifestShardMissing), "manifest_shard_missing");
  EXPECT_STREQ(FaultKindName(SetFaultKind::kManifestShardUnlisted), "manifest_shard_unlisted");
  EXPECT_STREQ(FaultKindName(SetFaultKind::kManifestRecordCount), "manifest_record_count");
  EXPECT_STREQ(FaultKindName(SetFaultKind::kManifestSize), "manifest_size");
  EXPECT_STREQ(FaultKindName(SetFaultKind::kManifestChecksum), "manifest_checksum");
  EXPECT_STREQ(FaultKindName(SetFaultKind::kSetIncomplete), "set_incomplete");
}

// ------------------------------------------------------------------- interop

TEST(VerifyInteropTest, TensorFlowFiles) {
  const std::string dir = SharedPath("interop/tfrecord");
  if (dir.empty()) GTEST_SKIP() << "shared interop data not found (LIBSHARD_SHARED_DIR)";
  auto paths = io::ExpandPaths({dir});
  ASSERT_TRUE(paths.ok()) << paths.status();
  EXPECT_EQ(paths->size(), 8u);
  std::vector<FileResult> results = VerifyFiles(*paths, VerifyOptions());
  VerifyOptions framing_only;
  framing_only.check_examples = false;
  for (const FileResult& r : results) {
    const std::string name = std::filesystem::path(r.path).filename().string();
    EXPECT_GT(r.records, 0u) << name;
    if (name.rfind("beam_", 0) == 0) {
      // Apache Beam's test files hold raw records "foo" / "bar", not Examples.
      ASSERT_FALSE(r.faults.empty()) << name;
      for (const Fault& f : r.faults) EXPECT_EQ(f.kind, FaultKind::kNotAnExample) << name;
      EXPECT_EQ(r.faults.size(), r.records) << name;
      EXPECT_TRUE(VerifyFile(r.path, framing_only).ok()) << name;
    } else {
      EXPECT_TRUE(r.ok()) << name << ": " << (r.faults.empty() ? "" : r.faults[0].message);
    }
    const bool gz = name.size() > 3 && name.substr(name.size() - 3) == ".gz";
    EXPECT_EQ(r.compression, gz ? Compression::kGzip : Compression::kNone) << name;
    if (gz) {
      VerifyOptions gzip;
      gzip.compression = Compression::kGzip;
      EXPECT_TRUE(VerifyFile(r.path, gzip).ok()) << name;
    } else {
      EXPECT_EQ(r.bytes, ReadFileOrDie(r.path).size()) << name;
    }
  }
}

}  // namespace
}  // namespace libshard::verify
