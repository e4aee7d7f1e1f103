// Tests of libshard::verify against a manifest.json (VerifySet), and of the
// set check by names alone (CheckNumberedSets), on real shard sets: shards
// written with RecordWriter, real JPEG payloads, manifests printed with
// protobuf's JSON printer as `shard convert` prints them. Each damage is
// generated and must come back with its kind, its file and, for per-record
// faults, its offset and record number. (--decode: decode_test.cc; the pread
// walk: read_window_test.cc.)
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libshard/crc32c.h"
#include "libshard/example/example_builder.h"
#include "libshard/example/image_keys.h"
#include "libshard/io/shard_paths.h"
#include "libshard/io/writable_file.h"
#include "libshard/manifest.pb.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/record/format.h"
#include "libshard/record/record_writer.h"
#include "libshard/verify/verifier.h"
#include "testutil.h"
#include "verify_samples.h"

namespace libshard::verify {
namespace {

namespace fs = std::filesystem;
using ::libshard::testing::MakeTempDir;
using ::libshard::testing::ReadFileOrDie;
using ::libshard::testing::WriteFileOrDie;

using ::libshard::testing::HasSubstr;
using test::JpegSample;
using test::Sample;
using test::WriteShard;

std::string ChecksumOf(const std::string& path) {
  const std::string data = ReadFileOrDie(path);
  char buf[24];
  std::snprintf(buf, sizeof buf, "crc32c:%08x", crc32c::Value(data.data(), data.size()));
  return buf;
}

// A set of two shards with three labelled JPEG samples each, and a manifest
// describing them as they are on disk.
class ManifestSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    shards_ = {"train-00000-of-00002.tfrecord", "train-00001-of-00002.tfrecord"};
    for (size_t i = 0; i < shards_.size(); ++i) {
      WriteShard(Path(i), {JpegSample(3 * i, 0), JpegSample(3 * i + 1, 1), JpegSample(3 * i + 2, 2)});
    }
    manifest_.set_format(manifest::kFormat);
    manifest_.set_tool_version("test");
    for (auto [label, name] : {std::pair{0, "cat"}, std::pair{1, "dog"}, std::pair{2, "bird"}}) {
      LabelEntry* l = manifest_.add_labels();
      l->set_label(label);
      l->set_name(name);
    }
    auto spec = [&](const char* key, const char* kind, bool required) {
      FeatureSpec* f = manifest_.add_schema();
      f->set_key(key);
      f->set_kind(kind);
      f->set_required(required);
    };
    spec(keys::kEncoded, "bytes", true);
    spec(keys::kFormat, "bytes", true);
    spec(keys::kHeight, "int64", true);
    spec(keys::kWidth, "int64", true);
    spec(keys::kLabel, "int64", true);
    spec(keys::kFilename, "bytes", false);
    Describe();
  }

  std::string Path(size_t i) const { return dir_ + "/" + shards_[i]; }
  std::string ManifestPath() const { return dir_ + "/manifest.json"; }

  // Lists the shards as they are on disk and writes manifest.json.
  void Describe() {
    manifest_.clear_splits();
    SplitEntry* split = manifest_.add_splits();
    split->set_name("train");
    split->set_shard_count(shards_.size());
    manifest_.set_complete(true);
    uint64_t records = 0;
    for (size_t i = 0; i < shards_.size(); ++i) {
      ShardEntry* e = split->add_shards();
      e->set_file(shards_[i]);
      e->set_split("train");
      e->set_index(i);
      e->set_count(shards_.size());
      auto r = VerifyFile(Path(i), VerifyOptions());
      e->set_records(r.records);
      e->set_bytes(fs::file_size(Path(i)));
      e->set_checksum(ChecksumOf(Path(i)));
      e->set_index_file(shards_[i] + ".idx");
      records += r.records;
    }
    split->set_records(records);
    manifest_.mutable_stats()->set_converted(records);
    Write();
  }

