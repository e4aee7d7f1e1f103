// Tests of libshard::verify against a manifest.json (VerifySet) and of the
// --decode checks, on real shard sets: shards written with RecordWriter, real
// JPEG / PNG / raw-array payloads, manifests printed with protobuf's JSON
// printer as `shard convert` prints them. Each damage is generated and must
// come back with its kind, its file and, for per-record faults, its offset
// and record number. Also: the pread walk over records longer than its
// buffer, and the whole-file CRC-32C it computes.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "libshard/crc32c.h"
#include "libshard/example/example_builder.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/encode.h"
#include "libshard/image/raw_array.h"
#include "libshard/io/writable_file.h"
#include "libshard/manifest.pb.h"
#include "libshard/record/format.h"
#include "libshard/record/record_writer.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/io/shard_paths.h"
#include "libshard/verify/verifier.h"
#include "testutil.h"

namespace libshard::verify {
namespace {

namespace fs = std::filesystem;
using ::libshard::testing::MakeTempDir;
using ::libshard::testing::ReadFileOrDie;
using ::libshard::testing::WriteFileOrDie;

using ::libshard::testing::HasSubstr;

image::Image Pattern(int width, int height, int channels, int seed = 0) {
  image::Image img(width, height, channels);
  for (size_t i = 0; i < img.byte_size(); ++i) img.data()[i] = static_cast<uint8_t>(i * 7 + seed * 31);
  return img;
}

std::string Jpeg(const image::Image& img) {
  auto b = image::EncodeJpeg(img);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? *b : "";
}
std::string Png(const image::Image& img) {
  auto b = image::EncodePng(img);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? *b : "";
}

// An image sample as `shard convert` writes it: the image keys of
// example/image_keys.h. Tests change the builder's input to damage it.
struct Sample {
  std::string encoded;
  std::string format = "jpeg";
  int64_t height = 6, width = 8, channels = 3;
  bool with_label = true;
  int64_t label = 0;
  bool height_as_bytes = false;  // the wrong kind for image/height
  std::vector<int64_t> shape;    // raw arrays
  std::string dtype;
  std::string mask, mask_format;

