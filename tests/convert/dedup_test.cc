// --dedup (converter.h's dedup_within / dedup_across, `shard convert
// --dedup`): which copy of a group of duplicates is kept (the first in the
// listing's order, whatever --seed), the train copies dropped from the other
// splits, the rejects naming the kept file, the leak check's counts after
// it, resume, and the refusals.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "fixtures.h"
#include "libshard/convert/converter.h"
#include "libshard/image/encode.h"
#include "libshard/image/resize.h"
#include "libshard/manifest/manifest_json.h"
#include "photo_testutil.h"
#include "testutil.h"

namespace libshard::convert {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::ReadFileOrDie;
using testing::SyntheticPhoto;
using testing::WriteTreeFile;

std::string Png(const image::Image& img) { return *image::EncodePng(img); }
std::string Jpeg(const image::Image& img, int quality) {
  image::JpegEncodeOptions q;
  q.quality = quality;
  return *image::EncodeJpeg(img, q);
}
image::Image Photo(int seed) { return SyntheticPhoto(200, 150, seed); }
image::Image Small(int seed) { return *image::Resize(Photo(seed), 140, 105, image::Filter::kBilinear); }

// A reject's reason with a near pair's distance written N (the number of
// bits is the hashes' business, not this test's).
std::string WithoutDistance(std::string reason) {
  const std::string near = "(near: perceptual hashes ";
  const size_t at = reason.find(near);
  if (at == std::string::npos) return reason;
  const size_t digits = at + near.size();
  size_t end = digits;
  while (end < reason.size() && reason[end] >= '0' && reason[end] <= '9') ++end;
  return reason.replace(digits, end - digits, "N");
}

using Rejects = std::map<std::string, std::string>;  // path -> reason (distance as N)

Manifest ReadManifest(const std::string& dir) {
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/manifest.json");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : Manifest();
}

Rejects RejectsOf(const Manifest& m) {
  Rejects out;
  for (const Reject& r : m.rejects()) out[r.path()] = WithoutDistance(r.reason());
  return out;
}

// duplicates.tsv's pairs as "split_a/split_b file_a ~ file_b" (names sorted).
std::multiset<std::string> PairsOf(const std::string& tsv) {
  std::multiset<std::string> out;
  std::istringstream in(tsv);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::istringstream cols(line);
    for (std::string c; std::getline(cols, c, '\t');) f.push_back(c);
    EXPECT_EQ(f.size(), 6u) << line;
    if (f.size() != 6) continue;
    std::string a = f[3], b = f[5];
    if (b < a) std::swap(a, b);
    std::string sa = f[2], sb = f[4];
    if (sb < sa) std::swap(sa, sb);
    out.insert(sa + "/" + sb + " " + a + " ~ " + b);
  }
  return out;
}

// Every file of a finished output folder but manifest.json (its run times
// differ), by name.
std::map<std::string, std::string> FilesOf(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& f : fs::directory_iterator(dir)) {
    if (f.is_regular_file() && f.path().filename() != "manifest.json") {
      out[f.path().filename().string()] = ReadFileOrDie(f.path().string());
    }
  }
  return out;
}

