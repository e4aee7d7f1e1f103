// Interrupted and repeated `shard convert` runs: kill -9 at any moment,
// SIGINT (exit 130) and a full disk (ulimit -f, at a shard and at each
// metadata file) leave only complete shards and no temporaries, and the same
// command then resumes to bytes identical to an uninterrupted run; a rerun
// redoes a damaged shard and removes an earlier plan's shards, saying so; and
// `shard verify` of a killed run's folder (no manifest.json) names the
// missing shards.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "convert/fixtures.h"
#include "convert_cli_fixtures.h"
#include "libshard/util/strings.h"
#include "testutil.h"

extern char** environ;

namespace libshard {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::CountDifferences;
using testing::ExpectFinalShardsComplete;
using testing::ExpectNoTemporaries;
using testing::ListFilesRecursive;
using testing::MakeManyImages;
using testing::MakeSmallTree;
using testing::MakeTempDir;
using testing::PngBytes;
using testing::ReadFileOrDie;
using testing::RunShard;
using testing::WriteFileOrDie;
using testing::WriteTreeFile;
using Result = testing::CommandResult;
using util::EndsWith;

std::map<std::string, std::string> Snapshot(const std::string& dir) { return testing::SnapshotDir(dir); }

// Issue 23 item 4: resume re-checks a kept shard's CRC-32C: a damaged
// shard of the right size is redone (and said), not kept on every rerun.
TEST(ConvertResumeCliTest, ResumeRedoesADamagedShardOfTheRightSize) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  const std::string out = dir + "/out";
  Result first = RunShard("convert -q " + dir + "/in -o " + out + " --records-per-shard 2");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string shard = out + "/in-train-00001-of-00002.tfrecord";
  const std::string good = ReadFileOrDie(shard);
  std::string bad = good;
  bad[bad.size() - 10] ^= 1;
  WriteFileOrDie(shard, bad);
  Result r = RunShard("convert " + dir + "/in -o " + out + " --records-per-shard 2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "shard convert: shard in-train-00001-of-00002.tfrecord (crc32c:")) << r.err;
  EXPECT_TRUE(Contains(r.err, "of an earlier run did not match its checksum: redone")) << r.err;
  EXPECT_TRUE(Contains(r.err, "2 kept from an earlier run in 1 shard(s)")) << r.err;
  EXPECT_EQ(ReadFileOrDie(shard), good);
  ExpectFinalShardsComplete(out);
}

// Issue 16 item 2, from the command line: a killed conversion's folder (no
// manifest.json, 6 of 20 shards) fails `shard verify`, which says that it
// had no manifest, in text and JSON.
TEST(ConvertResumeCliTest, VerifyWithoutManifestChecksNumberedSets) {
  const std::string dir = MakeTempDir();
  MakeManyImages(dir + "/in", 20, 8);
  const std::string out = dir + "/out";
  ASSERT_EQ(RunShard("convert -q " + dir + "/in -o " + out + " --records-per-shard 1").exit_code, 0);
  Result whole = RunShard("verify " + out);
  EXPECT_EQ(whole.exit_code, 0) << whole.out;
  fs::remove(out + "/manifest.json");
  for (int i = 6; i < 20; ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "/in-train-%05d-of-00020.tfrecord", i);
    fs::remove(out + name);
  }
  Result r = RunShard("verify " + out);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "shard verify: " + out +
                                  "/in-train-*-of-00020.tfrecord: set_incomplete: 6 of the 20 shards of this set are "
                                  "here; 14 missing (00006, "))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "shard verify: 6 files (0 with faults), 6 records,")) << r.out;
  EXPECT_TRUE(Contains(r.out, " 1 fault, ")) << r.out;
  EXPECT_TRUE(Contains(r.out,
                       "shard verify: no manifest.json given or found: sets checked by their -NNNNN-of-MMMMM "
                       "names only\n"))
      << r.out;
  // A shard named on its own is not held to its siblings.
  Result one = RunShard("verify " + out + "/in-train-00000-of-00020.tfrecord");
  EXPECT_EQ(one.exit_code, 0) << one.out;
  Result j = RunShard("verify --json " + out);
  EXPECT_EQ(j.exit_code, 1);
  EXPECT_TRUE(Contains(j.out, "\"no_manifest\":true")) << j.out;
  EXPECT_TRUE(Contains(j.out, "\"kind\":\"set_incomplete\"")) << j.out;
}