  std::string Serialize() const {
    example::ExampleBuilder b;
    b.AddBytes(keys::kEncoded, encoded);
    b.AddBytes(keys::kFormat, format);
    if (height_as_bytes) {
      b.AddBytes(keys::kHeight, std::to_string(height));
    } else {
      b.AddInt64(keys::kHeight, height);
    }
    b.AddInt64(keys::kWidth, width);
    b.AddInt64(keys::kChannels, channels);
    if (with_label) b.AddInt64(keys::kLabel, label);
    if (!shape.empty()) b.AddInt64List(keys::kShape, shape.data(), shape.size());
    if (!dtype.empty()) b.AddBytes(keys::kDtype, dtype);
    if (!mask.empty()) {
      b.AddBytes(keys::kMaskEncoded, mask);
      b.AddBytes(keys::kMaskFormat, mask_format);
    }
    return b.Serialize();
  }
};

Sample JpegSample(int seed, int64_t label) {
  Sample s;
  s.encoded = Jpeg(Pattern(8, 6, 3, seed));
  s.label = label;
  return s;
}

// Writes `samples` as a shard (and its .idx); returns each record's offset.
std::vector<uint64_t> WriteShard(const std::string& path, const std::vector<Sample>& samples) {
  record::WriterOptions wo;
  wo.write_index = true;
  auto writer = record::RecordWriter::Create(path, wo);
  EXPECT_TRUE(writer.ok()) << writer.status();
  std::vector<uint64_t> offsets;
  uint64_t offset = 0;
  for (const Sample& s : samples) {
    std::string rec = s.Serialize();
    offsets.push_back(offset);
    offset += rec.size() + record::kFramingOverhead;
    EXPECT_TRUE((*writer)->Write(rec).ok());
  }
  EXPECT_TRUE((*writer)->Close().ok());
  return offsets;
}

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
    ASSERT_EQ(r.manifests[0].faults.size(), 1u) << (r.manifests[0].faults.size() > 1 ? r.manifests[0].faults[1].message : "");
    EXPECT_EQ(r.manifests[0].faults[0].kind, FaultKind::kManifestInvalid);
    EXPECT_EQ(r.manifests[0].faults[0].message, want);
  };
  manifest_.set_complete(false);
  Write();
  only("\"complete\" is false: a task's partial manifest or an unfinished conversion (shard merge writes the "
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
  for (const std::string& file : {std::string("../outside.tfrecord"), std::string("/etc/hostname"),
                                  std::string("a/../../x.tfrecord")}) {
    Entry(1)->set_file(file);
    Write();
    SetResult r = Verify();
    ASSERT_EQ(r.manifests.size(), 1u);
    bool named = false;
    for (const SetFault& f : r.manifests[0].faults) {
      named |= f.kind == FaultKind::kManifestInvalid &&
               f.message == "split \"train\" lists " + file + ", outside the manifest's folder (not read)";
    }
    EXPECT_TRUE(named) << file;
  }
}

TEST_F(ManifestSetTest, MissingShard) {
  fs::remove(Path(1));
  SetFault f = OnlySetFault(Verify());
  EXPECT_EQ(f.kind, FaultKind::kManifestShardMissing);
  EXPECT_EQ(f.path, Path(1));
}

TEST_F(ManifestSetTest, MissingIndexFile) {
  fs::remove(Path(0) + ".idx");
  SetFault f = OnlySetFault(Verify());
  EXPECT_EQ(f.kind, FaultKind::kManifestShardMissing);
  EXPECT_EQ(f.path, Path(0) + ".idx");
}

TEST_F(ManifestSetTest, UnlistedShard) {
  fs::create_directories(dir_ + "/old");
  WriteShard(dir_ + "/old/train-00000-of-00001.tfrecord", {JpegSample(9, 1)});
  SetResult r = Verify();
  SetFault f = OnlySetFault(r);
  EXPECT_EQ(f.kind, FaultKind::kManifestShardUnlisted);
  EXPECT_EQ(f.path, dir_ + "/old/train-00000-of-00001.tfrecord");
  EXPECT_EQ(r.files.size(), 3u);  // the folder argument found it: it is verified too
}

TEST_F(ManifestSetTest, RecordCountMismatch) {
  Entry(0)->set_records(4);
  manifest_.mutable_splits(0)->set_records(7);  // totals that agree with the entries
  manifest_.mutable_stats()->set_converted(7);
  Write();
  SetFault f = OnlySetFault(Verify());
  EXPECT_EQ(f.kind, FaultKind::kManifestRecordCount);
  EXPECT_EQ(f.path, Path(0));
  EXPECT_TRUE(HasSubstr(f.message, "lists 4 records, the shard has 3"));
}

TEST_F(ManifestSetTest, SizeMismatch) {
  Entry(1)->set_bytes(Entry(1)->bytes() + 1);
  Write();
  SetFault f = OnlySetFault(Verify());
  EXPECT_EQ(f.kind, FaultKind::kManifestSize);
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
  EXPECT_EQ(f.kind, FaultKind::kManifestChecksum);
  EXPECT_EQ(f.path, Path(0));
  EXPECT_TRUE(HasSubstr(f.message, "the manifest lists " + Entry(0)->checksum() + ", the file's CRC-32C is " +
                                       ChecksumOf(Path(0))));
}

TEST_F(ManifestSetTest, MalformedChecksumIsInvalid) {
  Entry(0)->set_checksum("md5:abc");
  Write();
  SetFault f = OnlySetFault(Verify());
  EXPECT_EQ(f.kind, FaultKind::kManifestInvalid);
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
  EXPECT_EQ(f.kind, FaultKind::kManifestInvalid);
  EXPECT_EQ(f.path, ManifestPath());
  EXPECT_EQ(r.files.size(), 2u);  // the shards are still walked
}

TEST_F(ManifestSetTest, WrongFormat) {
  manifest_.set_format("libshard.manifest/2");
  Write();
  SetFault f = OnlySetFault(Verify());
  EXPECT_EQ(f.kind, FaultKind::kManifestFormat);
  EXPECT_EQ(f.path, ManifestPath());
  EXPECT_TRUE(HasSubstr(f.message, "\"libshard.manifest/2\""));
}

TEST_F(ManifestSetTest, UnreadableManifest) {
  SetResult r = VerifySet({Path(0)}, {dir_ + "/nope.json"}, VerifyOptions());
  ASSERT_EQ(r.manifests.size(), 1u);
  ASSERT_EQ(r.manifests[0].faults.size(), 1u);
  EXPECT_EQ(r.manifests[0].faults[0].kind, FaultKind::kManifestUnreadable);
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

// ------------------------------------------------------------------ --decode

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

Sample PngSample(const image::Image& img) {
  Sample s;
  s.encoded = Png(img);
  s.format = "png";
  s.width = img.width();
  s.height = img.height();
  s.channels = img.channels();
  return s;
}

Sample RawSample(const image::Image& img, int zstd_level) {
  Sample s;
  image::RawEncodeOptions ro;
  ro.zstd_level = zstd_level;
  auto bytes = image::EncodeRaw(img, ro);
  EXPECT_TRUE(bytes.ok());
  s.encoded = *bytes;
  s.format = zstd_level == 0 ? "raw" : "raw.zst";
  s.width = img.width();
  s.height = img.height();
  s.channels = img.channels();
  s.shape = {img.height(), img.width(), img.channels()};
  s.dtype = "uint8";
  return s;
}

// Issue 16 item 2: a folder without manifest.json holding 6 of 20 shards
// (a killed conversion) passed. The names alone say a set is incomplete.
TEST(NumberedSetTest, IncompleteSetsFromNamesAlone) {
  std::vector<std::string> paths;
  for (int i : {0, 1, 2, 3, 4, 5}) paths.push_back("d/x-train-0000" + std::to_string(i) + "-of-00020.tfrecord");
  for (int i : {0, 1}) paths.push_back("d/x-val-0000" + std::to_string(i) + "-of-00002.tfrecord");  // complete
  paths.push_back("d/other.tfrecord");                                                               // no numbering
  paths.push_back("e/y-00000-of-00003");
  paths.push_back("e/y-00001-of-00003");
  paths.push_back("e/y-00002-of-00003");
  paths.push_back("e/y-00003-of-00003");  // beyond its set
  paths.push_back("e/y-00000-of-00001");  // another conversion's
  std::vector<SetFault> faults = CheckNumberedSets(paths);
  ASSERT_EQ(faults.size(), 3u);
  EXPECT_EQ(faults[0].path, "d/x-train-*-of-00020.tfrecord");
  EXPECT_EQ(faults[0].kind, FaultKind::kSetIncomplete);
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
  EXPECT_STREQ(FaultKindName(FaultKind::kSetIncomplete), "set_incomplete");
  // A huge stated count costs no more than the names given.
  EXPECT_EQ(CheckNumberedSets({"z-00000-of-99999999999999"})[0].message.substr(0, 40),
            "1 of the 99999999999999 shards of this s");
}

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

// ------------------------------------------------------- the pread file walk

TEST(FileWalkTest, RecordsLongerThanTheBufferAndAcrossItsEdges) {
  const std::string dir = MakeTempDir();
  std::vector<Sample> samples;
  for (size_t bytes : {size_t{1000}, size_t{200'000}, size_t{900'000}, size_t{3'000'000}, size_t{70'000},
                       size_t{5}, size_t{260'000}}) {
    Sample s;
    s.encoded = std::string(bytes, static_cast<char>('a' + bytes % 26));
    samples.push_back(s);
  }
  const std::string path = dir + "/big.tfrecord";
  const auto offsets = WriteShard(path, samples);
  const std::string data = ReadFileOrDie(path);
  FileChecks checks;
  checks.checksum = true;
  FileResult r = VerifyFile(path, VerifyOptions(), checks);
  EXPECT_TRUE(r.ok()) << r.faults[0].message;  // .idx compared during the walk too
  EXPECT_EQ(r.records, samples.size());
  EXPECT_EQ(r.bytes, data.size());
  EXPECT_EQ(r.crc32c, std::optional<uint32_t>(crc32c::Value(data.data(), data.size())));

  // A flipped bit inside the 3 MB record: found at its offset, and the
  // checksum still covers the whole file.
  std::string bad = data;
  bad[offsets[3] + 2'000'000] ^= 4;
  WriteFileOrDie(path, bad);
  FileResult d = VerifyFile(path, VerifyOptions(), checks);
  ASSERT_EQ(d.faults.size(), 1u);
  EXPECT_EQ(d.faults[0].kind, FaultKind::kDataCrcMismatch);
  EXPECT_EQ(d.faults[0].offset, offsets[3]);
  EXPECT_EQ(d.faults[0].record, 3u);
  EXPECT_EQ(d.unchecked_bytes, std::optional<uint64_t>(bad.size() - offsets[3]));
  EXPECT_EQ(d.crc32c, std::optional<uint32_t>(crc32c::Value(bad.data(), bad.size())));
  // The same faults as the in-memory walk.
  FileResult m = VerifyBuffer(bad, path, VerifyOptions());
  EXPECT_EQ(m.faults[0].message, d.faults[0].message);

  // Cut inside the big record: truncated_data with the true remainder.
  WriteFileOrDie(path, data.substr(0, offsets[3] + 1'000'000));
  fs::remove(path + ".idx");
  FileResult t = VerifyFile(path, VerifyOptions());
  ASSERT_EQ(t.faults.size(), 1u);
  EXPECT_EQ(t.faults[0].kind, FaultKind::kTruncatedData);
  EXPECT_EQ(t.faults[0].offset, offsets[3]);
  EXPECT_TRUE(HasSubstr(t.faults[0].message, "1000000 remain"));
}

}  // namespace
}  // namespace libshard::verify
