// The leak check in a conversion (converter.h's leaks / leak_distance /
// dedup_within, `shard convert --leaks`, `shard merge`): duplicates.tsv and
// manifest.json's counts, fingerprints kept for resumed runs and merges but
// left out of manifest.json, --leaks off / fail, --dedup within.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "fixtures.h"
#include "libshard/convert/converter.h"
#include "libshard/convert/duplicates.h"
#include "libshard/convert/manifest_io.h"
#include "libshard/convert/merge.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/encode.h"
#include "libshard/image/resize.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/util/sha256.h"
#include "photo_testutil.h"
#include "tensorflow/core/example/example.pb.h"
#include "testutil.h"

namespace libshard::convert {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::ReadFileOrDie;
using testing::SyntheticPhoto;
using testing::WriteTreeFile;

std::string Png(const image::Image& img) { return *image::EncodePng(img); }

// Pairs of duplicates.tsv as "kind split_a/file_a ~ split_b/file_b", the two
// names sorted (which of two copies comes first depends on the shuffle).
std::multiset<std::string> Pairs(const std::string& tsv) {
  std::multiset<std::string> out;
  std::istringstream in(tsv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "kind\tdistance\tsplit_a\tfile_a\tsplit_b\tfile_b");
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::istringstream cols(line);
    for (std::string c; std::getline(cols, c, '\t');) f.push_back(c);
    EXPECT_EQ(f.size(), 6u) << line;
    if (f.size() != 6) continue;
    std::string a = f[3], b = f[5];  // paths relative to the input: split folders included
    if (b < a) std::swap(a, b);
    out.insert(f[0] + " " + a + " ~ " + b);
  }
  return out;
}

class LeakCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = testing::MakeTempDir();
    const std::string in = base_ + "/in";
    for (int i = 0; i < 8; ++i) {
      WriteTreeFile(in, "train/" + std::string(i % 2 ? "a" : "b") + "/p" + std::to_string(i) + ".png",
                    Png(SyntheticPhoto(200, 150, i)));
    }
    WriteTreeFile(in, "train/a/p0 again.png", Png(SyntheticPhoto(200, 150, 0)));  // within train
    for (int i = 0; i < 4; ++i) {
      WriteTreeFile(in, "val/a/q" + std::to_string(i) + ".png", Png(SyntheticPhoto(200, 150, 100 + i)));
    }
    WriteTreeFile(in, "val/b/p3 copy.png", Png(SyntheticPhoto(200, 150, 3)));  // exact leak
    image::JpegEncodeOptions q60;
    q60.quality = 60;
    WriteTreeFile(in, "val/b/p5 q60.jpg", *image::EncodeJpeg(SyntheticPhoto(200, 150, 5), q60));
    WriteTreeFile(in, "val/a/p6 small.png",
                  Png(*image::Resize(SyntheticPhoto(200, 150, 6), 140, 105, image::Filter::kBilinear)));
  }
  void TearDown() override { fs::remove_all(base_); }

  ConvertOptions Options(const std::string& out) const {
    ConvertOptions o;
    o.input = base_ + "/in";
    o.output = out;
    o.plan.records_per_shard = 3;
    o.sync = false;
    o.threads = 2;
    return o;
  }
  static Manifest ReadManifest(const std::string& dir) {
    StatusOr<Manifest> m = manifest::ReadManifest(dir + "/manifest.json");
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *m : Manifest();
  }
  const std::multiset<std::string> kWant = {
      "exact train/a/p0 again.png ~ train/b/p0.png",
      "exact train/a/p3.png ~ val/b/p3 copy.png",
      "near train/a/p5.png ~ val/b/p5 q60.jpg",
      "near train/b/p6.png ~ val/a/p6 small.png",
  };
  std::string base_;
};

