// Merging a task split: N task runs + MergeTasks equal one run (shards,
// indices, manifest apart from `run`, rejects.tsv) for 2, 3 and 7 tasks;
// missing tasks, missing and damaged shards are named and nothing is
// written; re-running the failed task then merges cleanly.
#include "libshard/convert/merge.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "fixtures.h"
#include "libshard/convert/converter.h"
#include "libshard/convert/manifest_io.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/reader/dataset.h"
#include "testutil.h"

namespace libshard::convert {
namespace {

namespace fs = std::filesystem;
using testing::MakeTempDir;
using testing::PngBytes;
using testing::ReadFileOrDie;
using testing::WriteTreeFile;

using testing::Contains;

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = MakeTempDir();
    testing::WriteSplitClassTree(base_ + "/in");
  }
  void TearDown() override { fs::remove_all(base_); }

  ConvertOptions Options(const std::string& out) const {
    ConvertOptions o;
    o.input = base_ + "/in";
    o.output = out;
    o.plan.records_per_shard = 2;
    o.plan.seed = 7;
    o.sync = false;
    o.threads = 2;
    return o;
  }
  void RunTask(const std::string& out, uint32_t n, uint32_t i) const {
    ConvertOptions o = Options(out);
    o.num_tasks = n;
    o.task_index = i;
    StatusOr<ConvertResult> r = Convert(o);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  // Every visible file: shards, indices, manifest.json (run cleared), rejects.tsv.
  std::map<std::string, std::string> Outputs(const std::string& dir) const {
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : testing::SnapshotDir(dir)) {
      if (k[0] == '.') continue;
      out[k] = v;
    }
    return out;
  }
  std::string base_;
};

TEST_F(MergeTest, TasksPlusMergeEqualOneRun) {
  ASSERT_TRUE(Convert(Options(base_ + "/single")).ok());
  const auto want = Outputs(base_ + "/single");
  ASSERT_TRUE(want.count("manifest.json"));
  ASSERT_TRUE(want.count("rejects.tsv"));
  ASSERT_TRUE(Contains(want.at("rejects.tsv"), "readme.png"));
  for (uint32_t n : {2u, 3u, 7u}) {
    SCOPED_TRACE("tasks " + std::to_string(n));
    const std::string dir = base_ + "/tasks" + std::to_string(n);
    for (uint32_t i = 0; i < n; ++i) RunTask(dir, n, n - 1 - i);  // any order
    StatusOr<MergeResult> r = MergeTasks(dir);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->problems.empty()) << r->problems[0];
    EXPECT_EQ(r->tasks, n);
    EXPECT_TRUE(r->manifest.complete());
    EXPECT_EQ(r->manifest.run().num_tasks(), n);
    EXPECT_EQ(testing::CountDifferences(want, Outputs(dir)), 0);
    // The merged folder is what readers see: verify finds no fault (no task
    // manifest taken for a shard) and the Loader reads every sample once.
    EXPECT_FALSE(fs::exists(dir + "/" + TaskManifestName(0, n)));
    EXPECT_TRUE(fs::exists(TaskManifestPath(dir, 0, n)));
    testing::FolderReadBack rb = testing::ReadBackFolder(dir);
    EXPECT_EQ(rb.manifests, 1u);
    EXPECT_TRUE(rb.verify_faults.empty()) << rb.verify_faults[0];
    EXPECT_EQ(rb.open_error, "");
    EXPECT_EQ(rb.loader_samples, r->manifest.stats().converted());
    EXPECT_EQ(rb.filenames.size(), r->manifest.stats().converted());
    EXPECT_TRUE(rb.duplicates().empty());
  }
}

TEST_F(MergeTest, ARunOfOneTaskIsMergedAlready) {
  const std::string dir = base_ + "/one";
  RunTask(dir, 1, 0);
  const std::string before = ReadFileOrDie(dir + "/manifest.json");
  StatusOr<MergeResult> r = MergeTasks(dir);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->problems.empty());
  EXPECT_EQ(r->tasks, 1u);
  uint32_t shard_files = 0;
  for (const auto& e : fs::directory_iterator(dir)) shard_files += e.path().extension() == ".tfrecord";
  EXPECT_EQ(r->shards, shard_files);
  EXPECT_GT(shard_files, 5u);
  EXPECT_EQ(r->manifest_path, dir + "/manifest.json");
  EXPECT_EQ(ReadFileOrDie(dir + "/manifest.json"), before);  // nothing written
  // A folder with neither is still an error.
  fs::create_directories(base_ + "/empty");
  EXPECT_EQ(MergeTasks(base_ + "/empty").status().code(), StatusCode::kNotFound);
}

