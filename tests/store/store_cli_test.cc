// `shard verify` and `shard inspect` on s3:// locations (s3rver, objects put
// by the store), as a user runs them.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <map>

#include "convert/fixtures.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/store/s3_store.h"
#include "store/servers.h"
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
    store::S3Config c = s3_->Config();
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
    env_ = "env AWS_ENDPOINT_URL=" + s3_->endpoint() +
           " AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER TMPDIR=" + dir_ + "/tmp ";
  }
  testing::CommandResult Shard(const std::string& args) {
    return testing::RunCommand(env_ + SHARD_BIN + " " + args);
  }

  std::string dir_, env_;
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
    testing::CommandResult r = Shard("convert -q " + dir_ + "/in -o s3://bkt/tasks --shard-size 2KiB --num-tasks 3 "
                                     "--task-index " + std::to_string(i) + " --staging " + dir_ + "/staging" +
                                     std::to_string(i));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_FALSE(store_->Head("tasks/manifest.json").ok());  // no task writes it
  testing::CommandResult m = Shard("merge s3://bkt/tasks");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.err.find("s3://bkt/tasks/manifest.json"), std::string::npos) << m.err;
  std::map<std::string, std::string> objects = Objects(*store_, "tasks");
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
  for (size_t at; (at = want.find(dir_ + "/ds")) != std::string::npos;) want.replace(at, dir_.size() + 3, "s3://bkt/ds");
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
  testing::CommandResult r = Shard("convert " + dir_ + "/in -o s3://bkt/conv --shard-size 2KiB --staging " + dir_ +
                                   "/staging");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("to s3://bkt/conv (0 already there), manifest.json last"), std::string::npos) << r.err;
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
  // A rerun (resume) sends nothing again.
  r = Shard("convert " + dir_ + "/in -o s3://bkt/conv --shard-size 2KiB --staging " + dir_ + "/staging");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // (manifest.json records the run, so it goes up again; everything else is skipped.)
  EXPECT_NE(r.err.find("uploaded 1 objects to s3://bkt/conv (" + std::to_string(compared - 1) + " already there)"),
            std::string::npos)
      << r.err;
}

TEST_F(StoreCliTest, KillNineDuringAnUploadThenRerunIsCompleteAndIdentical) {
  std::string why;
  auto proxy = testing::FaultProxy::Start(s3_->port(), dir_, &why);
  ASSERT_TRUE(proxy) << why;
  const std::string env = "AWS_ENDPOINT_URL=" + proxy->endpoint() +
                          " AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER TMPDIR=" + dir_ + "/tmp ";
  const std::string convert = std::string(SHARD_BIN) + " convert -q " + dir_ + "/in -o s3://bkt/conv " +
                              "--shard-size 2KiB --staging " + dir_ + "/staging";
  // The first shard upload hangs midway; the converter is killed there.
  proxy->Fault("hang", "PUT", ".tfrecord", 1, 60);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", ("exec env " + env + convert).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (proxy->Count("PUT") < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GE(proxy->Count("PUT"), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_FALSE(store_->Head("conv/manifest.json").ok());  // not committed
  testing::CommandResult r = testing::RunCommand("env " + env + convert);
  ASSERT_EQ(r.exit_code, 0) << r.err;
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

TEST_F(StoreCliTest, UploadFailureExitsOneNamingTheCause) {
  // A bucket that does not exist: every PUT is refused (404 NoSuchBucket).
  testing::CommandResult r = Shard("convert " + dir_ + "/in -o s3://nobucket/conv --shard-size 2KiB --staging " +
                                   dir_ + "/staging");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("uploading to s3://nobucket/conv"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("NoSuchBucket"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace libshard
