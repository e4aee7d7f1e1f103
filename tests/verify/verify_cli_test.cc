// `shard verify` as CI runs it: exit codes, the human report (one line per
// fault, naming file, offset and record), --json, argument expansion, several
// files with one damaged, and the TensorFlow-written interop files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "libshard/crc32c.h"
#include "libshard/example/example_builder.h"
#include "libshard/record/format.h"
#include "libshard/record/record_writer.h"
#include "libshard/text_escape.h"
#include "testutil.h"
#include "verify_samples.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;
using testing::MakeTempDir;
using testing::ReadFileOrDie;
using testing::SharedPath;
using testing::WriteFileOrDie;

using Result = testing::CommandResult;

using testing::RunShard;

using testing::Contains;

// Writes a shard of n Examples at `path`; returns the offset of record 1.
uint64_t MakeShard(const std::string& path, int n) {
  auto writer = record::RecordWriter::Create(path);
  EXPECT_TRUE(writer.ok()) << writer.status();
  uint64_t second = 0;
  for (int i = 0; i < n; ++i) {
    example::ExampleBuilder b;
    b.AddBytes("image/encoded", std::string(100 + i, 'x'));
    b.AddInt64("image/class/label", i);
    std::string rec = b.Serialize();
    if (i == 0) second = rec.size() + record::kFramingOverhead;
    EXPECT_TRUE((*writer)->Write(rec).ok());
  }
  EXPECT_TRUE((*writer)->Close().ok());
  return second;
}

void FlipByte(const std::string& path, uint64_t offset) {
  std::string data = ReadFileOrDie(path);
  data[offset] = static_cast<char>(data[offset] ^ 0x10);
  WriteFileOrDie(path, data);
}

TEST(VerifyCliTest, HelpListsExitCodesAndOptions) {
  Result r = RunShard("verify --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* s : {"Exit codes", "--json", "--compression", "--threads", "--records-only", "-q"}) {
    EXPECT_TRUE(Contains(r.out, s)) << s;
  }
  EXPECT_TRUE(Contains(RunShard("--help").out, "verify"));
}

TEST(VerifyCliTest, UsageErrorsExitTwo) {
  const std::string dir = MakeTempDir();
  Result missing = RunShard("verify " + dir + "/nope.tfrecord");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(Contains(missing.err, dir + "/nope.tfrecord"));
  EXPECT_EQ(missing.out, "");
  EXPECT_EQ(RunShard("verify").exit_code, 2);
  EXPECT_EQ(RunShard("verify --compression lz4 " + dir).exit_code, 2);
  EXPECT_EQ(RunShard("verify '" + dir + "/*.tfrecord'").exit_code, 2);  // glob without matches
  EXPECT_EQ(RunShard("verify " + dir).exit_code, 2);                    // folder without shards
}

TEST(VerifyCliTest, CleanShardExitsZeroWithSummary) {
  const std::string dir = MakeTempDir();
  MakeShard(dir + "/a.tfrecord", 5);
  Result r = RunShard("verify " + dir + "/a.tfrecord");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "1 file (0 with faults), 5 records")) << r.out;
  EXPECT_TRUE(Contains(r.out, "0 faults")) << r.out;
  EXPECT_TRUE(Contains(r.out, "MB/s")) << r.out;
  Result q = RunShard("verify -q " + dir + "/a.tfrecord");
  EXPECT_EQ(q.exit_code, 0);
  EXPECT_EQ(q.out, "");
}

TEST(VerifyCliTest, DamagedShardNamesFileOffsetRecordAndUncheckedBytes) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/a.tfrecord";
  const uint64_t second = MakeShard(path, 3);
  FlipByte(path, second + 3);  // the length of record 1
  const uint64_t size = fs::file_size(path);
  Result r = RunShard("verify " + path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.out, "shard verify: " + path + ": at byte " + std::to_string(second) +
                                  " (record 1): length_crc_mismatch: length CRC mismatch"))
      << r.out;
  EXPECT_TRUE(Contains(
      r.out, std::to_string(size - second) + " bytes after byte " + std::to_string(second) + " left unchecked"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "1 fault,")) << r.out;
}

