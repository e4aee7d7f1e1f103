// Staging remote datasets (what `shard verify` / `report` / `merge` of an
// s3:// location download): a bucket that lies about its names gets a clear
// error naming the object, and nothing is written outside the staging folder.
// s3rver holds an honest dataset; the fault proxy in front of it adds hostile
// keys to its LIST answers.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <filesystem>
#include <string>

#include "remote/remote_fixtures.h"
#include "servers/servers.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;

class RemoteStagingTest : public testing::S3ProxyTest {
 protected:
  void SetUp() override {
    S3ProxyTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_NO_FATAL_FAILURE(testing::ConvertSmallDataset(dir_));
    UploadFolder(dir_ + "/ds", "ds");
    fs::create_directories(dir_ + "/tmp");
  }
  // `shard ARGS` through the proxy, with TMPDIR (the staging folder's home)
  // inside the test's folder.
  testing::CommandResult Shard(const std::string& args) {
    return testing::RunCommand("env AWS_ENDPOINT_URL=" + proxy_->endpoint() +
                               " AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER TMPDIR=" + dir_ + "/tmp " +
                               SHARD_BIN + " " + args);
  }
};

TEST_F(RemoteStagingTest, AListedKeyWithDotDotWritesNothingOutsideAndIsAnError) {
  // The staging folder is dir_/tmp/shard-staging-X: two '..' reach dir_.
  for (const std::string& key :
       {std::string("ds/../../escaped"), "ds/../../../" + fs::path(dir_).filename().string() + "/escaped2"}) {
    proxy_->AddListedKey(key);
    testing::CommandResult r = Shard("verify s3://bkt/ds");
    EXPECT_NE(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.err.find("s3://bkt/" + key + ": '.' or '..' in the name"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("0 faults"), std::string::npos) << r.out;
  }
  EXPECT_FALSE(fs::exists(dir_ + "/escaped"));
  EXPECT_FALSE(fs::exists(dir_ + "/escaped2"));
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

TEST_F(RemoteStagingTest, AListedKeyOutsideThePrefixIsAnErrorNotACrash) {
  // Shorter than the prefix, and elsewhere: substr() threw std::out_of_range
  // (exit 134, the staging folder left behind).
  for (const std::string& key : std::vector<std::string>{"d", "other/x.tfrecord"}) {
    proxy_->AddListedKey(key);
    testing::CommandResult r = Shard("verify s3://bkt/ds");
    EXPECT_TRUE(r.exit_code == 1 || r.exit_code == 2) << r.exit_code << r.out << r.err;
    // The store's listing refuses it first, naming the LIST and the key.
    EXPECT_NE(r.err.find("LIST s3://bkt/ds/: the server listed '" + key + "', which is outside the prefix"),
              std::string::npos)
        << r.err;
  }
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

TEST_F(RemoteStagingTest, AnAbsoluteOrBackslashedKeyIsRefused) {
  for (const std::string& key : std::vector<std::string>{"ds//etc/passwd", "ds/..\\..\\x"}) {
    proxy_->AddListedKey(key);
    testing::CommandResult r = Shard("report -q s3://bkt/ds -o " + dir_ + "/r.html");
    EXPECT_NE(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.err.find("s3://bkt/" + key), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_ + "/r.html"));
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

TEST_F(RemoteStagingTest, AFolderMarkerIsSkipped) {
  // What "Create folder" makes in a console: it stopped verify with
  // "open /tmp/shard-staging-X/: Is a directory" (exit 2).
  proxy_->AddListedKey("ds/", "list-type=2", 2);
  testing::CommandResult r = Shard("verify s3://bkt/ds");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0 faults"), std::string::npos) << r.out;
  r = Shard("report -q s3://bkt/ds -o " + dir_ + "/r.html");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

TEST_F(RemoteStagingTest, AMissingDatasetNamesItsUrlNotTheStagingFolder) {
  for (const std::string& cmd :
       std::vector<std::string>{"verify s3://bkt/typo", "report -q s3://bkt/typo -o " + dir_ + "/r.html"}) {
    testing::CommandResult r = Shard(cmd);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("s3://bkt/typo: no dataset there"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("404"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("shard-staging"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("shard-staging"), std::string::npos) << r.out;
  }
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

// https:// has no LIST: the manifest's `file` / `index_file` name what is
// fetched. A name with '..' is refused naming the manifest, and nothing is
// written outside the staging folder.
TEST(RemoteStagingHttpsTest, AManifestNameWithDotDotIsRefused) {
  const std::string dir = testing::MakeTempDir();
  ASSERT_NO_FATAL_FAILURE(testing::ConvertSmallDataset(dir));
  fs::create_directories(dir + "/www/ds");
  fs::create_directories(dir + "/tmp");
  std::string manifest = testing::ReadFileOrDie(dir + "/ds/manifest.json");
  const size_t at = manifest.find("\"file\": \"");
  ASSERT_NE(at, std::string::npos) << manifest;
  manifest.insert(at + 9, "../../escaped/");
  testing::WriteFileOrDie(dir + "/www/ds/manifest.json", manifest);
  std::string why;
  auto nginx = testing::LocalNginx::Start(dir + "/www", dir, &why);
  LIBSHARD_REQUIRE_SERVER(nginx, why);
  testing::CommandResult r = testing::RunCommand("env AWS_CA_BUNDLE=" + nginx->ca_file() + " TMPDIR=" + dir + "/tmp " +
                                                 SHARD_BIN + " verify " + nginx->base() + "/ds");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(nginx->base() + "/ds/manifest.json: the shard name \"../../escaped/"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("'.' or '..' in the name"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/escaped"));
  EXPECT_TRUE(fs::is_empty(dir + "/tmp"));
}

// No room in $TMPDIR (a file size limit stands in for a full disk: writes
// fail with EFBIG, SIGXFSZ ignored): a run-time failure, exit 1 (it was 2),
// naming the object being staged, not the temporary folder.
TEST_F(RemoteStagingTest, NoRoomInTmpdirExitsOneNamingTheObject) {
  testing::CommandResult r =
      testing::RunCommand("sh -c \"trap '' XFSZ; ulimit -f 1; exec env AWS_ENDPOINT_URL=" + proxy_->endpoint() +
                          " AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER TMPDIR=" + dir_ + "/tmp " +
                          SHARD_BIN + " verify -q s3://bkt/ds\"");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("s3://bkt/ds/"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("shard-staging"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

// Ctrl-C (and SIGTERM) while objects are being staged: the folder goes too.
TEST_F(RemoteStagingTest, AnInterruptedVerifyLeavesNoStagingFolder) {
  for (const int sig : {SIGINT, SIGTERM}) {
    proxy_->Fault("stall", "GET", ".tfrecord", 1, 30);  // one shard's download hangs
    const std::string cmd = "exec env AWS_ENDPOINT_URL=" + proxy_->endpoint() +
                            " AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER TMPDIR=" + dir_ + "/tmp " +
                            SHARD_BIN + " verify s3://bkt/ds 2>" + dir_ + "/err.txt";
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // Until the staging folder holds the manifest (the downloads have begun).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    auto staged = [&] {
      std::error_code ec;
      for (auto it = fs::recursive_directory_iterator(dir_ + "/tmp", ec); !ec && it != fs::end(it); it.increment(ec)) {
        if (it->path().filename() == "manifest.json") return true;
      }
      return false;
    };
    while (!staged() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(staged());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(pid, sig);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
    EXPECT_NE(testing::ReadFileOrDie(dir_ + "/err.txt").find("shard: interrupted"), std::string::npos);
    EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
    proxy_->Reset();
  }
}

}  // namespace
}  // namespace libshard
