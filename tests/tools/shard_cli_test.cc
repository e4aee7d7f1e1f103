// The `shard` program as users run it: help, usage errors and exit codes,
// `shard inspect` and `shard index` on real and damaged files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "libshard/crc32c.h"
#include "libshard/example/example_builder.h"
#include "libshard/record/format.h"
#include "libshard/record/index.h"
#include "libshard/record/record_writer.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;
using testing::MakeTempDir;
using testing::ReadFileOrDie;
using testing::SharedPath;
using testing::WriteFileOrDie;

using Result = testing::CommandResult;

using testing::Contains;
using testing::RunShard;

// Writes a shard of n small Examples; returns its path.
std::string MakeShard(const std::string& dir, int n) {
  const std::string path = dir + "/s.tfrecord";
  auto writer = record::RecordWriter::Create(path);
  EXPECT_TRUE(writer.ok()) << writer.status();
  for (int i = 0; i < n; ++i) {
    example::ExampleBuilder b;
    b.AddBytes("image/encoded", std::string(100 + i, 'x'));
    b.AddInt64("image/class/label", i);
    EXPECT_TRUE((*writer)->Write(b.Serialize()).ok());
  }
  EXPECT_TRUE((*writer)->Close().ok());
  return path;
}

TEST(ShardCliTest, HelpGoesToStdoutWithExitZero) {
  Result r = RunShard("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("inspect"), std::string::npos);
  EXPECT_NE(r.out.find("index"), std::string::npos);
  EXPECT_EQ(r.out.find("bench"), std::string::npos) << "the benchmarks are shard-bench's, not shard's";
  EXPECT_EQ(r.err, "");
  for (const char* sub : {"inspect", "index", "verify", "convert", "merge"}) {
    Result s = RunShard(std::string(sub) + " --help");
    EXPECT_EQ(s.exit_code, 0) << sub;
    EXPECT_NE(s.out.find("Usage"), std::string::npos) << sub;
  }
  EXPECT_EQ(RunShard("bench crc").exit_code, 2);
}

// Issue 32: `shard --help` was a wall (every subcommand's whole description,
// exit codes included); it lists them one line each in two sections, and
// `shard convert --help` puts its 60 options in sections, none left in the
// catch-all "Options:" but --help.
TEST(ShardCliTest, HelpReadsInSections) {
  Result r = RunShard("--help");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.out, "\nWrite shards:\n  convert ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\nCheck and look:\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "Run `shard SUBCOMMAND --help` for its options and exit codes.")) << r.out;
  EXPECT_FALSE(Contains(r.out, "Exit codes: 0 every input converted")) << r.out;
  size_t lines = 0;
  for (size_t at = 0, nl; (nl = r.out.find('\n', at)) != std::string::npos; at = nl + 1, ++lines) {
    EXPECT_LE(nl - at, 110u) << r.out.substr(at, nl - at);
  }
  EXPECT_LE(lines, 25u) << r.out;

  Result c = RunShard("convert --help");
  ASSERT_EQ(c.exit_code, 0);
  for (const char* group : {"Input (a folder, or a CSV manifest's columns):", "Masks and detection boxes:", "Output:",
                            "Image (decode, resize, encode):", "Leak check and duplicates:",
                            "Object storage (-o s3://BUCKET/PREFIX):", "Tasks and threads:", "Run:"}) {
    EXPECT_TRUE(Contains(c.out, std::string("\n") + group + "\n")) << group;
  }
  const size_t options = c.out.find("\nOptions:\n");
  ASSERT_NE(options, std::string::npos) << c.out;
  const std::string catch_all = c.out.substr(options, c.out.find("\n\n", options + 1) - options);
  EXPECT_EQ(catch_all, "\nOptions:\n  -h,--help                   Print this help message and exit")
      << "an option outside the sections";
}

// Issue 32: the detected layout and "gray sources are stored as RGB" are
// said once the input is listed, before the long part: the layout before the
// first progress line, the gray notice before the summary (the samples are
// gray 28x28 PNGs; the count still comes at the end).
TEST(ShardCliTest, ConvertSaysTheLayoutAndGrayBeforeTheLongPart) {
  const std::string dir = MakeTempDir();
  Result r = RunShard("convert " + testing::SourceDir() + "/samples/images -o " + dir +
                      "/out --no-sync --leaks off --progress-interval 0.001");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t layout = r.err.find("shard convert: layout split/class: split train 80 samples");
  const size_t progress = r.err.find("shard convert: progress ");
  const size_t gray = r.err.find("shard convert: gray sources are stored as RGB (--channels auto keeps them gray)");
  const size_t summary = r.err.find(" converted in this run ");
  ASSERT_NE(layout, std::string::npos) << r.err;
  ASSERT_NE(progress, std::string::npos) << r.err;
  ASSERT_NE(gray, std::string::npos) << r.err;
  ASSERT_NE(summary, std::string::npos) << r.err;
  EXPECT_LT(layout, progress) << r.err;
  EXPECT_LT(gray, summary) << r.err;
  EXPECT_EQ(r.err.find("layout split/class", layout + 40), std::string::npos) << "said once: " << r.err;
  EXPECT_TRUE(Contains(r.err, "shard convert: 100 gray source(s) stored as RGB")) << r.err;
  Result quiet = RunShard("convert -q " + testing::SourceDir() + "/samples/images -o " + dir + "/q --no-sync");
  EXPECT_EQ(quiet.err, "");
}

#ifdef SHARD_BENCH_BIN
Result RunBench(const std::string& args) { return testing::RunCommand(std::string(SHARD_BENCH_BIN) + " " + args); }

TEST(ShardBenchCliTest, HelpAndCountOptionsOutOfRange) {
  for (const char* sub : {"", "crc", "read", "verify", "codec", "convert"}) {
    Result s = RunBench(std::string(sub) + " --help");
    EXPECT_EQ(s.exit_code, 0) << sub;
    EXPECT_NE(s.out.find("Usage"), std::string::npos) << sub;
  }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"read --threads 0", "--threads: '0' is out of range (1..256)"},
      {"read --threads 70000", "--threads: '70000' is out of range (1..256)"},
      {"read --records -1", "--records: '-1' is out of range"},
      {"read --batch-size 0", "--batch-size: '0' is out of range"},
      {"read --images -5", "--images: '-5' is out of range"},
      {"read --seconds -1", "--seconds: '-1' is out of range (0.001..3600)"},
      {"verify --shards 0", "--shards: '0' is out of range"},
      {"verify --record-bytes -1", "--record-bytes: '-1' is out of range"},
      {"verify --copies 0", "--copies: '0' is out of range (1..100000)"},
      {"crc --sizes -1", "--sizes: '-1' is out of range"},
      {"convert --threads -1", "--threads: '-1' is out of range (1..256)"},
      {"convert --count 0", "--count: '0' is out of range"},
      {"codec --rounds 0", "--rounds: '0' is out of range (1..100)"},
  };
  for (const auto& [args, message] : cases) {
    Result r = RunBench(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_TRUE(Contains(r.err, message)) << args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
}

TEST(ShardBenchCliTest, TablesWithoutTheirInputsAreSkippedWithAMessage) {
  Result v = RunBench("verify --shards 1 --records 2 --record-bytes 10 --seconds 0.001 --small-file /nonexistent/x");
  EXPECT_EQ(v.exit_code, 0) << v.err;
  EXPECT_TRUE(Contains(v.out, "many small files: skipped (/nonexistent/x not found)")) << v.out;
  Result r = RunBench("read --records 2 --record-bytes 10 --seconds 0.001 --raw --photos /nonexistent/photos");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "raw vs JPEG: skipped (")) << r.out;
}
#endif