// A converted set, one payload byte of a record flipped: verify counts the
// intact records before the damage and the records after it, and names the
// next step; that step (the same convert again) redoes the shard and says so.
TEST(VerifyCliTest, DataCrcFaultInAConvertedSetIsRedoneByTheSameConvert) {
  const std::string dir = MakeTempDir();
  for (int i = 0; i < 10; ++i) {
    const std::string cls = dir + "/in/" + (i % 2 ? "cat" : "dog");
    fs::create_directories(cls);
    WriteFileOrDie(cls + "/" + std::to_string(i) + ".png", verify::test::Png(verify::test::Pattern(9 + i, 7, 3, i)));
  }
  const std::string convert = "convert " + dir + "/in -o " + dir + "/out --no-sync";
  ASSERT_EQ(RunShard(convert + " -q").exit_code, 0);
  std::string shard;
  for (const auto& e : fs::directory_iterator(dir + "/out")) {
    if (e.path().extension() == ".tfrecord") shard = e.path().string();
  }
  ASSERT_FALSE(shard.empty());
  // Record 3's offset, walking the framing: 8 length bytes, 4 CRC, data, 4 CRC.
  const std::string data = ReadFileOrDie(shard);
  uint64_t offset = 0;
  for (int i = 0; i < 3; ++i) {
    uint64_t length = 0;
    std::memcpy(&length, data.data() + offset, 8);
    offset += length + record::kFramingOverhead;
  }
  FlipByte(shard, offset + record::kHeaderSize + 4);
  Result v = RunShard("verify " + dir + "/out");
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_TRUE(Contains(v.out, "(record 3): data_crc_mismatch")) << v.out;
  EXPECT_TRUE(Contains(v.out,
                       "the manifest lists 10 records, the shard has 3 intact ones, then record 3, whose data "
                       "fails its CRC, and 6 records after it whose framing holds"))
      << v.out;
  EXPECT_TRUE(Contains(v.out, "rerun the same `shard convert` to redo this shard")) << v.out;
  EXPECT_TRUE(Contains(v.out, "(the damaged record, then 6 records whose framing holds)")) << v.out;
  Result again = RunShard(convert);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(Contains(again.err, "shard " + fs::path(shard).filename().string() + " (crc32c:")) << again.err;
  EXPECT_TRUE(Contains(again.err, "of an earlier run did not match its checksum: redone")) << again.err;
  Result fixed = RunShard("verify " + dir + "/out");
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out;
}

TEST(VerifyCliTest, SeveralFilesOneDamagedInArgumentOrder) {
  const std::string dir = MakeTempDir();
  for (const char* name : {"c.tfrecord", "a.tfrecord", "b.tfrecord"}) MakeShard(dir + "/" + name, 4);
  std::string a = ReadFileOrDie(dir + "/a.tfrecord");
  WriteFileOrDie(dir + "/a.tfrecord", a.substr(0, a.size() - 7));  // truncated inside the last record's data
  Result r = RunShard("verify --json --threads 2 " + dir + "/c.tfrecord " + dir);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // c first (as given), then the folder's files sorted (a, b; c once).
  size_t pc = r.out.find("/c.tfrecord"), pa = r.out.find("/a.tfrecord"), pb = r.out.find("/b.tfrecord");
  ASSERT_NE(pc, std::string::npos);
  ASSERT_NE(pa, std::string::npos);
  ASSERT_NE(pb, std::string::npos);
  EXPECT_LT(pc, pa);
  EXPECT_LT(pa, pb);
  EXPECT_EQ(r.out.find("/c.tfrecord", pc + 1), std::string::npos);
  EXPECT_TRUE(Contains(r.out, "\"kind\":\"truncated_data\"")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"record\":3")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"files\":3,\"files_with_faults\":1,\"records\":11")) << r.out;
}