  void Write() {
    std::string json;
    google::protobuf::util::JsonPrintOptions po;
    po.preserve_proto_field_names = true;
    po.always_print_primitive_fields = true;
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(manifest_, &json, po).ok());
    WriteFileOrDie(ManifestPath(), json);
  }

  ShardEntry* Entry(size_t i) { return manifest_.mutable_splits(0)->mutable_shards(i); }

  SetResult Verify(VerifyOptions options = VerifyOptions()) {
    auto paths = io::ExpandPaths({dir_});
    EXPECT_TRUE(paths.ok()) << paths.status();
    return VerifySet(paths.ok() ? *paths : std::vector<std::string>{}, {ManifestPath()}, options);
  }

  // The only set-level fault, which must exist; no per-file fault.
  SetFault OnlySetFault(const SetResult& r) {
    EXPECT_EQ(r.manifests.size(), 1u);
    for (const FileResult& f : r.files) EXPECT_TRUE(f.ok()) << f.path << ": " << f.faults[0].message;
    if (r.manifests.empty() || r.manifests[0].faults.size() != 1) {
      ADD_FAILURE() << "expected one set fault, got " << (r.manifests.empty() ? 0 : r.manifests[0].faults.size());
      return SetFault{};
    }
    return r.manifests[0].faults[0];
  }

  // The only fault of the file named `name`; no set-level fault.
  Fault OnlyFileFault(const SetResult& r, const std::string& path) {
    EXPECT_EQ(r.manifests.size(), 1u);
    if (!r.manifests.empty()) {
      EXPECT_TRUE(r.manifests[0].faults.empty()) << r.manifests[0].faults[0].message;
    }
    for (const FileResult& f : r.files) {
      if (f.path != path) {
        EXPECT_TRUE(f.ok()) << f.path;
        continue;
      }
      EXPECT_EQ(f.faults.size(), 1u) << path;
      if (f.faults.size() == 1) return f.faults[0];
    }
    ADD_FAILURE() << "no single fault for " << path;
    return Fault{};
  }

  std::string dir_;
  std::vector<std::string> shards_;
  Manifest manifest_;
};

TEST_F(ManifestSetTest, CleanSet) {
  SetResult r = Verify();
  ASSERT_EQ(r.manifests.size(), 1u);
  EXPECT_EQ(r.manifests[0].path, ManifestPath());
  EXPECT_EQ(r.manifests[0].shards, 2u);
  EXPECT_TRUE(r.manifests[0].faults.empty()) << r.manifests[0].faults[0].message;
  ASSERT_EQ(r.files.size(), 2u);
  for (const FileResult& f : r.files) {
    EXPECT_TRUE(f.ok()) << f.path;
    ASSERT_TRUE(f.crc32c.has_value());
    const std::string data = ReadFileOrDie(f.path);
    EXPECT_EQ(*f.crc32c, crc32c::Value(data.data(), data.size()));
    EXPECT_EQ(f.file_size, data.size());
  }
  EXPECT_EQ(r.fault_count(), 0u);
  // With --decode too: the JPEGs decode to the stated sizes.
  VerifyOptions decode;
  decode.decode_images = true;
  EXPECT_EQ(Verify(decode).fault_count(), 0u);
}

TEST_F(ManifestSetTest, ListedShardsAreCheckedWithoutPaths) {
  SetResult r = VerifySet({}, {ManifestPath()}, VerifyOptions());
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.files[0].path, Path(0));
  EXPECT_EQ(r.files[1].path, Path(1));
  EXPECT_EQ(r.fault_count(), 0u);
}