TEST_F(LeakCheckTest, PairsInTsvCountsInManifestFingerprintsInEntries) {
  const std::string out = base_ + "/out";
  StatusOr<ConvertResult> r = Convert(Options(out));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Pairs(ReadFileOrDie(out + "/duplicates.tsv")), kWant);
  const Manifest m = ReadManifest(out);
  ASSERT_TRUE(m.has_duplicates());
  EXPECT_EQ(m.duplicates().leaks(), 3u);
  EXPECT_EQ(m.duplicates().within(), 1u);
  EXPECT_EQ(m.options().leaks(), "warn");
  EXPECT_EQ(m.options().leak_distance(), kDefaultLeakDistance);
  const std::string json = ReadFileOrDie(out + "/manifest.json");
  EXPECT_TRUE(Contains(json, "\"duplicates\": {\n  \"within\": 1,\n  \"leaks\": 3,\n  \"leaked_images\": " +
                                std::to_string(m.duplicates().leaked_images()) + ",\n  \"leaked_by_split\": {"))
      << json;
  uint64_t hashes = 0;
  for (const SplitEntry& s : m.splits()) {
    for (const ShardEntry& e : s.shards()) {
      EXPECT_EQ(e.image_hashes_size(), 0) << "manifest.json carries fingerprints: " << e.file();
      StatusOr<ShardEntry> kept = ReadShardEntry(out + "/.libshard/" + e.file() + ".json");
      ASSERT_TRUE(kept.ok()) << kept.status();
      EXPECT_EQ(static_cast<uint64_t>(kept->image_hashes_size()), kept->records()) << e.file();
      hashes += kept->image_hashes_size();
    }
  }
  EXPECT_EQ(hashes, 16u);
  // What the fingerprints add to the entries (SHARD.json, as written):
  // well under 1 KiB an image (the hex form took 1,053 bytes here).
  ConvertOptions off = Options(base_ + "/off");
  off.leaks = LeakMode::kOff;
  ASSERT_TRUE(Convert(off).ok());
  auto entry_bytes = [](const std::string& dir) {
    uintmax_t total = 0;
    for (const auto& f : fs::directory_iterator(dir + "/.libshard")) {
      if (f.path().extension() == ".json") total += fs::file_size(f.path());
    }
    return total;
  };
  const double per_image = static_cast<double>(entry_bytes(out) - entry_bytes(base_ + "/off")) / 16;
  std::printf("fingerprints in the shard entries: %.0f bytes an image\n", per_image);
  EXPECT_LT(per_image, 900);
}

// The exact key kept for each image is the SHA-256 of the image bytes its
// record stores (image/encoded), not of the decoded pixels
// (duplicates.h, FingerprintOf).
TEST_F(LeakCheckTest, TheExactKeyIsTheStoredImageBytesSha256) {
  const std::string out = base_ + "/out";
  StatusOr<ConvertResult> r = Convert(Options(out));
  ASSERT_TRUE(r.ok()) << r.status();
  std::map<std::string, std::string> stored;  // file -> SHA-256 of its image/encoded
  std::vector<DuplicateImage> images;
  const Manifest m = ReadManifest(out);
  for (const SplitEntry& s : m.splits()) {
    for (const ShardEntry& e : s.shards()) {
      for (const std::string& rec : testing::ReadRecords(out + "/" + e.file())) {
        tensorflow::Example pb;
        ASSERT_TRUE(pb.ParseFromString(rec));
        const auto& f = pb.features().feature();
        stored[f.at(keys::kFilename).bytes_list().value(0)] =
            util::Sha256Hex(f.at(keys::kEncoded).bytes_list().value(0));
      }
      StatusOr<ShardEntry> kept = ReadShardEntry(out + "/.libshard/" + e.file() + ".json");
      ASSERT_TRUE(kept.ok()) << kept.status();
      ASSERT_TRUE(AppendDuplicateImages(*kept, &images).ok());
    }
  }
  ASSERT_EQ(images.size(), 16u);
  for (const DuplicateImage& img : images) {
    ASSERT_EQ(stored.count(img.file), 1u) << img.file;
    EXPECT_EQ(img.fingerprint.key_sha256, stored[img.file]) << img.file;
  }
}