TEST(VerifyCliTest, JsonForACleanFile) {
  const std::string dir = MakeTempDir();
  MakeShard(dir + "/a.tfrecord", 2);
  const uint64_t size = fs::file_size(dir + "/a.tfrecord");
  Result r = RunShard("verify --json " + dir + "/a.tfrecord");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("{\"files\":[{\"path\":\"" + dir +
                            "/a.tfrecord\",\"compression\":\"none\",\"records\":2,"
                            "\"bytes\":" +
                            std::to_string(size) +
                            ",\"unchecked_bytes\":0,\"faults_omitted\":0,"
                            "\"faults\":[]}],\"manifests\":[],\"summary\":{\"files\":1,",
                        0),
            0u)
      << r.out;
  EXPECT_EQ(r.out.back(), '\n');
}

// A file name that is not UTF-8 used to be copied into --json as raw bytes
// (invalid JSON text); it is now the surrogateescape escape \udcXX.
TEST(VerifyCliTest, JsonStaysUtf8ForANonUtf8FileName) {
  const std::string dir = MakeTempDir();
  const std::string name = dir + "/caf\xe9.tfrecord";
  MakeShard(name, 2);
  Result r = RunShard("verify --json '" + name + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(IsValidUtf8(r.out)) << r.out;
  EXPECT_TRUE(Contains(r.out, "{\"path\":\"" + dir + "/caf\\udce9.tfrecord\"")) << r.out;
  Result i = RunShard("inspect --json '" + name + "'");
  EXPECT_EQ(i.exit_code, 0) << i.err;
  EXPECT_TRUE(IsValidUtf8(i.out)) << i.out;
}

TEST(VerifyCliTest, NotATfrecordEmptyFileAndStaleIndex) {
  const std::string dir = MakeTempDir();
  WriteFileOrDie(dir + "/image.png", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  Result png = RunShard("verify " + dir + "/image.png");
  EXPECT_EQ(png.exit_code, 1);
  EXPECT_TRUE(Contains(png.out, "at byte 0 (record 0): not_tfrecord: not a TFRecord file (looks like a PNG"))
      << png.out;

  WriteFileOrDie(dir + "/empty.tfrecord", "");
  Result empty = RunShard("verify " + dir + "/empty.tfrecord");
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_TRUE(Contains(empty.out, "empty_file")) << empty.out;
  EXPECT_EQ(RunShard("verify --allow-empty " + dir + "/empty.tfrecord").exit_code, 0);

  const std::string shard = dir + "/s.tfrecord";
  MakeShard(shard, 3);
  EXPECT_EQ(RunShard("index -q " + shard).exit_code, 0);
  EXPECT_EQ(RunShard("verify " + shard).exit_code, 0);
  std::string idx = ReadFileOrDie(shard + ".idx");
  WriteFileOrDie(shard + ".idx", idx.substr(0, idx.find('\n') + 1));
  Result stale = RunShard("verify " + shard);
  EXPECT_EQ(stale.exit_code, 1);
  EXPECT_TRUE(Contains(stale.out, "(record 1): index_mismatch: " + shard + ".idx has 1 lines")) << stale.out;
  EXPECT_EQ(RunShard("verify --no-index " + shard).exit_code, 0);
}

TEST(VerifyCliTest, UnreadableFileExitsTwoAfterCheckingTheOthers) {
  const std::string dir = MakeTempDir();
  MakeShard(dir + "/b.tfrecord", 2);
  // A FIFO: opening it would block; it must be refused without hanging.
  ASSERT_EQ(::mkfifo((dir + "/a.tfrecord").c_str(), 0600), 0);
  Result r = RunShard("verify " + dir + "/a.tfrecord " + dir + "/b.tfrecord");
  EXPECT_EQ(r.exit_code, 2);
  // io's message as it is: it names the file (io/open_file.h).
  EXPECT_TRUE(Contains(
      r.out, "a.tfrecord: at byte 0 (record 0): unreadable: " + dir + "/a.tfrecord: is a FIFO, not a regular file"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "2 files (1 with faults), 2 records")) << r.out;
}

// A folder as `shard convert` leaves it: two shards and a manifest.json
// describing them (written by hand here, as protobuf's JSON printer does).
std::string MakeConvertedFolder() {
  const std::string dir = MakeTempDir();
  std::string shards;
  for (int i = 0; i < 2; ++i) {
    const std::string name = "train-0000" + std::to_string(i) + "-of-00002.tfrecord";
    MakeShard(dir + "/" + name, 3 + i);
    EXPECT_EQ(RunShard("index -q " + dir + "/" + name).exit_code, 0);
    std::string data = ReadFileOrDie(dir + "/" + name);
    char crc[24];
    std::snprintf(crc, sizeof crc, "crc32c:%08x", crc32c::Value(data.data(), data.size()));
    shards += std::string(i ? "," : "") + "{\"file\":\"" + name + "\",\"split\":\"train\",\"records\":\"" +
              std::to_string(3 + i) + "\",\"bytes\":\"" + std::to_string(data.size()) + "\",\"checksum\":\"" + crc +
              "\",\"index_file\":\"" + name + ".idx\"}";
  }
  WriteFileOrDie(dir + "/manifest.json",
                 "{\"format\":\"libshard.manifest/1\",\"labels\":[{\"label\":\"0\",\"name\":\"a\"},"
                 "{\"label\":\"1\",\"name\":\"b\"},{\"label\":\"2\",\"name\":\"c\"},"
                 "{\"label\":\"3\",\"name\":\"d\"}],\"schema\":[{\"key\":\"image/encoded\",\"kind\":\"bytes\","
                 "\"required\":true},{\"key\":\"image/class/label\",\"kind\":\"int64\",\"required\":true}],"
                 "\"splits\":[{\"name\":\"train\",\"records\":\"7\",\"shards\":[" +
                     shards + "]}],\"stats\":{\"converted\":\"7\"},\"complete\":true}");
  return dir;
}

TEST(VerifyCliTest, ManifestFoundInFolderArgument) {
  const std::string dir = MakeConvertedFolder();
  Result ok = RunShard("verify " + dir);
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_TRUE(Contains(ok.out, "2 files (0 with faults), 7 records")) << ok.out;
  EXPECT_TRUE(Contains(ok.out, "(manifest " + dir + "/manifest.json)")) << ok.out;

  // An unlisted shard and a missing one: set-level lines naming the file.
  MakeShard(dir + "/stray.tfrecord", 1);
  fs::remove(dir + "/train-00001-of-00002.tfrecord");
  Result bad = RunShard("verify " + dir);
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_TRUE(Contains(bad.out, "shard verify: " + dir + "/train-00001-of-00002.tfrecord: manifest_shard_missing: "))
      << bad.out;
  EXPECT_TRUE(Contains(bad.out, "shard verify: " + dir + "/stray.tfrecord: manifest_shard_unlisted: ")) << bad.out;
  // --no-manifest: the files alone are fine, but their names show the set
  // lacks shard 00001 of 00002.
  Result names = RunShard("verify --no-manifest " + dir);
  EXPECT_EQ(names.exit_code, 1);
  EXPECT_TRUE(Contains(names.out, "shard verify: " + dir +
                                      "/train-*-of-00002.tfrecord: set_incomplete: 1 of the 2 "
                                      "shards of this set are here; 1 missing (00001); no manifest.json to say more\n"))
      << names.out;
  EXPECT_TRUE(Contains(names.out, "2 files (0 with faults)")) << names.out;
}

TEST(VerifyCliTest, ManifestOptionJsonAndPerRecordFaults) {
  const std::string dir = MakeConvertedFolder();
  // Labels run 0..3 in MakeShard: record 3 of the second shard (label 3) is in range;
  // shrink the label map so that it is not.
  std::string m = ReadFileOrDie(dir + "/manifest.json");
  m.replace(m.find(",{\"label\":\"3\",\"name\":\"d\"}"), std::string(",{\"label\":\"3\",\"name\":\"d\"}").size(), "");
  WriteFileOrDie(dir + "/manifest.json", m);
  // Listed shards are checked without PATHS.
  Result r = RunShard("verify --json --manifest " + dir + "/manifest.json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "\"kind\":\"manifest_label_out_of_range\"")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"record\":3")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"manifests\":[{\"path\":\"" + dir + "/manifest.json\",\"shards\":2,\"faults\":[]}]"))
      << r.out;
  Result human = RunShard("verify --manifest " + dir + "/manifest.json");
  EXPECT_TRUE(Contains(human.out, "train-00001-of-00002.tfrecord: at byte ")) << human.out;
  EXPECT_TRUE(
      Contains(human.out, "(record 3): manifest_label_out_of_range: image/class/label 3 is not in the label map"))
      << human.out;
}