TEST_F(MergeTest, TaskManifestsOfAnOlderVersionAreNamed) {
  const std::string dir = base_ + "/out";
  RunTask(dir, 2, 0);
  RunTask(dir, 2, 1);
  for (uint32_t i = 0; i < 2; ++i) fs::rename(TaskManifestPath(dir, i, 2), dir + "/" + TaskManifestName(i, 2));
  StatusOr<MergeResult> r = MergeTasks(dir);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), dir + "/" + TaskManifestName(0, 2) +
                                      ": a task manifest of an older libshard (they now live in " + dir +
                                      "/.libshard/); re-run the tasks with this version");
}

TEST_F(MergeTest, MissingTaskIsNamedAndNothingIsWritten) {
  const std::string dir = base_ + "/out";
  RunTask(dir, 3, 0);
  RunTask(dir, 3, 2);
  StatusOr<MergeResult> r = MergeTasks(dir);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->problems.empty());
  EXPECT_TRUE(Contains(r->problems[0], "task 1 of 3")) << r->problems[0];
  EXPECT_FALSE(fs::exists(dir + "/manifest.json"));
  EXPECT_FALSE(fs::exists(dir + "/rejects.tsv"));

  // Re-running the one failed task completes the set.
  RunTask(dir, 3, 1);
  r = MergeTasks(dir);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->problems.empty()) << r->problems[0];
  ASSERT_TRUE(Convert(Options(base_ + "/single")).ok());
  EXPECT_EQ(testing::CountDifferences(Outputs(base_ + "/single"), Outputs(dir)), 0);
}

TEST_F(MergeTest, MissingAndDamagedShardsAreNamed) {
  const std::string dir = base_ + "/out";
  for (uint32_t i = 0; i < 2; ++i) RunTask(dir, 2, i);
  StatusOr<Manifest> m0 = manifest::ReadManifest(TaskManifestPath(dir, 0, 2));
  StatusOr<Manifest> m1 = manifest::ReadManifest(TaskManifestPath(dir, 1, 2));
  ASSERT_TRUE(m0.ok() && m1.ok());
  const std::string gone = m0->splits(0).shards(0).file();
  const std::string hurt = m1->splits(0).shards(0).file();
  fs::remove(dir + "/" + gone);
  fs::resize_file(dir + "/" + hurt, fs::file_size(dir + "/" + hurt) - 1);

  StatusOr<MergeResult> r = MergeTasks(dir);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->problems.size(), 2u);
  EXPECT_TRUE(Contains(r->problems[0], "task 0") && Contains(r->problems[0], gone) &&
              Contains(r->problems[0], "missing"))
      << r->problems[0];
  EXPECT_TRUE(Contains(r->problems[1], "task 1") && Contains(r->problems[1], hurt) &&
              Contains(r->problems[1], "damaged"))
      << r->problems[1];
  EXPECT_FALSE(fs::exists(dir + "/manifest.json"));

  // Re-running both tasks (resume) redoes exactly those shards.
  RunTask(dir, 2, 0);
  RunTask(dir, 2, 1);
  r = MergeTasks(dir);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->problems.empty()) << r->problems[0];
}

// A shard's companions (its index and labels sidecar) are checked for too:
// each missing one is a problem naming it, and the task's rerun restores it.
TEST_F(MergeTest, AMissingIndexOrLabelsFileIsNamed) {
  const std::string dir = base_ + "/out";
  for (uint32_t i = 0; i < 2; ++i) RunTask(dir, 2, i);
  StatusOr<Manifest> m0 = manifest::ReadManifest(TaskManifestPath(dir, 0, 2));
  ASSERT_TRUE(m0.ok());
  const ShardEntry& e = m0->splits(0).shards(0);
  ASSERT_EQ(e.labels_file(), e.file() + ".labels");
  fs::remove(dir + "/" + e.index_file());
  fs::remove(dir + "/" + e.labels_file());
  StatusOr<MergeResult> r = MergeTasks(dir);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->problems.size(), 2u);
  EXPECT_EQ(r->problems[0], "task 0: index " + e.index_file() + " is missing");
  EXPECT_EQ(r->problems[1], "task 0: labels " + e.labels_file() + " is missing");
  EXPECT_FALSE(fs::exists(dir + "/manifest.json"));
  RunTask(dir, 2, 0);
  r = MergeTasks(dir);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->problems.empty()) << r->problems[0];
  EXPECT_TRUE(fs::exists(dir + "/" + e.labels_file()));
}