TEST_F(LeakCheckTest, ResumedAndFailRunsReuseShardsAndKeepTheCheck) {
  const std::string out = base_ + "/out";
  ASSERT_TRUE(Convert(Options(out)).ok());
  const std::string tsv = ReadFileOrDie(out + "/duplicates.tsv");
  // A shard lost: the rerun redoes it and checks the kept ones from their entries.
  for (const auto& f : fs::directory_iterator(out)) {
    if (f.path().extension() == ".tfrecord") {
      fs::remove(f.path());
      break;
    }
  }
  fs::remove(out + "/duplicates.tsv");
  ConvertOptions o = Options(out);
  o.leaks = LeakMode::kFail;  // warn and fail write the same shards
  StatusOr<ConvertResult> r = Convert(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shards_written, 1u);
  EXPECT_GT(r->shards_reused, 0u);
  EXPECT_EQ(ReadFileOrDie(out + "/duplicates.tsv"), tsv);
  EXPECT_EQ(ReadManifest(out).duplicates().leaks(), 3u);
  EXPECT_EQ(r->shards_without_hashes, 0u);
}

TEST_F(LeakCheckTest, OffTakesNoFingerprintsAndLeavesNoList) {
  const std::string out = base_ + "/out";
  ASSERT_TRUE(Convert(Options(out)).ok());
  ConvertOptions o = Options(out);
  o.leaks = LeakMode::kOff;
  StatusOr<ConvertResult> r = Convert(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shards_reused, 0u) << "entries with fingerprints are not what --leaks off writes";
  EXPECT_FALSE(fs::exists(out + "/duplicates.tsv"));
  EXPECT_FALSE(ReadManifest(out).has_duplicates());
  EXPECT_FALSE(Contains(ReadFileOrDie(out + "/manifest.json"), "\"duplicates\""));
  for (const auto& f : fs::directory_iterator(out + "/.libshard")) {
    if (f.path().extension() != ".json") continue;
    StatusOr<ShardEntry> e = ReadShardEntry(f.path().string());
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ(e->image_hashes_size(), 0) << f.path();
  }
}

TEST_F(LeakCheckTest, DedupWithinKeepsTheFirstAndRejectsTheRest) {
  const std::string out = base_ + "/out";
  ConvertOptions o = Options(out);
  o.dedup_within = true;
  StatusOr<ConvertResult> r = Convert(o);
  ASSERT_TRUE(r.ok()) << r.status();
  const Manifest m = ReadManifest(out);
  ASSERT_EQ(m.rejects_size(), 1);
  const Reject& rej = m.rejects(0);
  // The first in the listing's order is kept, whatever the seed.
  EXPECT_EQ(rej.path(), "train/b/p0.png");
  EXPECT_EQ(rej.reason(), "duplicate of train/a/p0 again.png (exact: equal pixels)");
  EXPECT_EQ(m.stats().converted(), 15u);
  EXPECT_EQ(m.duplicates().within(), 0u);
  EXPECT_EQ(m.duplicates().leaks(), 3u);
  EXPECT_TRUE(Contains(ReadFileOrDie(out + "/rejects.tsv"), "duplicate of"));

  // Resumed with a shard lost: the same reject, whichever shard is redone.
  for (const auto& f : fs::directory_iterator(out)) {
    if (f.path().extension() == ".tfrecord") fs::remove(f.path());
    if (f.path().extension() == ".tfrecord") break;
  }
  StatusOr<ConvertResult> again = Convert(o);
  ASSERT_TRUE(again.ok()) << again.status();
  const Manifest m2 = ReadManifest(out);
  ASSERT_EQ(m2.rejects_size(), 1);
  EXPECT_EQ(m2.rejects(0).path(), rej.path());
  EXPECT_EQ(m2.stats().converted(), 15u);

  o.num_tasks = 2;
  EXPECT_EQ(Convert(o).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(LeakCheckTest, MergeFindsLeaksAcrossTasks) {
  const std::string one = base_ + "/one", tasks = base_ + "/tasks";
  ASSERT_TRUE(Convert(Options(one)).ok());
  for (uint32_t i = 0; i < 3; ++i) {
    ConvertOptions o = Options(tasks);
    o.num_tasks = 3;
    o.task_index = i;
    ASSERT_TRUE(Convert(o).ok());
  }
  EXPECT_FALSE(fs::exists(tasks + "/duplicates.tsv"));
  StatusOr<MergeResult> r = MergeTasks(tasks);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->problems.empty()) << r->problems[0];
  EXPECT_EQ(ReadFileOrDie(tasks + "/duplicates.tsv"), ReadFileOrDie(one + "/duplicates.tsv"));
  EXPECT_EQ(ReadManifest(tasks).duplicates().leaks(), 3u);
  EXPECT_EQ(ReadManifest(tasks).duplicates().within(), 1u);
}

TEST_F(LeakCheckTest, MergeNamesAShardWithDamagedFingerprints) {
  const std::string tasks = base_ + "/tasks";
  for (uint32_t i = 0; i < 2; ++i) {
    ConvertOptions o = Options(tasks);
    o.num_tasks = 2;
    o.task_index = i;
    ASSERT_TRUE(Convert(o).ok());
  }
  const std::string path = TaskManifestPath(tasks, 1, 2);
  std::string text = ReadFileOrDie(path);
  // Four base64 digits fewer: 397 bytes of region hashes.
  const std::string field = "\"regions\": \"";
  const size_t at = text.find(field);
  ASSERT_NE(at, std::string::npos);
  text.erase(at + field.size(), 4);
  testing::WriteFileOrDie(path, text);
  StatusOr<MergeResult> r = MergeTasks(tasks);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status().message(), ".tfrecord: image hash ")) << r.status().message();
  EXPECT_TRUE(Contains(r.status().message(), " 397 bytes of region hashes, not 32 and 400")) << r.status().message();
  EXPECT_FALSE(fs::exists(tasks + "/manifest.json"));
}