TEST(VerifyCliTest, BadManifests) {
  const std::string dir = MakeConvertedFolder();
  Result missing = RunShard("verify --manifest " + dir + "/nope.json " + dir + "/train-00000-of-00002.tfrecord");
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  EXPECT_TRUE(Contains(missing.out, dir + "/nope.json: manifest_unreadable: ")) << missing.out;
  WriteFileOrDie(dir + "/manifest.json", "{\"format\": \"other/9\"}");
  Result format = RunShard("verify " + dir);
  EXPECT_EQ(format.exit_code, 1);
  // manifest::CheckFormat's message, the one check of the format.
  EXPECT_TRUE(Contains(format.out, dir + "/manifest.json: manifest_format: manifest format \"other/9\", expected "
                                         "\"libshard.manifest/1\""))
      << format.out;
  WriteFileOrDie(dir + "/manifest.json", "not json");
  Result invalid = RunShard("verify " + dir);
  EXPECT_EQ(invalid.exit_code, 1);
  EXPECT_TRUE(Contains(invalid.out, dir + "/manifest.json: manifest_invalid: ")) << invalid.out;
  EXPECT_EQ(RunShard("verify").exit_code, 2);  // neither PATHS nor --manifest
}

TEST(VerifyCliTest, DecodeFindsUndecodableImages) {
  const std::string dir = MakeTempDir();
  // MakeShard's image/encoded bytes are not images: fine without --decode.
  MakeShard(dir + "/a.tfrecord", 2);
  EXPECT_EQ(RunShard("verify " + dir + "/a.tfrecord").exit_code, 0);
  Result r = RunShard("verify --decode " + dir + "/a.tfrecord");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(Contains(r.out, "a.tfrecord: at byte 0 (record 0): image_undecodable: ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "(record 1): image_undecodable: ")) << r.out;
  EXPECT_EQ(RunShard("verify --decode --records-only " + dir + "/a.tfrecord").exit_code, 2);
}

TEST(VerifyCliTest, InteropFiles) {
  const std::string dir = SharedPath("interop/tfrecord");
  if (dir.empty()) GTEST_SKIP() << "shared interop data not found (LIBSHARD_SHARED_DIR)";
  // By default the Beam files' raw records "foo" / "bar" are not_an_example faults ...
  Result all = RunShard("verify " + dir);
  EXPECT_EQ(all.exit_code, 1);
  EXPECT_TRUE(Contains(all.out, "beam_foo.tfrecord: at byte 0 (record 0): not_an_example")) << all.out;
  EXPECT_TRUE(Contains(all.out, "beam_foo_bar.tfrecord: at byte 19 (record 1): not_an_example")) << all.out;
  EXPECT_TRUE(Contains(all.out, "8 files (2 with faults), 1618 records")) << all.out;
  // ... and clean when only the framing is checked.
  EXPECT_EQ(RunShard("verify --records-only " + dir).exit_code, 0);
  // Everything else is clean; gzip files auto-detected and named explicitly.
  EXPECT_EQ(RunShard("verify '" + dir + "/tfx_*'").exit_code, 0);
  Result gz = RunShard("verify --json --compression gzip '" + dir + "/*.gz'");
  EXPECT_EQ(gz.exit_code, 0) << gz.out;
  EXPECT_TRUE(Contains(gz.out, "\"compression\":\"gzip\"")) << gz.out;
}

}  // namespace
}  // namespace libshard
