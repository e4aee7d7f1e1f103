// `shard convert` as one task of many (--num-tasks / --task-index, Slurm
// array and Kubernetes Indexed Job variables): each task writes its shards,
// byte-identical to a whole run's, and its own manifest, which `shard merge`
// joins; the task variables are named in every message, and Slurm arrays
// with an offset or a step map onto tasks 0..COUNT-1.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "convert/fixtures.h"
#include "convert_cli_fixtures.h"
#include "libshard/convert/manifest_io.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::MakeSmallTree;
using testing::MakeTempDir;
using testing::ReadFileOrDie;
using testing::RunShard;
using Result = testing::CommandResult;

TEST(ConvertTasksCliTest, TaskRunWritesItsOwnManifest) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  Result whole = RunShard("convert -q " + dir + "/in -o " + dir + "/whole --records-per-shard 1");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  for (int t = 0; t < 3; ++t) {
    Result r = RunShard("convert -q " + dir + "/in -o " + dir +
                        "/tasks --records-per-shard 1 --num-tasks 3 --task-index " + std::to_string(t));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir + "/tasks/.libshard/" + convert::TaskManifestName(t, 3)));
  }
  EXPECT_FALSE(fs::exists(dir + "/tasks/manifest.json"));
  for (int i = 0; i < 4; ++i) {
    const std::string f = "/in-train-0000" + std::to_string(i) + "-of-00004.tfrecord";
    EXPECT_EQ(ReadFileOrDie(dir + "/tasks" + f), ReadFileOrDie(dir + "/whole" + f)) << f;
  }
  // Merged, the folder verifies clean: no task manifest is taken for a shard.
  Result merge = RunShard("merge -q " + dir + "/tasks");
  ASSERT_EQ(merge.exit_code, 0) << merge.err;
  Result verify = RunShard("verify " + dir + "/tasks");
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  Result bad = RunShard("convert -q " + dir + "/in -o " + dir + "/bad --num-tasks 2 --task-index 2");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(Contains(bad.err, "task index 2")) << bad.err;
}

// Issue 23 item 10: task variables are named in every message, and Slurm
// arrays with an offset or a step map onto tasks 0..COUNT-1.
TEST(ConvertTasksCliTest, TaskVariablesAreNamedAndSlurmStepsMap) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  const std::string no_env =
      "env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_COUNT -u SLURM_ARRAY_TASK_MIN "
      "-u SLURM_ARRAY_TASK_STEP -u JOB_COMPLETION_INDEX ";
  auto run = [&](const std::string& vars, const std::string& flags) {
    return testing::RunCommand(no_env + vars + " " + SHARD_BIN + " convert --dry-run " + dir + "/in -o " + dir +
                               "/out --records-per-shard 1 " + flags);
  };
  Result r = run("JOB_COMPLETION_INDEX=1", "");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "shard convert: JOB_COMPLETION_INDEX=1 gives this task's index but not the number of tasks: add "
            "--num-tasks N (an Indexed Job's completions)\n");
  r = run("JOB_COMPLETION_INDEX=5", "--num-tasks 4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "shard convert: task index 5 from JOB_COMPLETION_INDEX=5 is out of range for --num-tasks 4 (0..3)\n");
  r = run("JOB_COMPLETION_INDEX=2", "--num-tasks 4");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "shard convert: task 2 of 4 (0-based), from JOB_COMPLETION_INDEX=2\n")) << r.err;
  // --array=0-9:2 (tasks 0, 2, 4, 6, 8) and --array=10-19.
  r = run("SLURM_ARRAY_TASK_ID=6 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_STEP=2 SLURM_ARRAY_TASK_COUNT=5", "");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err,
                       "shard convert: task 3 of 5 (0-based), from SLURM_ARRAY_TASK_ID=6, SLURM_ARRAY_TASK_MIN=0, "
                       "SLURM_ARRAY_TASK_STEP=2, SLURM_ARRAY_TASK_COUNT=5\n"))
      << r.err;
  r = run("SLURM_ARRAY_TASK_ID=12 SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_STEP=1 SLURM_ARRAY_TASK_COUNT=10", "");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "task 2 of 10 (0-based), from SLURM_ARRAY_TASK_ID=12")) << r.err;
  // Out of range or off the step: named, not "--task-index".
  r = run("SLURM_ARRAY_TASK_ID=7 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_STEP=2 SLURM_ARRAY_TASK_COUNT=5", "");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "shard convert: SLURM_ARRAY_TASK_ID=7, SLURM_ARRAY_TASK_MIN=0, SLURM_ARRAY_TASK_STEP=2, "
            "SLURM_ARRAY_TASK_COUNT=5: not one of the array's 5 tasks (MIN + k * STEP, k in 0..4); an array "
            "given as a list (--array=1,5,9) has no step: give --num-tasks N and --task-index I\n");
  r = run("SLURM_ARRAY_TASK_ID=9 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=4", "");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "SLURM_ARRAY_TASK_ID=9, SLURM_ARRAY_TASK_MIN=0, SLURM_ARRAY_TASK_COUNT=4: not one of"))
      << r.err;
  EXPECT_FALSE(Contains(r.err, "--task-index:")) << r.err;
  r = run("SLURM_ARRAY_TASK_ID=x1 SLURM_ARRAY_TASK_COUNT=4", "");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "shard convert: SLURM_ARRAY_TASK_ID='x1' is not a task number\n");
  // Explicit flags win over a broken environment.
  r = run("SLURM_ARRAY_TASK_ID=x1", "--num-tasks 2 --task-index 1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace libshard