TEST_F(LeakCheckTest, CliExitsOneOnLeaksOnlyUnderFail) {
  const std::string in = base_ + "/in", out = base_ + "/out";
  testing::CommandResult warn = testing::RunShard("convert " + in + " -o " + out + " --no-sync");
  EXPECT_EQ(warn.exit_code, 0) << warn.err;
  EXPECT_TRUE(Contains(warn.err, "leak check: searching ")) << warn.err;  // before the search
  // Pairs, and the images they hold (issue 46: images, not only groups).
  const Manifest m = ReadManifest(out);
  std::string leaked = "leak check: 3 pair(s) across splits (" + std::to_string(m.duplicates().leaked_images()) +
                       " image(s) with a copy in another split:";
  for (const char* split : {"test", "train", "val"}) {
    auto it = m.duplicates().leaked_by_split().find(split);
    if (it != m.duplicates().leaked_by_split().end()) leaked += " " + std::string(split) + " " + std::to_string(it->second);
  }
  EXPECT_GE(m.duplicates().leaked_images(), 4u);
  EXPECT_TRUE(Contains(warn.err, leaked + "), 1 within a split (distance " + std::to_string(kDefaultLeakDistance) +
                                     ") -> " + out + "/duplicates.tsv"))
      << warn.err << "\nwanted: " << leaked;
  testing::CommandResult fail = testing::RunShard("convert " + in + " -o " + out + " --no-sync -q --leaks fail");
  EXPECT_EQ(fail.exit_code, 1) << fail.err;
  EXPECT_TRUE(Contains(fail.err, "--leaks fail")) << fail.err;
  testing::CommandResult off = testing::RunShard("convert " + in + " -o " + out + " --no-sync -q --leaks off");
  EXPECT_EQ(off.exit_code, 0) << off.err;
  EXPECT_FALSE(Contains(off.err, "leak check")) << off.err;
  // Distance 0: equal hashes only; still the copy of p3 and p0's twin (a
  // near copy whose hash happens to be equal counts too).
  testing::CommandResult exact =
      testing::RunShard("convert " + in + " -o " + out + " --no-sync --leak-distance 0 --leaks fail");
  EXPECT_EQ(exact.exit_code, 1) << exact.err;
  EXPECT_TRUE(Contains(exact.err, "), 1 within a split (distance 0)")) << exact.err;
  for (const char* bad : {"--leaks maybe", "--leak-distance 17", "--dedup sideways", "--dedup within --num-tasks 2"}) {
    testing::CommandResult r = testing::RunShard("convert " + in + " -o " + out + " " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
  }
}

}  // namespace
}  // namespace libshard::convert