// Issue 23 item 4: a damaged shard of the right size is named by the merge,
// and re-running its task (the merge's advice) redoes it instead of keeping
// it, so the advice does not loop.
TEST_F(MergeTest, ADamagedShardOfTheRightSizeIsRedoneByItsTask) {
  const std::string dir = base_ + "/out";
  for (uint32_t i = 0; i < 2; ++i) RunTask(dir, 2, i);
  StatusOr<Manifest> m1 = manifest::ReadManifest(TaskManifestPath(dir, 1, 2));
  ASSERT_TRUE(m1.ok());
  const std::string hurt = m1->splits(0).shards(0).file();
  const std::string good = ReadFileOrDie(dir + "/" + hurt);
  std::string bad = good;
  bad[bad.size() / 2] ^= 0x20;
  testing::WriteFileOrDie(dir + "/" + hurt, bad);

  StatusOr<MergeResult> r = MergeTasks(dir);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->problems.size(), 1u);
  EXPECT_TRUE(Contains(r->problems[0], hurt) && Contains(r->problems[0], "damaged")) << r->problems[0];

  ConvertOptions o = Options(dir);
  o.num_tasks = 2;
  o.task_index = 1;
  StatusOr<ConvertResult> again = Convert(o);
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ(again->redone_damaged.size(), 1u);
  EXPECT_TRUE(Contains(again->redone_damaged[0], hurt)) << again->redone_damaged[0];
  EXPECT_EQ(again->shards_written, 1u);
  EXPECT_EQ(ReadFileOrDie(dir + "/" + hurt), good);
  r = MergeTasks(dir);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->problems.empty()) << r->problems[0];
}

TEST_F(MergeTest, NoTaskManifestsIsNotFound) {
  fs::create_directories(base_ + "/empty");
  EXPECT_EQ(MergeTasks(base_ + "/empty").status().code(), StatusCode::kNotFound);
}

TEST_F(MergeTest, TaskManifestsOfDifferentSplitsAreRefused) {
  const std::string dir = base_ + "/out";
  RunTask(dir, 2, 0);
  RunTask(dir, 2, 1);
  RunTask(dir, 3, 0);  // a stale run with another task count
  StatusOr<MergeResult> r = MergeTasks(dir);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->problems.empty());
  EXPECT_TRUE(Contains(r->problems[0], "different task counts")) << r->problems[0];
}

TEST_F(MergeTest, TasksWithDifferentOptionsAreRefused) {
  const std::string dir = base_ + "/out";
  RunTask(dir, 2, 0);
  ConvertOptions o = Options(dir);
  o.num_tasks = 2;
  o.task_index = 1;
  o.encode.jpeg.quality = 50;
  ASSERT_TRUE(Convert(o).ok());
  StatusOr<MergeResult> r = MergeTasks(dir);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->problems.empty());
  EXPECT_TRUE(Contains(r->problems[0], "different options")) << r->problems[0];
  // Issue 23 item 12: the option and both values are named.
  EXPECT_EQ(r->problems[0], "task 1: converted with different options than task 0 (quality 50 vs 90)");
}

// Issue 32: a repeated option (the CSV features) is named with both values
// (it was left out: "different options ()").
TEST_F(MergeTest, TasksWithDifferentFeaturesNameThem) {
  const std::string dir = base_ + "/out";
  RunTask(dir, 2, 0);
  RunTask(dir, 2, 1);
  const std::string task1 = TaskManifestPath(dir, 1, 2);
  StatusOr<Manifest> m = manifest::ReadManifest(task1);
  ASSERT_TRUE(m.ok()) << m.status();
  m->mutable_options()->add_features("tags:int_list");
  m->mutable_options()->add_features("score:float");
  testing::WriteFileOrDie(task1, manifest::ToJson(*m));
  StatusOr<MergeResult> r = MergeTasks(dir);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->problems.empty());
  EXPECT_EQ(r->problems[0],
            "task 1: converted with different options than task 0 (features [\"tags:int_list\", \"score:float\"] "
            "vs [])");
}