TEST(ShardCliTest, BadFlagGivesUsageOnStderrAndExitTwo) {
  Result r = RunShard("inspect --no-such-flag x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--no-such-flag"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("usage: shard inspect"), std::string::npos) << r.err;
  EXPECT_EQ(RunShard("").exit_code, 2);
  EXPECT_EQ(RunShard("no-such-subcommand").exit_code, 2);
}

// Issue 32: a flag that starts a longer one gets a suggestion.
TEST(ShardCliTest, AShortenedFlagGetsADidYouMean) {
  Result r = RunShard("convert in -o out --resize center-crop");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("(--resize: did you mean --resize-mode?)"), std::string::npos) << r.err;
  r = RunShard("inspect --no-such-flag x");
  EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
}

// Every count option of every subcommand: a negative, zero, huge or
// non-decimal value is a usage error naming the option (CLI11 alone reads
// "-1" for an unsigned option as 2^64-1: SIGFPE in the plan, SIGSEGV in
// oneTBB for --threads 70000).
TEST(ShardCliTest, CountOptionsOutOfRangeExitTwoNamingTheOption) {
  const std::string dir = MakeTempDir();
  const std::string shard = MakeShard(dir, 2);
  const std::string in = testing::SourceDir() + "/samples/images";
  const std::string conv = "convert " + in + " -o " + dir + "/out ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {conv + "--records-per-shard -1", "--records-per-shard: '-1' is out of range (1..4294967295)"},
      {conv + "--records-per-shard 0", "--records-per-shard: '0' is out of range"},
      {conv + "--records-per-shard 18446744073709551615", "--records-per-shard: '18446744073709551615' is out"},
      {conv + "--dry-run --records-per-shard -1", "--records-per-shard: '-1' is out of range"},
      {conv + "--dry-run --records-per-shard 18446744073709551615", "--records-per-shard"},
      {conv + "--records-per-shard 0x10", "--records-per-shard: expected an integer in 1..4294967295, got '0x10'"},
      {conv + "--records-per-shard 1e3", "expected an integer"},
      {conv + "--records-per-shard 010", "expected an integer in 1..4294967295, got '010'"},  // not octal 8
      {conv + "--records-per-shard ' 5'", "expected an integer"},
      {conv + "--shard-size -1", "--shard-size: '-1': out of range"},
      {conv + "--shard-size 0", "--shard-size: '0': out of range"},
      {conv + "--shard-size 12Q", "--shard-size: '12Q': unknown unit (use K, M, G, KiB, MiB, GiB, KB, MB, GB)"},
      {conv + "--size 12x", "--size: expected N or WxH, got '12x'"},
      {conv + "--size 70000", "--size: 70000 is out of range"},
      {conv + "--fill 1,2", "--fill: expected R,G,B or R,G,B,A with values 0..255, got '1,2'"},
      {conv + "--channels cmyk", "--channels: unknown channel mode 'cmyk' (expected rgb, gray or auto)"},
      {conv + "--alpha drop", "--alpha: unknown alpha mode 'drop' (expected composite or keep)"},
      {conv + "--unknown-color skip", "--unknown-color: unknown colour policy 'skip' (expected error or ignore)"},
      {conv + "--raw-filter delta", "--raw-filter: unknown raw filter 'delta' (expected up or none)"},
      {conv + "--threads -1", "--threads: '-1' is out of range (0..256)"},
      {conv + "--threads 257", "--threads: '257' is out of range (0..256)"},
      {conv + "--threads 2000000000", "--threads: '2000000000' is out of range"},
      {conv + "--quality -1", "--quality: '-1' is out of range (1..100)"},
      {conv + "--quality 101", "--quality: '101' is out of range (1..100)"},
      {conv + "--zstd-level -131073", "--zstd-level: '-131073' is out of range (-131072..22)"},
      {conv + "--zstd-level 23", "--zstd-level: '23' is out of range (-131072..22)"},
      {conv + "--num-tasks -1", "--num-tasks: '-1' is out of range (1..99999)"},
      {conv + "--num-tasks 100000", "--num-tasks: '100000' is out of range (1..99999)"},
      {conv + "--task-index -1", "--task-index: '-1' is out of range"},
      {conv + "--seed -1", "--seed: expected an integer in 0..18446744073709551615, got '-1'"},
      {conv + "--seed 18446744073709551616", "--seed: '18446744073709551616' is out of range"},
      {conv + "--val-fraction nan", "--val-fraction: expected a number"},
      {conv + "--val-fraction -0.1", "--val-fraction: '-0.1' is out of range"},
      {"verify --threads -1 " + shard, "--threads: '-1' is out of range (0..256)"},
      {"verify --threads 70000 " + shard, "--threads: '70000' is out of range (0..256)"},
      {"verify --max-pixels 0 " + shard, "--max-pixels: '0' is out of range"},
      {"verify --max-record-length -1 " + shard, "--max-record-length: '-1' is out of range"},
      {"inspect -n -1 " + shard, "--show: '-1' is out of range (0..1000000)"},
  };
  for (const auto& [args, message] : cases) {
    Result r = RunShard(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_TRUE(Contains(r.err, message)) << args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
  EXPECT_FALSE(fs::exists(dir + "/out"));
  // The edges are accepted.
  Result ok = RunShard(conv + "--dry-run --records-per-shard 4294967295 --threads 256 --quality 100 --seed 0");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(Contains(ok.out, "shards: train 1 val 1")) << ok.out;
  ok = RunShard(conv + "--dry-run --records-per-shard 10 --threads 0");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(Contains(ok.out, "shards: train 8 val 2")) << ok.out;
}

TEST(ShardCliTest, IndexOfAMissingFileIsAUsageErrorLikeInspect) {
  const std::string dir = MakeTempDir();
  const std::string shard = MakeShard(dir, 2);
  Result r = RunShard("index " + dir + "/nonexistent.tfrecord " + shard);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, dir + "/nonexistent.tfrecord")) << r.err;
  EXPECT_TRUE(fs::exists(shard + ".idx"));  // the other file is still indexed
  EXPECT_EQ(RunShard("inspect " + dir + "/nonexistent.tfrecord").exit_code, 2);
}