// Issue 12 item 12 from the command line: the re-plan says what it removed.
TEST(ConvertResumeCliTest, RePlanSaysWhichShardsItRemoved) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  const std::string out = dir + "/out";
  ASSERT_EQ(RunShard("convert -q " + dir + "/in -o " + out + " --records-per-shard 1").exit_code, 0);
  Result r = RunShard("convert " + dir + "/in -o " + out + " --records-per-shard 2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "shard convert: removed 4 shard(s) of an earlier plan from " + out +
                                  " (another shard count or split), with their index and entry: "
                                  "in-train-00000-of-00004.tfrecord, in-train-00001-of-00004.tfrecord, "
                                  "in-train-00002-of-00004.tfrecord, in-train-00003-of-00004.tfrecord\n"))
      << r.err;
  EXPECT_FALSE(fs::exists(out + "/in-train-00000-of-00004.tfrecord"));
  EXPECT_FALSE(fs::exists(out + "/in-train-00000-of-00004.tfrecord.idx"));
  EXPECT_FALSE(fs::exists(out + "/.libshard/in-train-00000-of-00004.tfrecord.json"));
  Result v = RunShard("verify " + out);
  EXPECT_EQ(v.exit_code, 0) << v.out;
}

// Starts `shard ARGS` without a shell, so that the pid is the converter's
// own, with stderr going to `err`.
pid_t Spawn(const std::vector<std::string>& args, const std::string& err = "/dev/null") {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(SHARD_BIN));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, SHARD_BIN, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0);
  return rc == 0 ? pid : -1;
}

TEST(ConvertResumeCliTest, KillNineAndResumeGivesTheSameBytes) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  MakeManyImages(in, 160, 12);
  auto args = [&](const std::string& out) {
    return std::vector<std::string>{"convert", "-q",        in,  "-o",     out, "--records-per-shard",
                                    "4",       "--threads", "2", "--size", "10"};
  };
  const std::string ref_dir = dir + "/ref";
  std::string cmd = "convert -q " + in + " -o " + ref_dir + " --records-per-shard 4 --threads 2 --size 10";
  ASSERT_EQ(RunShard(cmd).exit_code, 0);
  const std::map<std::string, std::string> ref = Snapshot(ref_dir);
  ASSERT_EQ(ref.count("manifest.json"), 1u);

  // Delays 0..300 ms from a fixed LCG: the run is killed at different points.
  constexpr int kRounds = 6;
  uint32_t state = 12345;
  int interrupted = 0;
  for (int round = 0; round < kRounds; ++round) {
    state = state * 1103515245u + 12345u;
    const int delay_ms = round == 0 ? 0 : static_cast<int>((state >> 8) % 301);
    const std::string out = dir + "/out";
    fs::remove_all(out);
    pid_t pid = Spawn(args(out));
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    const bool killed = WIFSIGNALED(status);
    interrupted += killed;
    if (killed && fs::exists(out)) {
      // What a killed run leaves: complete shards under final names only.
      EXPECT_FALSE(fs::exists(out + "/manifest.json") && !fs::exists(out + "/rejects.tsv"));
      ExpectFinalShardsComplete(out, /*with_cli=*/false);
    }
    Result resumed = RunShard("convert -q " + in + " -o " + out + " --records-per-shard 4 --threads 2 --size 10");
    ASSERT_EQ(resumed.exit_code, 0) << "round " << round << " (" << delay_ms << " ms): " << resumed.err;
    EXPECT_EQ(CountDifferences(ref, Snapshot(out)), 0) << "round " << round << " killed after " << delay_ms << " ms";
    ExpectNoTemporaries(out);
  }
  ::testing::Test::RecordProperty("interrupted_runs", interrupted);
  std::printf("kill-and-resume: %d of %d runs were killed before they finished\n", interrupted, kRounds);
}

TEST(ConvertResumeCliTest, SigintSaysHowToResumeAndExits130) {
  const std::string dir = MakeTempDir();
  MakeManyImages(dir + "/in", 1500, 24);
  const std::string out = dir + "/out", err = dir + "/err.txt";
  const std::vector<std::string> args = {
      "convert", dir + "/in",           "-o",   out, "--threads", "1", "--format", "png", "--records-per-shard",
      "50",      "--progress-interval", "0.001"};
  pid_t pid = Spawn(args, err);
  ASSERT_GT(pid, 0);
  // Signal once converting has begun (the first progress line).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!Contains(testing::ReadFileOrDie(err), "progress") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  const std::string text = ReadFileOrDie(err);
  ASSERT_TRUE(WIFEXITED(status)) << text;
  ASSERT_EQ(WEXITSTATUS(status), 130) << "the run finished before the signal?\n" << text;
  EXPECT_TRUE(EndsWith(text, "\nshard convert: interrupted; rerun the same command to resume\n")) << text;
  // And the rerun does resume to a complete, verified output.
  Result r = RunShard("convert -q " + dir + "/in -o " + out + " --threads 2 --format png --records-per-shard 50");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(RunShard("verify -q " + out).exit_code, 0);
}