// Train holds eight photos and four groups of duplicates within it (exact
// copies, a JPEG quality 60 re-encode, a resize); val and test hold copies
// of train images (exact, JPEG quality 60 and 75, a resize), a group within
// val, and one pair across val and test that train does not have.
class DedupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = testing::MakeTempDir();
    in_ = base_ + "/in";
    for (int i = 0; i < 8; ++i) {
      WriteTreeFile(in_, "train/" + std::string(i % 2 ? "a" : "b") + "/p" + std::to_string(i) + ".png", Png(Photo(i)));
    }
    WriteTreeFile(in_, "train/a/p0 again.png", Png(Photo(0)));        // exact, of train/b/p0.png
    WriteTreeFile(in_, "train/a/p2 q60.jpg", Jpeg(Photo(2), 60));     // near, of train/b/p2.png
    WriteTreeFile(in_, "train/b/p1 small.png", Png(Small(1)));        // near, of train/a/p1.png
    WriteTreeFile(in_, "train/b/p4 copy.png", Png(Photo(4)));         // exact, of train/b/p4.png
    for (int i = 0; i < 4; ++i) WriteTreeFile(in_, "val/a/q" + std::to_string(i) + ".png", Png(Photo(100 + i)));
    WriteTreeFile(in_, "val/a/q0 again.png", Png(Photo(100)));        // within val
    WriteTreeFile(in_, "val/b/p3 copy.png", Png(Photo(3)));           // exact, of train/a/p3.png
    WriteTreeFile(in_, "val/b/p5 q60.jpg", Jpeg(Photo(5), 60));       // near, of train/a/p5.png
    WriteTreeFile(in_, "val/a/w.png", Png(Photo(200)));
    WriteTreeFile(in_, "test/a/r0.png", Png(Photo(300)));
    WriteTreeFile(in_, "test/a/w copy.png", Png(Photo(200)));         // val ~ test, not in train
    WriteTreeFile(in_, "test/a/p6 small.png", Png(Small(6)));         // near, of train/b/p6.png
    WriteTreeFile(in_, "test/b/p7 q75.jpg", Jpeg(Photo(7), 75));      // near, of train/a/p7.png
    WriteTreeFile(in_, "test/b/p0 copy.png", Png(Photo(0)));          // exact, of both train copies of p0
  }
  void TearDown() override { fs::remove_all(base_); }

  ConvertOptions Options(const std::string& out, uint64_t seed = 1) const {
    ConvertOptions o;
    o.input = in_;
    o.output = out;
    o.plan.records_per_shard = 3;
    o.plan.seed = seed;
    o.sync = false;
    o.threads = 2;
    return o;
  }

  // In the listing's order (split, then path, byte-wise) the first of each
  // group is kept: "train/a/p0 again.png" before "train/b/p0.png",
  // "train/b/p4 copy.png" before "train/b/p4.png" (' ' < '.').
  const Rejects kWithin = {
      {"train/b/p0.png", "duplicate of train/a/p0 again.png (exact: equal pixels)"},
      {"train/b/p2.png", "duplicate of train/a/p2 q60.jpg (near: perceptual hashes N bits apart)"},
      {"train/b/p1 small.png", "duplicate of train/a/p1.png (near: perceptual hashes N bits apart)"},
      {"train/b/p4.png", "duplicate of train/b/p4 copy.png (exact: equal pixels)"},
      {"val/a/q0.png", "duplicate of val/a/q0 again.png (exact: equal pixels)"},
  };
  const Rejects kAcross = {
      {"val/b/p3 copy.png", "duplicate of train/a/p3.png in train (exact: equal pixels)"},
      {"val/b/p5 q60.jpg", "duplicate of train/a/p5.png in train (near: perceptual hashes N bits apart)"},
      {"test/a/p6 small.png", "duplicate of train/b/p6.png in train (near: perceptual hashes N bits apart)"},
      {"test/b/p7 q75.jpg", "duplicate of train/a/p7.png in train (near: perceptual hashes N bits apart)"},
      {"test/b/p0 copy.png", "duplicate of train/a/p0 again.png in train (exact: equal pixels)"},
  };
  const std::string kValTestPair = "test/val test/a/w copy.png ~ val/a/w.png";
  std::string base_, in_;
};

// Without --dedup the leak check lists every planted pair (and nothing
// else): what the tests below remove.
TEST_F(DedupTest, WithoutDedupTheLeakCheckListsEveryPlantedPair) {
  const std::string out = base_ + "/out";
  ASSERT_TRUE(Convert(Options(out)).ok());
  const std::multiset<std::string> pairs = PairsOf(ReadFileOrDie(out + "/duplicates.tsv"));
  const std::multiset<std::string> want = {
      "train/train train/a/p0 again.png ~ train/b/p0.png",
      "train/train train/a/p2 q60.jpg ~ train/b/p2.png",
      "train/train train/a/p1.png ~ train/b/p1 small.png",
      "train/train train/b/p4 copy.png ~ train/b/p4.png",
      "val/val val/a/q0 again.png ~ val/a/q0.png",
      "train/val train/a/p3.png ~ val/b/p3 copy.png",
      "train/val train/a/p5.png ~ val/b/p5 q60.jpg",
      "test/train test/a/p6 small.png ~ train/b/p6.png",
      "test/train test/b/p7 q75.jpg ~ train/a/p7.png",
      // p0's copy in test is listed once, with the first of train's two.
      "test/train test/b/p0 copy.png ~ train/a/p0 again.png",
      kValTestPair,
  };
  // Which of train's two p0 copies stands for them depends on the plan
  // order (the leak check's business): the p0 pair across may name either.
  std::multiset<std::string> got = pairs;
  if (got.erase("test/train test/b/p0 copy.png ~ train/b/p0.png") == 1) {
    got.insert("test/train test/b/p0 copy.png ~ train/a/p0 again.png");
  }
  EXPECT_EQ(got, want);
  EXPECT_TRUE(ReadManifest(out).rejects().empty());
}