TEST(ShardCliTest, InspectCountsRecordsAndKeys) {
  const std::string dir = MakeTempDir();
  const std::string shard = MakeShard(dir, 5);
  Result r = RunShard("inspect --json " + shard);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"records\":5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("{\"key\":\"image/class/label\",\"kind\":\"int64_list\",\"records\":5"), std::string::npos)
      << r.out;
  Result text = RunShard("inspect " + shard);
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("5 records (5 tf.Example)"), std::string::npos) << text.out;
}

// Payload previews say what the bytes look like (image::DescribeContent):
// a record that is not a tf.Example but a PNG, a zstd frame, or a WebP.
TEST(ShardCliTest, InspectPreviewSaysWhatAPayloadLooksLike) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/raw.tfrecord";
  auto writer = record::RecordWriter::Create(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->Write(std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16)).ok());
  ASSERT_TRUE((*writer)->Write(std::string("(\xb5/\xfd\x01\x02", 6)).ok());
  ASSERT_TRUE((*writer)->Write(std::string("RIFF\x10\0\0\0WEBPVP8 ", 16)).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  Result r = RunShard("inspect " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "record 0 at byte 0 (32 bytes): not a tf.Example: PNG image, 16 bytes")) << r.out;
  EXPECT_TRUE(Contains(r.out, "not a tf.Example: zstd data, 6 bytes")) << r.out;
  EXPECT_TRUE(Contains(r.out, "not a tf.Example: WebP image, 16 bytes")) << r.out;
}

