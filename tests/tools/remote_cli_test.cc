// `shard verify` and `shard inspect` on s3:// locations (s3rver, objects put
// by the store), as a user runs them.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "convert/fixtures.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/remote/uploader.h"
#include "libshard/store/s3_store.h"
#include "libshard/util/strings.h"
#include "servers/servers.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;

class StoreCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir();
    std::string why;
    s3_ = testing::LocalS3::Start(dir_ + "/s3", {"bkt"}, &why);
    LIBSHARD_REQUIRE_SERVER(s3_, why);
    for (int i = 0; i < 12; ++i) {
      fs::create_directories(dir_ + "/in/" + std::string(i % 2 ? "a" : "b"));
      testing::WriteFileOrDie(dir_ + "/in/" + std::string(i % 2 ? "a" : "b") + "/" + std::to_string(i) + ".png",
                              testing::PngBytes(24, 20, 3, i));
    }
    testing::CommandResult r = testing::RunShard("convert -q " + dir_ + "/in -o " + dir_ + "/ds --shard-size 2KiB");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    store::StoreConfig c = s3_->Config();
    store_ = store::NewS3Store(c, "bkt", store::NewCurlTransport(c));
    for (const auto& e : fs::directory_iterator(dir_ + "/ds")) {
      if (!e.is_regular_file()) continue;
      const std::string name = e.path().filename().string();
      if (name.find(".tfrecord") != std::string::npos) shards_.push_back(name.substr(0, name.find(".tfrecord") + 9));
      ASSERT_TRUE(store_->PutFile("ds/" + name, e.path().string()).ok());
    }
    std::sort(shards_.begin(), shards_.end());
    shards_.erase(std::unique(shards_.begin(), shards_.end()), shards_.end());
    fs::create_directories(dir_ + "/tmp");
  }
  // The variables that point `shard` at `endpoint` (s3rver's, or a proxy's in front of it), with TMPDIR inside
  // the test's folder.
  std::string EnvFor(const std::string& endpoint) const {
    return "AWS_ENDPOINT_URL=" + endpoint + " AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER TMPDIR=" + dir_ +
           "/tmp ";
  }
  // Runs `shard ARGS` against s3rver, or against `endpoint` when given.
  testing::CommandResult Shard(const std::string& args, const std::string& endpoint = "") {
    return testing::RunCommand("env " + EnvFor(endpoint.empty() ? s3_->endpoint() : endpoint) + SHARD_BIN + " " + args);
  }

  std::string dir_;
  std::vector<std::string> shards_;
  std::unique_ptr<testing::LocalS3> s3_;
  std::unique_ptr<store::ObjectStore> store_;
};

TEST_F(StoreCliTest, VerifyCleanThenNamesADamagedAndAnUnlistedObject) {
  ASSERT_GE(shards_.size(), 2u);
  testing::CommandResult r = Shard("verify s3://bkt/ds");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0 faults (manifest s3://bkt/ds/manifest.json)"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));  // the staging folder is gone

  std::string bytes = testing::ReadFileOrDie(dir_ + "/ds/" + shards_[1]);
  bytes[bytes.size() / 2] ^= 0x01;
  ASSERT_TRUE(store_->Put("ds/" + shards_[1], bytes).ok());
  ASSERT_TRUE(store_->Put("ds/stray-00000-of-00001.tfrecord", testing::ReadFileOrDie(dir_ + "/ds/" + shards_[0])).ok());
  r = Shard("verify s3://bkt/ds/manifest.json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("shard verify: s3://bkt/ds/" + shards_[1] + ": at byte"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("manifest_checksum"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("s3://bkt/ds/stray-00000-of-00001.tfrecord: manifest_shard_unlisted"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find(dir_ + "/tmp"), std::string::npos) << r.out;  // no staging paths in the report
  r = Shard("verify --json s3://bkt/ds");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("\"path\":\"s3://bkt/ds/" + shards_[1] + "\""), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("S3RVER"), std::string::npos);
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

TEST_F(StoreCliTest, VerifyOneObjectAndUsageErrors) {
  testing::CommandResult r = Shard("verify s3://bkt/ds/" + shards_[0]);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("1 file (0 with faults)"), std::string::npos) << r.out;
  r = Shard("verify s3://bkt/nothing");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  r = Shard("verify s3://bkt/ds " + dir_ + "/ds");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  r = testing::RunCommand("env AWS_ENDPOINT_URL=" + s3_->endpoint() +
                          " AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=BAD " + SHARD_BIN + " verify s3://bkt/ds");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("HTTP 403 SignatureDoesNotMatch"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("BAD"), std::string::npos) << r.err;
}

std::map<std::string, std::string> Objects(store::ObjectStore& s, const std::string& prefix);

TEST(StoreCliUsageTest, MergeOfAnHttpsLocationIsAUsageError) {
  testing::CommandResult r = testing::RunShard("merge https://host/ds");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("https://host/ds: only local folders and s3:// prefixes can be merged"), std::string::npos)
      << r.err;
}