// The kept copy is the first in the listing's order, not in the plan's
// (shuffled by --seed): the same rejects for every seed and thread count,
// each naming the kept file, and no pair left within a split.
TEST_F(DedupTest, WithinKeepsTheFirstInListingOrderWhateverTheSeed) {
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::string out = base_ + "/within" + std::to_string(seed);
    ConvertOptions o = Options(out, seed);
    o.threads = seed % 2 ? 2 : 1;
    o.dedup_within = true;
    StatusOr<ConvertResult> r = Convert(o);
    ASSERT_TRUE(r.ok()) << r.status();
    const Manifest m = ReadManifest(out);
    EXPECT_EQ(RejectsOf(m), kWithin);
    EXPECT_EQ(m.options().dedup(), "within");
    EXPECT_EQ(m.stats().converted(), 25u - kWithin.size());
    EXPECT_EQ(m.duplicates().within(), 0u);
    EXPECT_EQ(m.duplicates().leaks(), 6u);  // only listed: the five of train and val ~ test
    EXPECT_TRUE(Contains(ReadFileOrDie(out + "/rejects.tsv"),
                         "train/b/p4.png\tduplicate of train/b/p4 copy.png (exact: equal pixels)\n"));
  }
}

// --dedup across keeps every train image and drops its copies from val and
// test, naming the train file; a pair of val and test that train does not
// have stays (listed), as do the pairs within a split.
TEST_F(DedupTest, AcrossDropsTheTrainCopiesFromTheOtherSplits) {
  for (uint64_t seed : {1, 9}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::string out = base_ + "/across" + std::to_string(seed);
    ConvertOptions o = Options(out, seed);
    o.dedup_across = true;
    StatusOr<ConvertResult> r = Convert(o);
    ASSERT_TRUE(r.ok()) << r.status();
    const Manifest m = ReadManifest(out);
    EXPECT_EQ(RejectsOf(m), kAcross);
    EXPECT_EQ(m.options().dedup(), "across");
    for (const SplitEntry& s : m.splits()) {
      if (s.name() == "train") {
        EXPECT_EQ(s.records(), 12u) << "every train image is kept";
      }
    }
    EXPECT_EQ(m.duplicates().leaks(), 1u);
    EXPECT_EQ(m.duplicates().within(), 5u);
    std::multiset<std::string> across;
    for (const std::string& p : PairsOf(ReadFileOrDie(out + "/duplicates.tsv"))) {
      if (p.rfind("train/train ", 0) != 0 && p.rfind("val/val ", 0) != 0) across.insert(p);
    }
    EXPECT_EQ(across, std::multiset<std::string>{kValTestPair});
  }
}

// Both: train is deduplicated within, the other splits lose their train
// copies (named by train's kept copy), then their own duplicates: no pair is
// left but the one across val and test.
TEST_F(DedupTest, WithinAndAcrossLeaveOnlyThePairTrainDoesNotHave) {
  const std::string out = base_ + "/both";
  ConvertOptions o = Options(out, 3);
  o.dedup_within = o.dedup_across = true;
  StatusOr<ConvertResult> r = Convert(o);
  ASSERT_TRUE(r.ok()) << r.status();
  const Manifest m = ReadManifest(out);
  Rejects want = kWithin;
  want.insert(kAcross.begin(), kAcross.end());
  EXPECT_EQ(RejectsOf(m), want);
  EXPECT_EQ(m.options().dedup(), "within,across");
  EXPECT_EQ(m.duplicates().within(), 0u);
  EXPECT_EQ(m.duplicates().leaks(), 1u);
  EXPECT_EQ(PairsOf(ReadFileOrDie(out + "/duplicates.tsv")), std::multiset<std::string>{kValTestPair});
  EXPECT_EQ(r->rejected, want.size());
}