// Issue 23 item 13: what the manifest itself claims is checked: complete,
// totals equal to the sums of the shards, listed paths inside its folder.
TEST_F(ManifestSetTest, ManifestClaimsAreChecked) {
  EXPECT_EQ(Verify().fault_count(), 0u);
  auto only = [&](const std::string& want) {
    SetResult r = Verify();
    ASSERT_EQ(r.manifests.size(), 1u);
    ASSERT_EQ(r.manifests[0].faults.size(), 1u)
        << (r.manifests[0].faults.size() > 1 ? r.manifests[0].faults[1].message : "");
    EXPECT_EQ(r.manifests[0].faults[0].kind, SetFaultKind::kManifestInvalid);
    EXPECT_EQ(r.manifests[0].faults[0].message, want);
  };
  manifest_.set_complete(false);
  Write();
  only(
      "\"complete\" is false: a task's partial manifest or an unfinished conversion (shard merge writes the "
      "complete one)");
  manifest_.set_complete(true);
  manifest_.mutable_stats()->set_converted(99);
  Write();
  only("stats.converted claims 99 records, the shards list 6");
  manifest_.mutable_stats()->set_converted(6);
  manifest_.mutable_splits(0)->set_records(5);
  Write();
  only("split \"train\" claims 5 records, its shards list 6");
  manifest_.mutable_splits(0)->set_records(6);
  manifest_.mutable_stats()->set_rejected(2);
  Write();
  only("stats.rejected claims 2 rejects, rejects[] lists 0");
  manifest_.mutable_stats()->set_rejected(0);
  for (const std::string& file :
       {std::string("../outside.tfrecord"), std::string("/etc/hostname"), std::string("a/../../x.tfrecord")}) {
    Entry(1)->set_file(file);
    Write();
    SetResult r = Verify();
    ASSERT_EQ(r.manifests.size(), 1u);
    bool named = false;
    for (const SetFault& f : r.manifests[0].faults) {
      named |= f.kind == SetFaultKind::kManifestInvalid &&
               f.message == "split \"train\" lists " + file + ", outside the manifest's folder (not read)";
    }
    EXPECT_TRUE(named) << file;
  }
}

// Issue 32 item 4: a manifest of 0 records (an empty or unmounted input) is
// a fault unless allow_empty says an empty dataset is fine.
TEST_F(ManifestSetTest, AManifestOfNoRecordsIsAFaultUnlessAllowed) {
  for (size_t i = 0; i < shards_.size(); ++i) fs::remove(Path(i));
  shards_.clear();
  Describe();
  SetFault f = OnlySetFault(Verify());
  EXPECT_EQ(f.kind, SetFaultKind::kManifestEmpty);
  EXPECT_EQ(f.path, ManifestPath());
  EXPECT_EQ(f.message, "the manifest lists no records (1 split(s)): an empty dataset; --allow-empty accepts it");
  EXPECT_STREQ(FaultKindName(SetFaultKind::kManifestEmpty), "manifest_empty");
  VerifyOptions o;
  o.allow_empty = true;
  SetResult r = Verify(o);
  ASSERT_EQ(r.manifests.size(), 1u);
  EXPECT_TRUE(r.manifests[0].faults.empty()) << r.manifests[0].faults[0].message;
}

TEST_F(ManifestSetTest, MissingShard) {
  fs::remove(Path(1));
  SetFault f = OnlySetFault(Verify());
  EXPECT_EQ(f.kind, SetFaultKind::kManifestShardMissing);
  EXPECT_EQ(f.path, Path(1));
}

TEST_F(ManifestSetTest, MissingIndexFile) {
  fs::remove(Path(0) + ".idx");
  SetFault f = OnlySetFault(Verify());
  EXPECT_EQ(f.kind, SetFaultKind::kManifestShardMissing);
  EXPECT_EQ(f.path, Path(0) + ".idx");
}