// Issue 12 item 11: task 0 runs, one image is added to the input, task 1
// runs; both plans have the same shard counts, so before the plan
// fingerprint the merge wrote a manifest with duplicated and missing samples.
TEST_F(MergeTest, TasksThatPlannedDifferentInputsAreRefused) {
  const std::string dir = base_ + "/out";
  auto run = [&](uint32_t task, uint64_t records_per_shard) {
    ConvertOptions o = Options(dir);
    o.num_tasks = 2;
    o.task_index = task;
    o.plan.records_per_shard = records_per_shard;
    StatusOr<ConvertResult> r = Convert(o);
    ASSERT_TRUE(r.ok()) << r.status();
  };
  run(0, 4);
  WriteTreeFile(base_ + "/in", "train/a/added.png", PngBytes(11, 9, 3, 99));  // train: 18 -> 19 inputs
  run(1, 4);
  StatusOr<Manifest> m0 = manifest::ReadManifest(TaskManifestPath(dir, 0, 2));
  StatusOr<Manifest> m1 = manifest::ReadManifest(TaskManifestPath(dir, 1, 2));
  ASSERT_TRUE(m0.ok() && m1.ok());
  ASSERT_EQ(m0->splits_size(), m1->splits_size());
  for (int i = 0; i < m0->splits_size(); ++i) {
    ASSERT_EQ(m0->splits(i).shard_count(), m1->splits(i).shard_count());  // the same shard names
  }
  ASSERT_EQ(m0->plan_id().size(), 64u);
  ASSERT_NE(m0->plan_id(), m1->plan_id());

  StatusOr<MergeResult> r = MergeTasks(dir);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->problems.size(), 1u);
  EXPECT_EQ(r->problems[0], "task 1: planned a different conversion than task 0 (plan " + m1->plan_id().substr(0, 12) +
                                " vs " + m0->plan_id().substr(0, 12) +
                                "): the input changed between the task runs; re-run every task");
  EXPECT_FALSE(fs::exists(dir + "/manifest.json"));
  EXPECT_FALSE(fs::exists(dir + "/rejects.tsv"));

  // The same with another --records-per-shard for task 1 (the issue's
  // exact run) is refused too, by its options.
  run(1, 3);
  r = MergeTasks(dir);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->problems.empty());
  EXPECT_TRUE(Contains(r->problems[0], "task 1")) << r->problems[0];
  EXPECT_FALSE(fs::exists(dir + "/manifest.json"));

  // Re-running every task on the new input merges, and the plan is the
  // single run's.
  run(0, 4);
  run(1, 4);
  r = MergeTasks(dir);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->problems.empty()) << r->problems[0];
  ConvertOptions one = Options(base_ + "/single");
  one.plan.records_per_shard = 4;
  StatusOr<ConvertResult> single = Convert(one);
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(r->manifest.plan_id(), single->manifest.plan_id());
  EXPECT_TRUE(testing::ReadBackFolder(dir).duplicates().empty());  // the rps-3 shards are gone
}

}  // namespace
}  // namespace libshard::convert