// An interrupted run (shards lost) rerun with the same options gives the
// bytes of an uninterrupted one, whichever shards it keeps (their images
// still decide for the shards redone); another --dedup redoes every shard.
TEST_F(DedupTest, ResumeGivesTheSameBytesAndAnotherModeRedoesEveryShard) {
  const std::string one = base_ + "/one", resumed = base_ + "/resumed";
  ConvertOptions o = Options(one, 7);
  o.dedup_within = o.dedup_across = true;
  ASSERT_TRUE(Convert(o).ok());
  o.output = resumed;
  ASSERT_TRUE(Convert(o).ok());
  std::vector<std::string> shards;
  for (const auto& f : fs::directory_iterator(resumed)) {
    if (f.path().extension() == ".tfrecord") shards.push_back(f.path().string());
  }
  std::sort(shards.begin(), shards.end());
  ASSERT_GT(shards.size(), 6u);
  uint32_t removed = 0;
  for (size_t i = 0; i < shards.size(); i += 2, ++removed) fs::remove(shards[i]);
  fs::remove(resumed + "/rejects.tsv");
  fs::remove(resumed + "/duplicates.tsv");
  StatusOr<ConvertResult> again = Convert(o);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->shards_written, removed);
  EXPECT_EQ(again->shards_reused, shards.size() - removed);
  EXPECT_EQ(FilesOf(resumed), FilesOf(one));

  ConvertOptions within = o;
  within.dedup_across = false;
  StatusOr<ConvertResult> other = Convert(within);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->shards_reused, 0u);
  EXPECT_EQ(RejectsOf(ReadManifest(resumed)), kWithin);
}

TEST_F(DedupTest, AcrossNeedsATrainSplitAndEveryModeOneTask) {
  const std::string in = base_ + "/no-train", out = base_ + "/out";
  WriteTreeFile(in, "val/a/x.png", Png(Photo(1)));
  WriteTreeFile(in, "test/a/y.png", Png(Photo(1)));
  ConvertOptions o = Options(out);
  o.input = in;
  o.dedup_across = true;
  StatusOr<ConvertResult> r = Convert(o);
  ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status();
  EXPECT_TRUE(Contains(r.status().message(), "--dedup across keeps the split named train")) << r.status();
  EXPECT_TRUE(Contains(r.status().message(), "(its splits: test, val)")) << r.status();
  EXPECT_FALSE(fs::exists(out));
  o.dedup_across = false;
  o.dedup_within = true;
  EXPECT_TRUE(Convert(o).ok()) << "within needs no train split";

  for (int mode = 1; mode <= 3; ++mode) {
    ConvertOptions t = Options(base_ + "/tasks");
    t.dedup_within = mode & 1;
    t.dedup_across = mode & 2;
    t.num_tasks = 2;
    StatusOr<ConvertResult> tr = Convert(t);
    EXPECT_EQ(tr.status().code(), StatusCode::kInvalidArgument) << mode;
    EXPECT_TRUE(Contains(tr.status().message(), "needs the whole split in one run")) << tr.status();
  }
}

TEST_F(DedupTest, CliTakesTheModesAndRefusesTheRest) {
  const std::string out = base_ + "/out";
  testing::CommandResult both =
      testing::RunShard("convert " + in_ + " -o " + out + " --no-sync -q --dedup across,within --seed 3");
  EXPECT_EQ(both.exit_code, 3) << both.err;  // rejects: the duplicates
  EXPECT_EQ(ReadManifest(out).options().dedup(), "within,across");
  Rejects want = kWithin;
  want.insert(kAcross.begin(), kAcross.end());
  EXPECT_EQ(RejectsOf(ReadManifest(out)), want);

  testing::CommandResult help = testing::RunShard("convert --help");
  EXPECT_TRUE(Contains(help.out, "within,across")) << help.out;

  for (const std::string bad : {"--dedup sideways", "--dedup within,within", "--dedup within,", "--dedup ,across",
                                "--dedup across --num-tasks 2"}) {
    testing::CommandResult r = testing::RunShard("convert " + in_ + " -o " + base_ + "/bad " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, "--dedup")) << bad << ": " << r.err;
  }
  testing::CommandResult sideways = testing::RunShard("convert " + in_ + " -o " + base_ + "/bad --dedup sideways");
  EXPECT_TRUE(Contains(sideways.err, "--dedup must be within, across or within,across, not 'sideways'"))
      << sideways.err;
  WriteTreeFile(base_ + "/no-train", "val/a/x.png", Png(Photo(1)));
  testing::CommandResult none =
      testing::RunShard("convert " + base_ + "/no-train -o " + base_ + "/bad --dedup across");
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_TRUE(Contains(none.err, "--dedup across keeps the split named train")) << none.err;
  EXPECT_FALSE(fs::exists(base_ + "/bad"));
}

}  // namespace
}  // namespace libshard::convert