// A listed labels sidecar must exist, and be the one the shard's check
// compares with its records (FILE.labels), not another file readers would
// trust unchecked.
TEST_F(ManifestSetTest, ListedLabelsFileMissingOrMisnamed) {
  manifest_.mutable_splits(0)->mutable_shards(0)->set_labels_file(shards_[0] + ".labels");
  Write();
  SetFault f = OnlySetFault(Verify());
  EXPECT_EQ(f.kind, SetFaultKind::kManifestShardMissing);
  EXPECT_EQ(f.path, Path(0) + ".labels");
  EXPECT_EQ(f.message, "labels file listed by the manifest is missing");
  testing::WriteFileOrDie(dir_ + "/other.labels", "x");
  manifest_.mutable_splits(0)->mutable_shards(0)->set_labels_file("other.labels");
  Write();
  f = OnlySetFault(Verify());
  EXPECT_EQ(f.kind, SetFaultKind::kManifestInvalid);
  EXPECT_EQ(f.message, "labels_file \"other.labels\" is not the shard's name with \".labels\" (" + shards_[0] +
                           ".labels)");
}

TEST_F(ManifestSetTest, UnlistedShard) {
  fs::create_directories(dir_ + "/old");
  WriteShard(dir_ + "/old/train-00000-of-00001.tfrecord", {JpegSample(9, 1)});
  SetResult r = Verify();
  SetFault f = OnlySetFault(r);
  EXPECT_EQ(f.kind, SetFaultKind::kManifestShardUnlisted);
  EXPECT_EQ(f.path, dir_ + "/old/train-00000-of-00001.tfrecord");
  EXPECT_EQ(r.files.size(), 3u);  // the folder argument found it: it is verified too
}

TEST_F(ManifestSetTest, RecordCountMismatch) {
  Entry(0)->set_records(4);
  manifest_.mutable_splits(0)->set_records(7);  // totals that agree with the entries
  manifest_.mutable_stats()->set_converted(7);
  Write();
  SetFault f = OnlySetFault(Verify());
  EXPECT_EQ(f.kind, SetFaultKind::kManifestRecordCount);
  EXPECT_EQ(f.path, Path(0));
  EXPECT_TRUE(HasSubstr(f.message, "lists 4 records, the shard has 3"));
}

// A flipped payload byte: the framing still holds, so the count says how
// much of the shard follows the damage, and the message the next step.
TEST_F(ManifestSetTest, DataCrcFaultCountsTheRecordsAfterIt) {
  std::vector<Sample> samples;
  for (int i = 0; i < 8; ++i) samples.push_back(JpegSample(i, i % 3));
  const std::vector<uint64_t> offsets = WriteShard(Path(0), samples);
  Describe();
  std::string data = ReadFileOrDie(Path(0));
  data[offsets[2] + record::kHeaderSize + 5] ^= 0x01;
  WriteFileOrDie(Path(0), data);
  const SetResult r = Verify();
  ASSERT_EQ(r.files.size(), 2u);
  const FileResult& f = r.files[0];
  EXPECT_EQ(f.records, 2u);
  ASSERT_EQ(f.faults.size(), 1u);
  EXPECT_EQ(f.faults[0].kind, FaultKind::kDataCrcMismatch);
  EXPECT_EQ(f.faults[0].offset, offsets[2]);
  EXPECT_EQ(f.frames_after_fault, std::optional<uint64_t>(5));
  EXPECT_FALSE(r.files[1].frames_after_fault.has_value());
  ASSERT_EQ(r.manifests.size(), 1u);
  std::string count;
  for (const SetFault& x : r.manifests[0].faults) {
    if (x.kind == SetFaultKind::kManifestRecordCount) count = x.message;
  }
  EXPECT_EQ(count,
            "the manifest lists 8 records, the shard has 2 intact ones, then record 2, whose data fails its CRC, "
            "and 5 records after it whose framing holds (their payloads not checked); rerun the same `shard "
            "convert` to redo this shard");
  // A cut shard: no framing to count past the cut.
  data = ReadFileOrDie(Path(1));
  WriteFileOrDie(Path(1), data.substr(0, data.size() - 3));
  const SetResult cut = Verify();
  EXPECT_FALSE(cut.files[1].frames_after_fault.has_value());
}

TEST_F(ManifestSetTest, SizeMismatch) {
  Entry(1)->set_bytes(Entry(1)->bytes() + 1);
  Write();
  SetFault f = OnlySetFault(Verify());
  EXPECT_EQ(f.kind, SetFaultKind::kManifestSize);
  EXPECT_EQ(f.path, Path(1));
}