TEST(ShardCliTest, InspectReportsDamageWithOffsetAndExitOne) {
  const std::string dir = MakeTempDir();
  const std::string shard = MakeShard(dir, 3);
  std::string bytes = ReadFileOrDie(shard);
  WriteFileOrDie(shard, bytes.substr(0, bytes.size() - 5));
  Result r = RunShard("inspect --json " + shard);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("\"records\":2"), std::string::npos) << r.out;
  // Records are 16 + ~117 bytes; the third starts after the first two.
  auto entries = record::BuildIndex(bytes);
  ASSERT_TRUE(entries.ok());
  const std::string at = "truncated record at byte " + std::to_string((*entries)[2].offset);
  EXPECT_NE(r.err.find(at), std::string::npos) << r.err;
  EXPECT_EQ(RunShard("inspect " + dir + "/missing.tfrecord").exit_code, 2);
}

// One intact record of 256 MiB (a sparse file: zeros), inspected under a
// 200 MB address-space limit: a clear error naming the file, exit 1, never
// std::bad_alloc aborting (issue 12).
TEST(ShardCliTest, InspectOutOfMemoryIsAnErrorNamingTheFile) {
#ifdef LIBSHARD_TEST_ASAN
  GTEST_SKIP() << "address space limits do not work under AddressSanitizer";
#endif
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/big.tfrecord";
  const uint64_t n = uint64_t{256} << 20;
  char header[libshard::record::kHeaderSize], footer[libshard::record::kFooterSize];
  libshard::record::EncodeHeader(n, header);
  uint32_t crc = 0;
  const std::string zeros(1 << 20, '\0');
  for (uint64_t done = 0; done < n; done += zeros.size())
    crc = libshard::crc32c::Extend(crc, zeros.data(), zeros.size());
  libshard::record::EncodeFixed32(libshard::crc32c::Mask(crc), footer);
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(header, 1, sizeof(header), f), sizeof(header));
    ASSERT_EQ(std::fseek(f, static_cast<long>(sizeof(header) + n), SEEK_SET), 0);
    ASSERT_EQ(std::fwrite(footer, 1, sizeof(footer), f), sizeof(footer));
    ASSERT_EQ(std::fclose(f), 0);
  }
  ASSERT_TRUE(RunShard("inspect " + path).exit_code == 0);  // the file is good
  auto r = testing::RunCommand("ulimit -v 200000; " + std::string(SHARD_BIN) + " inspect " + path);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "shard inspect: " + path + ": out of memory reading its records\n");
}