// --num-tasks runs into one s3:// prefix, then `shard merge s3://...`: the
// same objects as one local conversion, manifest.json included.
TEST_F(StoreCliTest, TaskRunsIntoS3ThenMergeThere) {
  for (int i = 0; i < 3; ++i) {
    testing::CommandResult r = Shard("convert -q " + dir_ +
                                     "/in -o s3://bkt/tasks --shard-size 2KiB --num-tasks 3 "
                                     "--task-index " +
                                     std::to_string(i) + " --staging " + dir_ + "/staging" + std::to_string(i));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_FALSE(store_->Head("tasks/manifest.json").ok());  // no task writes it
  // Merged in place: the task manifests are read (one LIST, one GET each),
  // each shard object is checked by HEAD, none is downloaded.
  std::string why;
  auto proxy = testing::FaultProxy::Start(s3_->port(), dir_, &why);
  ASSERT_TRUE(proxy) << why;
  testing::CommandResult m = Shard("merge s3://bkt/tasks", proxy->endpoint());
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.err.find("s3://bkt/tasks/manifest.json"), std::string::npos) << m.err;
  EXPECT_EQ(proxy->Count("GET"), 1 + 3) << "a LIST and the 3 task manifests";
  EXPECT_EQ(proxy->Count("HEAD"), static_cast<int>(shards_.size()));
  EXPECT_EQ(proxy->Count("PUT"), 3) << "rejects.tsv, duplicates.tsv, manifest.json";
  // The same as merging the same task outputs locally: rejects.tsv byte for
  // byte, manifest.json but for the run's time.
  for (int i = 0; i < 3; ++i) {
    testing::CommandResult r = testing::RunShard("convert -q " + dir_ + "/in -o " + dir_ +
                                                 "/tasks --shard-size "
                                                 "2KiB --num-tasks 3 --task-index " +
                                                 std::to_string(i));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  ASSERT_EQ(testing::RunShard("merge -q " + dir_ + "/tasks").exit_code, 0);
  std::map<std::string, std::string> objects = Objects(*store_, "tasks");
  for (const auto& [name, bytes] : testing::SnapshotDir(dir_ + "/tasks")) {
    if (name.rfind(".libshard/", 0) == 0 && name.find(".json") == std::string::npos) continue;  // the lock
    ASSERT_TRUE(objects.count(name)) << name;
    if (name == "manifest.json") {
      Manifest a, b;
      ASSERT_TRUE(manifest::FromJson(objects[name], &a).ok());
      ASSERT_TRUE(manifest::FromJson(bytes, &b).ok());
      a.clear_run();
      b.clear_run();
      EXPECT_EQ(manifest::ToJson(a), manifest::ToJson(b));
    } else if (name.rfind(".libshard/manifest.task-", 0) != 0) {  // (a task manifest records its run)
      EXPECT_TRUE(objects[name] == bytes) << name;
    }
  }
  for (const auto& [name, bytes] : testing::SnapshotDir(dir_ + "/ds")) {
    if (name.rfind(".libshard/", 0) == 0) continue;  // task runs keep other entries
    ASSERT_TRUE(objects.count(name)) << name;
    if (name == "manifest.json") {
      Manifest a, b;
      ASSERT_TRUE(manifest::FromJson(objects[name], &a).ok());
      ASSERT_TRUE(manifest::FromJson(bytes, &b).ok());
      EXPECT_EQ(a.splits_size(), b.splits_size());
      for (int s = 0; s < a.splits_size() && s < b.splits_size(); ++s) {
        ASSERT_EQ(a.splits(s).shards_size(), b.splits(s).shards_size());
        for (int k = 0; k < a.splits(s).shards_size(); ++k) {
          EXPECT_EQ(a.splits(s).shards(k).checksum(), b.splits(s).shards(k).checksum());
        }
      }
      continue;
    }
    EXPECT_TRUE(objects[name] == bytes) << name;
  }
  EXPECT_EQ(Shard("verify -q s3://bkt/tasks").exit_code, 0);
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

TEST_F(StoreCliTest, MergeInPlaceNamesADamagedShardAndWritesNothing) {
  for (int i = 0; i < 2; ++i) {
    testing::CommandResult r = Shard("convert -q " + dir_ +
                                     "/in -o s3://bkt/tasks --shard-size 2KiB --num-tasks 2 "
                                     "--task-index " +
                                     std::to_string(i) + " --staging " + dir_ + "/staging" + std::to_string(i));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // Another object under a shard's name, of the same size (no CRC-32C recorded: read once to check it).
  std::string bytes = testing::ReadFileOrDie(dir_ + "/ds/" + shards_[1]);
  bytes[bytes.size() / 2] ^= 0x01;
  ASSERT_TRUE(store_->Put("tasks/" + shards_[1], bytes).ok());
  std::string why;
  auto proxy = testing::FaultProxy::Start(s3_->port(), dir_, &why);
  ASSERT_TRUE(proxy) << why;
  testing::CommandResult m = Shard("merge s3://bkt/tasks", proxy->endpoint());
  EXPECT_EQ(m.exit_code, 1) << m.err;
  EXPECT_NE(m.err.find("shard " + shards_[1] + " is damaged or incomplete (its bytes differ, manifest says crc32c:"),
            std::string::npos)
      << m.err;
  // A LIST, the 2 task manifests, and the one object without a recorded CRC-32C, streamed through the check.
  EXPECT_EQ(proxy->Count("GET"), 1 + 2 + 1);
  EXPECT_EQ(proxy->Count("PUT"), 0);
  EXPECT_FALSE(store_->Head("tasks/manifest.json").ok());
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

// A conversion with detection boxes into s3:// puts label_map.pbtxt beside
// the manifest, as a local one writes it (issue 33).
TEST_F(StoreCliTest, BoxesLabelMapGoesUpBesideTheManifest) {
  const std::string boxes = testing::SourceDir() + "/samples/boxes";
  testing::CommandResult r = Shard("convert -q " + boxes + "/images --coco " + boxes +
                                   "/instances.json -o s3://bkt/boxes --format png --staging " + dir_ + "/staging");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  testing::CommandResult local = testing::RunShard("convert -q " + boxes + "/images --coco " + boxes +
                                                   "/instances.json -o " + dir_ + "/boxes --format png");
  ASSERT_EQ(local.exit_code, 0) << local.err;
  std::map<std::string, std::string> objects = Objects(*store_, "boxes");
  ASSERT_TRUE(objects.count("label_map.pbtxt"));
  EXPECT_EQ(objects["label_map.pbtxt"], testing::ReadFileOrDie(dir_ + "/boxes/label_map.pbtxt"));
}

TEST_F(StoreCliTest, InspectAnObject) {
  testing::CommandResult local = testing::RunShard("inspect --json " + dir_ + "/ds/" + shards_[0]);
  ASSERT_EQ(local.exit_code, 0) << local.err;
  testing::CommandResult r = Shard("inspect --json s3://bkt/ds/" + shards_[0]);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // The same report, naming the object instead of the file.
  std::string want = local.out;
  want.replace(want.find(dir_ + "/ds/"), dir_.size() + 4, "s3://bkt/ds/");
  EXPECT_EQ(r.out, want);
  r = Shard("inspect s3://bkt/ds/" + shards_[0]);
  EXPECT_EQ(r.out.rfind("s3://bkt/ds/" + shards_[0] + ": ", 0), 0u) << r.out;
  r = Shard("inspect s3://bkt/ds/none.tfrecord");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("s3://bkt/ds/none.tfrecord"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

TEST_F(StoreCliTest, ReportOfAnObjectStoreDataset) {
  // The page of s3://bkt/ds is the local folder's page, naming the objects instead of the files.
  testing::CommandResult local = testing::RunShard("report -q " + dir_ + "/ds -o " + dir_ + "/local.html --seed 4");
  ASSERT_EQ(local.exit_code, 0) << local.err;
  testing::CommandResult r = Shard("report -q s3://bkt/ds -o " + dir_ + "/remote.html --seed 4");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string want = testing::ReadFileOrDie(dir_ + "/local.html");
  for (size_t at; (at = want.find(dir_ + "/ds")) != std::string::npos;)
    want.replace(at, dir_.size() + 3, "s3://bkt/ds");
  EXPECT_EQ(testing::ReadFileOrDie(dir_ + "/remote.html"), want);
  r = Shard("report s3://bkt/ds");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("give -o FILE"), std::string::npos) << r.err;
  r = Shard("report s3://bkt/none -o " + dir_ + "/none.html");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("s3://bkt/none"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

// Every object under `prefix`, by name relative to it -> bytes.
std::map<std::string, std::string> Objects(store::ObjectStore& s, const std::string& prefix) {
  std::map<std::string, std::string> out;
  StatusOr<std::vector<store::ObjectInfo>> l = s.List(prefix + "/");
  EXPECT_TRUE(l.ok()) << l.status();
  for (const auto& o : *l) out[o.key.substr(prefix.size() + 1)] = *s.GetSmall(o.key, 1 << 30);
  return out;
}

TEST_F(StoreCliTest, ConvertToS3IsTheLocalConversionByteForByteAndResumes) {
  testing::CommandResult r =
      Shard("convert " + dir_ + "/in -o s3://bkt/conv --shard-size 2KiB --staging " + dir_ + "/staging");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // Issue 32: the summary and the last line name the uploaded manifest, not
  // the staging folder's copy.
  std::string last_line = r.err.substr(0, r.err.size() - 1);
  last_line = last_line.substr(last_line.rfind('\n') + 1);
  EXPECT_NE(last_line.find("to s3://bkt/conv (0 already there; staging folder " + dir_ + "/staging)"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(util::EndsWith(last_line, "manifest.json last -> s3://bkt/conv/manifest.json")) << r.err;
  EXPECT_NE(r.err.find(" converted in this run ("), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(dir_ + "/staging/manifest.json"), std::string::npos) << r.err;
  std::map<std::string, std::string> objects = Objects(*store_, "conv");
  std::map<std::string, std::string> local = testing::SnapshotDir(dir_ + "/ds");
  size_t compared = 0;
  for (const auto& [name, bytes] : local) {
    if (name.rfind(".libshard/", 0) == 0 && name.find(".json") == std::string::npos) continue;  // the lock
    ASSERT_TRUE(objects.count(name)) << name;
    ++compared;
    if (name == "manifest.json") {  // the same shards, labels and statistics; the run's times and paths differ
      Manifest a, b;
      ASSERT_TRUE(manifest::FromJson(objects[name], &a).ok());
      ASSERT_TRUE(manifest::FromJson(bytes, &b).ok());
      a.clear_run();
      b.clear_run();
      EXPECT_EQ(manifest::ToJson(a), manifest::ToJson(b));
      continue;
    }
    EXPECT_TRUE(objects[name] == bytes) << name;
  }
  EXPECT_GE(compared, shards_.size() * 2 + 1);
  for (const auto& [name, bytes] : objects) EXPECT_TRUE(local.count(name)) << "extra object " << name;
  testing::CommandResult v = Shard("verify -q s3://bkt/conv");
  EXPECT_EQ(v.exit_code, 0) << v.out;
  // The staging folder let go of every uploaded shard and index.
  size_t staged_shards = 0;
  for (const auto& [name, bytes] : testing::SnapshotDir(dir_ + "/staging")) {
    if (name.rfind(".libshard/", 0) != 0 && name.find(".tfrecord") != std::string::npos) ++staged_shards;
  }
  EXPECT_EQ(staged_shards, 0u);
  EXPECT_TRUE(fs::exists(dir_ + "/staging/manifest.json"));
  // A rerun (resume) converts nothing again and sends nothing again: the
  // uploaded shards are kept from their objects.
  r = Shard("convert " + dir_ + "/in -o s3://bkt/conv --shard-size 2KiB --staging " + dir_ + "/staging");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.err.find("(0 shards written); 12 kept from an earlier run in " + std::to_string(shards_.size()) + " shard(s)"),
      std::string::npos)
      << r.err;
  // (manifest.json records the run, so it goes up again; the entries and rejects.tsv are skipped.)
  EXPECT_NE(r.err.find("uploaded 1 objects to s3://bkt/conv ("), std::string::npos) << r.err;
}

// Resume decides from the objects: a shard whose object is missing, or whose
// object does not have its entry's size and CRC-32C, is converted again; the
// others are kept without being converted -- with the staging folder, and
// without it (another machine: the uploaded entries are read back).
TEST_F(StoreCliTest, ResumeConvertsOnlyTheShardsNotUploaded) {
  const std::string convert =
      "convert " + dir_ + "/in -o s3://bkt/conv --shard-size 2KiB --staging " + dir_ + "/staging";
  testing::CommandResult r = Shard(convert);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t n = shards_.size();
  ASSERT_GE(n, 3u);
  // Two shards whose objects are not what their entries say: other bytes
  // (no CRC-32C recorded, another size), an empty object. (Shards never
  // uploaded: KillNineDuringAnUploadThenRerunIsCompleteAndIdentical.)
  ASSERT_TRUE(store_->Put("conv/" + shards_[0], "not the shard").ok());
  ASSERT_TRUE(store_->Put("conv/" + shards_[1], "").ok());
  r = Shard(convert);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("(2 shards written); "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kept from an earlier run in " + std::to_string(n - 2) + " shard(s)"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("shard " + shards_[0] + " (the object s3://bkt/conv/" + shards_[0] +
                       " has 13 bytes, no crc32c metadata; its entry says "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("of an earlier run did not match its checksum: redone"), std::string::npos) << r.err;
  // The two shards go up again (their index and entry are the same bytes: skipped), then manifest.json.
  EXPECT_NE(r.err.find("uploaded 3 objects to s3://bkt/conv"), std::string::npos) << r.err;
  auto same_as_local = [&] {
    std::map<std::string, std::string> objects = Objects(*store_, "conv");
    for (const auto& [name, bytes] : testing::SnapshotDir(dir_ + "/ds")) {
      if (name == "manifest.json" || (name.rfind(".libshard/", 0) == 0 && name.find(".json") == std::string::npos)) {
        continue;
      }
      ASSERT_TRUE(objects.count(name)) << name;
      EXPECT_TRUE(objects[name] == bytes) << name;
    }
    EXPECT_EQ(Shard("verify -q s3://bkt/conv").exit_code, 0);
  };
  same_as_local();
  // Without the staging folder: the entries come back from the objects.
  fs::remove_all(dir_ + "/staging");
  ASSERT_TRUE(store_->Put("conv/" + shards_[n - 1], "x").ok());
  r = Shard(convert);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("(1 shards written); "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kept from an earlier run in " + std::to_string(n - 1) + " shard(s)"), std::string::npos)
      << r.err;
  same_as_local();
}

TEST_F(StoreCliTest, KillNineDuringAnUploadThenRerunIsCompleteAndIdentical) {
  std::string why;
  auto proxy = testing::FaultProxy::Start(s3_->port(), dir_, &why);
  ASSERT_TRUE(proxy) << why;
  const std::string env = EnvFor(proxy->endpoint());
  const std::string convert = std::string(SHARD_BIN) + " convert -q " + dir_ + "/in -o s3://bkt/conv " +
                              "--shard-size 2KiB --staging " + dir_ + "/staging";
  // The upload of the middle shard hangs (index, labels, shard and entry go up in
  // shard order); the converter is killed there, with the shards before it
  // uploaded and let go of.
  const size_t n = shards_.size(), k = n / 2;
  ASSERT_GE(k, 1u);
  proxy->Fault("hang", "PUT", shards_[k], 1, 60);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", ("exec env " + env + convert).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  // Each shard goes up with its companions (index, labels) and its entry;
  // the first PUT naming shard k (its index) hangs.
  int per_shard = 1;  // the entry
  for (const auto& e : fs::directory_iterator(dir_ + "/ds")) {
    if (e.path().filename().string().rfind(shards_[0], 0) == 0) ++per_shard;
  }
  ASSERT_EQ(per_shard, 4);  // the shard, FILE.idx, FILE.labels, the entry
  const int before = static_cast<int>(per_shard * k + 1);
  while (proxy->Count("PUT") < before && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(proxy->Count("PUT"), before);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_FALSE(store_->Head("conv/manifest.json").ok());  // not committed
  // The rerun keeps the k uploaded shards from their objects (the staging
  // folder no longer has them) and converts none again.
  const std::string counted = std::string(SHARD_BIN) + " convert " + dir_ + "/in -o s3://bkt/conv " +
                              "--shard-size 2KiB --staging " + dir_ + "/staging";
  testing::CommandResult r = testing::RunCommand("env " + env + counted);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("(0 shards written)"), std::string::npos) << r.err;
  std::map<std::string, std::string> first = Objects(*store_, "conv");
  // The same after a kill on another machine (no staging folder): only the
  // n - k shards not uploaded are converted again.
  ASSERT_TRUE(store_->Put("conv/manifest.json", "").ok());
  fs::remove_all(dir_ + "/staging");
  for (size_t i = k; i < n; ++i) ASSERT_TRUE(store_->Put("conv/" + shards_[i], "").ok());
  r = testing::RunCommand("env " + env + counted);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("(" + std::to_string(n - k) + " shards written); "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kept from an earlier run in " + std::to_string(k) + " shard(s)"), std::string::npos) << r.err;
  std::map<std::string, std::string> objects = Objects(*store_, "conv");
  for (const auto& [name, bytes] : testing::SnapshotDir(dir_ + "/ds")) {
    if (name == "manifest.json" || (name.rfind(".libshard/", 0) == 0 && name.find(".json") == std::string::npos)) {
      continue;
    }
    ASSERT_TRUE(objects.count(name)) << name;
    EXPECT_TRUE(objects[name] == bytes) << name;
  }
  EXPECT_TRUE(objects.count("manifest.json"));
  EXPECT_EQ(Shard("verify -q s3://bkt/conv").exit_code, 0);
}

// The uploader sends a staged shard only while it still has the CRC-32C its
// entry records (what resume and merge trust the object's metadata for).
TEST_F(StoreCliTest, AStagedShardChangedOnDiskIsNotUploaded) {
  fs::copy(dir_ + "/ds", dir_ + "/staging", fs::copy_options::recursive);
  std::string bytes = testing::ReadFileOrDie(dir_ + "/staging/" + shards_[0]);
  bytes[bytes.size() / 2] ^= 0x01;
  testing::WriteFileOrDie(dir_ + "/staging/" + shards_[0], bytes);
  ::setenv("AWS_ENDPOINT_URL", s3_->endpoint().c_str(), 1);
  ::setenv("AWS_ACCESS_KEY_ID", "S3RVER", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "S3RVER", 1);
  StatusOr<std::unique_ptr<remote::ShardUploader>> u =
      remote::ShardUploader::Start("s3://bkt/changed", dir_ + "/staging");
  ::unsetenv("AWS_ENDPOINT_URL");
  ::unsetenv("AWS_ACCESS_KEY_ID");
  ::unsetenv("AWS_SECRET_ACCESS_KEY");
  ASSERT_TRUE(u.ok()) << u.status();
  Status s = (*u)->Finish(/*commit=*/false);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find(dir_ + "/staging/" + shards_[0] + ": the staged shard has crc32c:"), std::string::npos)
      << s;
  EXPECT_FALSE(store_->Head("changed/" + shards_[0]).ok());
}

TEST_F(StoreCliTest, UploadFailureExitsOneNamingTheCause) {
  // A bucket that does not exist: every PUT is refused (404 NoSuchBucket).
  testing::CommandResult r =
      Shard("convert " + dir_ + "/in -o s3://nobucket/conv --shard-size 2KiB --staging " + dir_ + "/staging");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("uploading to s3://nobucket/conv"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("NoSuchBucket"), std::string::npos) << r.err;
  // ... and says how to make the bucket, at the endpoint in use.
  EXPECT_NE(r.err.find("create it with `aws s3 mb s3://nobucket --endpoint-url http://127.0.0.1:"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace libshard