TEST_F(ManifestSetTest, ChecksumMismatchOnSameSizeAndCount) {
  // Other pixels, same layout: only the checksum can tell.
  const std::string before = ReadFileOrDie(Path(0));
  std::vector<Sample> samples = {JpegSample(0, 0), JpegSample(1, 1), JpegSample(2, 2)};
  samples[1].label = 2;  // a different varint of the same size
  WriteShard(Path(0), samples);
  ASSERT_EQ(ReadFileOrDie(Path(0)).size(), before.size());
  SetFault f = OnlySetFault(Verify());
  EXPECT_EQ(f.kind, SetFaultKind::kManifestChecksum);
  EXPECT_EQ(f.path, Path(0));
  EXPECT_TRUE(HasSubstr(
      f.message, "the manifest lists " + Entry(0)->checksum() + ", the file's CRC-32C is " + ChecksumOf(Path(0))));
}

TEST_F(ManifestSetTest, MalformedChecksumIsInvalid) {
  Entry(0)->set_checksum("md5:abc");
  Write();
  SetFault f = OnlySetFault(Verify());
  EXPECT_EQ(f.kind, SetFaultKind::kManifestInvalid);
  EXPECT_TRUE(HasSubstr(f.message, "md5:abc"));
}

TEST_F(ManifestSetTest, LabelOutOfRange) {
  const auto offsets = WriteShard(Path(1), {JpegSample(0, 0), JpegSample(1, 1), JpegSample(2, 7)});
  Describe();
  Fault f = OnlyFileFault(Verify(), Path(1));
  EXPECT_EQ(f.kind, FaultKind::kManifestLabelOutOfRange);
  EXPECT_EQ(f.offset, offsets[2]);
  EXPECT_EQ(f.record, 2u);
  EXPECT_TRUE(HasSubstr(f.message, "image/class/label 7 is not in the label map (3 labels, 0..2)"));
}

TEST_F(ManifestSetTest, MissingRequiredKey) {
  std::vector<Sample> samples = {JpegSample(0, 0), JpegSample(1, 1), JpegSample(2, 2)};
  samples[1].with_label = false;
  const auto offsets = WriteShard(Path(0), samples);
  Describe();
  Fault f = OnlyFileFault(Verify(), Path(0));
  EXPECT_EQ(f.kind, FaultKind::kManifestSchema);
  EXPECT_EQ(f.offset, offsets[1]);
  EXPECT_EQ(f.record, 1u);
  EXPECT_TRUE(HasSubstr(f.message, "required feature \"image/class/label\" is missing"));
}

TEST_F(ManifestSetTest, WrongKind) {
  std::vector<Sample> samples = {JpegSample(0, 0), JpegSample(1, 1), JpegSample(2, 2)};
  samples[0].height_as_bytes = true;
  const auto offsets = WriteShard(Path(1), samples);
  Describe();
  Fault f = OnlyFileFault(Verify(), Path(1));
  EXPECT_EQ(f.kind, FaultKind::kManifestSchema);
  EXPECT_EQ(f.offset, offsets[0]);
  EXPECT_EQ(f.record, 0u);
  EXPECT_TRUE(HasSubstr(f.message, "feature \"image/height\" is bytes_list, the schema says int64_list"));
}

TEST_F(ManifestSetTest, UnparseableManifest) {
  WriteFileOrDie(ManifestPath(), "{\"format\": \"libshard.manifest/1\", \"splits\": [");
  SetResult r = Verify();
  SetFault f = OnlySetFault(r);
  EXPECT_EQ(f.kind, SetFaultKind::kManifestInvalid);
  EXPECT_EQ(f.path, ManifestPath());
  EXPECT_EQ(r.files.size(), 2u);  // the shards are still walked
}