namespace libshard::convert {
namespace {

// Colour masks: the class list and the mask pixel histogram are in the
// manifest; 3 tasks + merge give the same manifest as one run, and the
// histogram equals a direct count of the masks in the shards.
TEST(MergeMaskStatsTest, MaskClassesAndHistogramSurviveTheMerge) {
  const std::string base = MakeTempDir();
  testing::MakeColourMaskSet(base, 9, 7, 5);
  auto options = [&](const std::string& out) {
    ConvertOptions o;
    o.input = base + "/in";
    o.output = out;
    o.list.masks = base + "/masks";
    o.mask_labels_file = base + "/class_dict.csv";
    o.plan.records_per_shard = 2;
    o.sync = false;
    o.threads = 2;
    return o;
  };
  StatusOr<ConvertResult> single = Convert(options(base + "/single"));
  ASSERT_TRUE(single.ok()) << single.status();
  const Manifest& m = single->manifest;
  ASSERT_EQ(m.mask_classes_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(m.mask_classes(i).index(), i);
    EXPECT_EQ(m.mask_classes(i).name(), testing::kMaskClasses[i].name);
    EXPECT_EQ(m.mask_classes(i).r(), testing::kMaskClasses[i].r);
    EXPECT_EQ(m.mask_classes(i).g(), testing::kMaskClasses[i].g);
    EXPECT_EQ(m.mask_classes(i).b(), testing::kMaskClasses[i].b);
  }
  // Pixel (x, y) of mask k has class (x + 2y + k) % 3.
  std::map<int64_t, uint64_t> direct;
  for (int k = 0; k < 9; ++k) {
    for (int y = 0; y < 5; ++y) {
      for (int x = 0; x < 7; ++x) ++direct[(x + 2 * y + k) % 3];
    }
  }
  std::map<int64_t, uint64_t> stated;
  for (const LabelCount& l : m.stats().mask_pixels()) stated[l.label()] = l.count();
  EXPECT_EQ(stated, direct);
  EXPECT_EQ(testing::CountOutputMaskPixels(base + "/single"), direct);

  const std::string tasks = base + "/tasks";
  for (uint32_t i = 0; i < 3; ++i) {
    ConvertOptions o = options(tasks);
    o.num_tasks = 3;
    o.task_index = i;
    StatusOr<ConvertResult> r = Convert(o);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  StatusOr<MergeResult> merged = MergeTasks(tasks);
  ASSERT_TRUE(merged.ok()) << merged.status();
  ASSERT_TRUE(merged->problems.empty()) << merged->problems[0];
  Manifest a = single->manifest, b = merged->manifest;
  a.clear_run();
  b.clear_run();
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());
  EXPECT_EQ(b.stats().mask_pixels_size(), 3);
}

// The reader reads only what a complete manifest lists (issue 21): task
// outputs are refused until merged, a partial manifest is refused, and a
// killed run (no manifest.json) too; the merged folder reads every sample
// once, with the stored shape its options imply.
TEST_F(MergeTest, TheReaderRefusesTaskOutputsUntilTheyAreMerged) {
  const std::string dir = base_ + "/tasks";
  RunTask(dir, 3, 0);
  reader::DatasetOptions all;
  all.split = "*";
  auto folder = reader::Dataset::Open({dir}, all);
  ASSERT_EQ(folder.status().code(), StatusCode::kInvalidArgument) << folder.status();
  EXPECT_EQ(folder.status().message(),
            dir +
                ": task outputs of `shard convert --num-tasks` not merged yet (no manifest.json, partial manifests "
                "in .libshard/); run `shard merge " +
                dir + "` first");
  auto glob = reader::Dataset::Open({dir + "/*.tfrecord"});
  ASSERT_EQ(glob.status().code(), StatusCode::kInvalidArgument) << glob.status();
  EXPECT_NE(glob.status().message().find("shards of this set are here"), std::string::npos) << glob.status();
  EXPECT_NE(glob.status().message().find("run `shard verify " + dir + "/*.tfrecord`"), std::string::npos);
  auto partial = reader::Dataset::Open({TaskManifestPath(dir, 0, 3)}, all);
  ASSERT_EQ(partial.status().code(), StatusCode::kInvalidArgument) << partial.status();
  EXPECT_NE(partial.status().message().find("not complete"), std::string::npos) << partial.status();

  RunTask(dir, 3, 1);
  RunTask(dir, 3, 2);
  StatusOr<MergeResult> merged = MergeTasks(dir);
  ASSERT_TRUE(merged.ok()) << merged.status();
  auto ds = reader::Dataset::Open({dir}, all);
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ((*ds)->size(), 23u);  // every image once (readme.txt rejected)
  // Kept at their varied source sizes: no one stored size.
  EXPECT_EQ((*ds)->stored_shape().width, 0);
  EXPECT_EQ((*ds)->stored_shape().channels, 3);

  // A single run killed before its manifest.
  const std::string killed = base_ + "/killed";
  ConvertOptions o = Options(killed);
  o.encode.transform.mode = image::ResizeMode::kStretch;
  o.encode.transform.width = 16;
  o.encode.transform.height = 12;
  ASSERT_TRUE(Convert(o).ok());
  auto sized = reader::Dataset::Open({killed}, all);
  ASSERT_TRUE(sized.ok()) << sized.status();
  EXPECT_EQ((*sized)->stored_shape().width, 16);
  EXPECT_EQ((*sized)->stored_shape().height, 12);
  EXPECT_EQ((*sized)->stored_shape().sizes, "16x12");
  fs::remove(killed + "/manifest.json");
  auto k = reader::Dataset::Open({killed});
  ASSERT_EQ(k.status().code(), StatusCode::kInvalidArgument) << k.status();
  EXPECT_NE(k.status().message().find("a `shard convert` that did not finish"), std::string::npos) << k.status();
}

}  // namespace
}  // namespace libshard::convert