TEST(ShardCliTest, InspectReadsTensorFlowFiles) {
  const std::string dir = SharedPath("interop/tfrecord");
  if (dir.empty()) GTEST_SKIP() << "shared interop data not found (set LIBSHARD_SHARED_DIR)";
  Result r = RunShard("inspect --json " + dir + "/tfx_cifar10_train.tfrecord");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"records\":128"), std::string::npos);
  Result gz = RunShard("inspect --json " + dir + "/tfx_penguin_train.tfrecord.gz");
  EXPECT_EQ(gz.exit_code, 0) << gz.err;
  EXPECT_NE(gz.out.find("\"compression\":\"gzip\""), std::string::npos);
  EXPECT_NE(gz.out.find("\"records\":234"), std::string::npos);
}

TEST(ShardCliTest, IndexWritesDaliIndexAndChecksIt) {
  const std::string dir = MakeTempDir();
  const std::string shard = MakeShard(dir, 4);
  Result r = RunShard("index " + shard);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto expected = record::BuildIndex(ReadFileOrDie(shard));
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(ReadFileOrDie(shard + ".idx"), record::FormatIndex(*expected));
  EXPECT_FALSE(fs::exists(shard + ".idx.tmp"));
  EXPECT_EQ(RunShard("index --check " + shard).exit_code, 0);
  // A stale index (one line missing) is caught.
  std::string idx = ReadFileOrDie(shard + ".idx");
  WriteFileOrDie(shard + ".idx", idx.substr(0, idx.rfind('\n', idx.size() - 2) + 1));
  Result stale = RunShard("index --check " + shard);
  EXPECT_EQ(stale.exit_code, 1);
  EXPECT_NE(stale.err.find("index has 3 lines, but the shard has more records"), std::string::npos) << stale.err;
}

TEST(ShardCliTest, InspectJsonEscapesKeys) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/keys.tfrecord";
  auto writer = record::RecordWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  example::ExampleBuilder b;
  b.AddInt64("say \"hi\"\n\\\x01", 1);
  ASSERT_TRUE((*writer)->Write(b.Serialize()).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  Result r = RunShard("inspect --json " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"key\":\"say \\\"hi\\\"\\n\\\\\\u0001\""), std::string::npos) << r.out;
}

TEST(ShardCliTest, IndexRefusesCompressedFile) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/c.tfrecord.gz";
  WriteFileOrDie(path, std::string("\x1f\x8b\x08\x00", 4) + std::string(20, '\0'));
  Result r = RunShard("index " + path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(path + ": is gzip-compressed; an index addresses uncompressed records"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(path + ".idx"));
}

TEST(ShardCliTest, IndexRefusesCorruptFileAndWritesNothing) {
  const std::string dir = MakeTempDir();
  const std::string shard = MakeShard(dir, 3);
  std::string bytes = ReadFileOrDie(shard);
  auto entries = record::BuildIndex(bytes);
  ASSERT_TRUE(entries.ok());
  const uint64_t second = (*entries)[1].offset;
  bytes[second + 20] ^= 0x01;  // a data byte of the second record
  WriteFileOrDie(shard, bytes);
  Result r = RunShard("index " + shard);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(shard + ": corrupted record at byte " + std::to_string(second) + ": data CRC mismatch"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(shard + ".idx"));
}

}  // namespace
}  // namespace libshard