TEST_F(ManifestSetTest, WrongFormat) {
  manifest_.set_format("libshard.manifest/2");
  Write();
  SetFault f = OnlySetFault(Verify());
  EXPECT_EQ(f.kind, SetFaultKind::kManifestFormat);
  EXPECT_EQ(f.path, ManifestPath());
  EXPECT_EQ(f.message, "manifest format \"libshard.manifest/2\", expected \"libshard.manifest/1\"");
  EXPECT_EQ(f.message, manifest::CheckFormat(manifest_).message());  // the one check
}

TEST_F(ManifestSetTest, UnreadableManifest) {
  SetResult r = VerifySet({Path(0)}, {dir_ + "/nope.json"}, VerifyOptions());
  ASSERT_EQ(r.manifests.size(), 1u);
  ASSERT_EQ(r.manifests[0].faults.size(), 1u);
  EXPECT_EQ(r.manifests[0].faults[0].kind, SetFaultKind::kManifestUnreadable);
  EXPECT_EQ(r.manifests[0].faults[0].path, dir_ + "/nope.json");
}

TEST_F(ManifestSetTest, FindManifestsInFolderArguments) {
  EXPECT_EQ(FindManifests({Path(0), dir_, dir_ + "/", "/nonexistent"}),
            (std::vector<std::string>{dir_ + "/manifest.json"}));
  // A folder whose shards are all gone still expands: the manifest judges it.
  fs::remove(Path(0));
  fs::remove(Path(1));
  auto paths = io::ExpandPaths({dir_});
  ASSERT_TRUE(paths.ok()) << paths.status();
  EXPECT_TRUE(paths->empty());
}

// Issue 16 item 2: a folder without manifest.json holding 6 of 20 shards
// (a killed conversion) passed. The names alone say a set is incomplete.
TEST(NumberedSetTest, IncompleteSetsFromNamesAlone) {
  std::vector<std::string> paths;
  for (int i : {0, 1, 2, 3, 4, 5}) paths.push_back("d/x-train-0000" + std::to_string(i) + "-of-00020.tfrecord");
  for (int i : {0, 1}) paths.push_back("d/x-val-0000" + std::to_string(i) + "-of-00002.tfrecord");  // complete
  paths.push_back("d/other.tfrecord");                                                              // no numbering
  paths.push_back("e/y-00000-of-00003");
  paths.push_back("e/y-00001-of-00003");
  paths.push_back("e/y-00002-of-00003");
  paths.push_back("e/y-00003-of-00003");  // beyond its set
  paths.push_back("e/y-00000-of-00001");  // another conversion's
  std::vector<SetFault> faults = CheckNumberedSets(paths);
  ASSERT_EQ(faults.size(), 3u);
  EXPECT_EQ(faults[0].path, "d/x-train-*-of-00020.tfrecord");
  EXPECT_EQ(faults[0].kind, SetFaultKind::kSetIncomplete);
  EXPECT_EQ(faults[0].message,
            "6 of the 20 shards of this set are here; 14 missing (00006, 00007, 00008, 00009, 00010, 00011, 00012, "
            "00013, 00014, 00015, ...); no manifest.json to say more");
  EXPECT_EQ(faults[1].path, "e/y-*-of-*");
  EXPECT_EQ(faults[1].message,
            "shards of sets of different sizes (00001 and 00003) under one name: shards of two conversions; no "
            "manifest.json to say which is current");
  EXPECT_EQ(faults[2].path, "e/y-00003-of-00003");
  EXPECT_EQ(faults[2].message,
            "shard number 00003 is beyond its set of 00003 (numbers run from 0 to M-1); no manifest.json to say more");
  EXPECT_STREQ(FaultKindName(SetFaultKind::kSetIncomplete), "set_incomplete");
  // A huge stated count costs no more than the names given.
  EXPECT_EQ(CheckNumberedSets({"z-00000-of-99999999999999"})[0].message.substr(0, 40),
            "1 of the 99999999999999 shards of this s");
}

}  // namespace
}  // namespace libshard::verify