TEST(ConvertResumeCliTest, DiskFullFailsNamingTheFileAndLeavesNoIncompleteShard) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  MakeManyImages(in, 120, 24);
  const std::string flags = " --records-per-shard 6 --format png --threads 2";
  const std::string ref_dir = dir + "/ref";
  ASSERT_EQ(RunShard("convert -q " + in + " -o " + ref_dir + flags).exit_code, 0);
  uint64_t total = 0;
  for (const std::string& f : ListFilesRecursive(ref_dir)) total += fs::file_size(ref_dir + "/" + f);
  // A file size limit well under one shard's size... and under the total.
  const uint64_t shard_bytes = fs::file_size(ref_dir + "/in-train-00000-of-00020.tfrecord");
  ASSERT_GT(total, 8 * shard_bytes);
  const uint64_t limit_kib = std::max<uint64_t>(1, shard_bytes / 2 / 1024);
  const std::string out = dir + "/out";
  Result r = testing::RunCommand("bash -c 'ulimit -f " + std::to_string(limit_kib) + "; trap \"\" XFSZ; exec " +
                                 SHARD_BIN + " convert -q " + in + " -o " + out + flags + "'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Contains(r.err, out + "/")) << r.err;
  EXPECT_TRUE(Contains(r.err, "File too large") || Contains(r.err, "EFBIG") || Contains(r.err, "too large")) << r.err;
  EXPECT_FALSE(fs::exists(out + "/manifest.json"));
  ExpectNoTemporaries(out);
  ExpectFinalShardsComplete(out);
  // Space again: the run completes and matches an uninterrupted one.
  Result again = RunShard("convert -q " + in + " -o " + out + flags);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(CountDifferences(Snapshot(ref_dir), Snapshot(out)), 0);
}

// Issue 12 item 21: a full disk while writing a shard's entry, rejects.tsv
// or manifest.json left its `.tmp` behind. Tiny shards (one 4x4 PNG each,
// about 420 bytes) and a per-file size limit put the failure on each of
// those files in turn.
TEST(ConvertResumeCliTest, DiskFullAtEachMetadataFileLeavesNoTemporaries) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  for (int i = 0; i < 8; ++i)
    WriteTreeFile(in, std::string(i % 2 ? "a" : "b") + "/" + std::to_string(i) + ".png", PngBytes(4, 4, 3, i));
  const std::string flags = " --records-per-shard 1 --format png --threads 2";
  struct Case {
    const char* what;  // the file the limit stops
    int limit_kib;
    int strays;  // files outside any class folder: listing rejects, only in rejects.tsv and manifest.json
  };
  // A shard's entry (one image's fingerprints, about 0.8 KiB: 1.9 KiB in all) fits under 3 KiB,
  // and 60 strays' reject lines do not.
  for (const Case& c : {Case{".libshard/in-train-00000-of-00008.tfrecord.json", 1, 0}, Case{"rejects.tsv", 3, 60},
                        Case{"manifest.json", 4, 0}}) {
    SCOPED_TRACE(c.what);
    for (int i = 0; i < c.strays; ++i) {
      WriteTreeFile(in, "stray_file_outside_any_class_folder_with_a_long_name_" + std::to_string(1000 + i) + ".png",
                    "x");
    }
    const std::string out = dir + "/out" + std::to_string(c.limit_kib);
    Result r = testing::RunCommand("bash -c 'ulimit -f " + std::to_string(c.limit_kib) + "; trap \"\" XFSZ; exec " +
                                   SHARD_BIN + " convert -q " + in + " -o " + out + flags + "'");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(Contains(r.err, out + "/" + c.what + ".tmp")) << r.err;
    EXPECT_FALSE(fs::exists(out + "/manifest.json"));
    ExpectNoTemporaries(out);
    ExpectFinalShardsComplete(out, /*with_cli=*/false);
    for (int i = 0; i < c.strays; ++i) {
      fs::remove(in + "/stray_file_outside_any_class_folder_with_a_long_name_" + std::to_string(1000 + i) + ".png");
    }
  }
}

}  // namespace
}  // namespace libshard
