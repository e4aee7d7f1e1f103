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
#include "testutil.h"

namespace libshard::convert {
namespace {

namespace fs = std::filesystem;
using testing::JpegBytes;
using testing::MakeTempDir;
using testing::PngBytes;
using testing::ReadFileOrDie;
using testing::WriteTreeFile;

using testing::Contains;

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = MakeTempDir();
    for (int k = 0; k < 23; ++k) {
      const std::string cls = k % 3 == 0 ? "a" : k % 3 == 1 ? "b" : "c";
      const std::string split = k % 4 == 0 ? "val" : "train";
      const std::string rel = split + "/" + cls + "/img" + std::to_string(k);
      if (k % 2) {
        WriteTreeFile(base_ + "/in", rel + ".png", PngBytes(10 + k, 8 + k % 5, 3, k));
      } else {
        WriteTreeFile(base_ + "/in", rel + ".jpg", JpegBytes(12 + k % 7, 9 + k, 3, k));
      }
    }
    WriteTreeFile(base_ + "/in", "train/b/readme.txt", "not an image\n");  // rejected
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
      if (k[0] == '.' || Contains(k, "manifest.task-")) continue;
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
  ASSERT_TRUE(Contains(want.at("rejects.tsv"), "readme.txt"));
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
  }
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
  StatusOr<Manifest> m0 = ReadManifest(dir + "/" + TaskManifestName(0, 2));
  StatusOr<Manifest> m1 = ReadManifest(dir + "/" + TaskManifestName(1, 2));
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
}

}  // namespace
}  // namespace libshard::convert
