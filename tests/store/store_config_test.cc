// StoreConfig::FromEnvironment: the AWS variables and profile files.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <thread>

#include "libshard/store/object_store.h"
#include "libshard/store/store_config.h"
#include "testutil.h"

namespace libshard::store {
namespace {

void WriteTree(const std::string& root, const std::string& rel, const std::string& contents) {
  std::filesystem::create_directories(std::filesystem::path(root + "/" + rel).parent_path());
  testing::WriteFileOrDie(root + "/" + rel, contents);
}

// Each test starts from an environment without AWS settings and a HOME
// without ~/.aws.
class StoreConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v :
         {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
          "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
          "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_CA_BUNDLE", "AWS_MAX_ATTEMPTS"}) {
      ::unsetenv(v);
    }
    home_ = testing::MakeTempDir();
    ::setenv("HOME", home_.c_str(), 1);
  }
  std::string home_;
};

TEST_F(StoreConfigTest, NothingSetIsAnonymousAwsInUsEast1) {
  StatusOr<StoreConfig> c = StoreConfig::FromEnvironment();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->region, "us-east-1");
  EXPECT_EQ(c->endpoint, "");
  EXPECT_EQ(c->access_key_id, "");
  EXPECT_EQ(c->retry.max_attempts, 6);
  EXPECT_NE(c->Describe().find("anonymous"), std::string::npos);
}

// ~/.aws/config as a FIFO: refused, naming the file, never waited on (an
// ifstream would block in open() until a writer comes).
TEST_F(StoreConfigTest, FifoAsConfigFileIsRefusedNotWaitedOn) {
  const std::string path = home_ + "/.aws/config";
  std::filesystem::create_directories(home_ + "/.aws");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::promise<Status> done;
  std::future<Status> result = done.get_future();
  std::thread([p = std::move(done)]() mutable { p.set_value(StoreConfig::FromEnvironment().status()); }).detach();
  if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "StoreConfig::FromEnvironment() still waits on the FIFO after 10 s";
    // Let the blocked open() go: a writer comes and leaves.
    const int w = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (w >= 0) ::close(w);
    result.wait();
    return;
  }
  const Status s = result.get();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find(path), std::string::npos) << s;
  EXPECT_NE(s.message().find("config file"), std::string::npos) << s;
}

TEST_F(StoreConfigTest, EnvironmentVariables) {
  ::setenv("AWS_ACCESS_KEY_ID", "AK", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "SK", 1);
  ::setenv("AWS_SESSION_TOKEN", "TOK", 1);
  ::setenv("AWS_DEFAULT_REGION", "eu-west-1", 1);
  ::setenv("AWS_ENDPOINT_URL", "http://generic:1", 1);
  ::setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9000/", 1);
  ::setenv("AWS_CA_BUNDLE", "/etc/ca.pem", 1);
  ::setenv("AWS_MAX_ATTEMPTS", "3", 1);
  StatusOr<StoreConfig> c = StoreConfig::FromEnvironment();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->access_key_id, "AK");
  EXPECT_EQ(c->secret_access_key, "SK");
  EXPECT_EQ(c->session_token, "TOK");
  EXPECT_EQ(c->region, "eu-west-1");
  EXPECT_EQ(c->endpoint, "http://127.0.0.1:9000");  // the S3-specific one wins; no trailing '/'
  EXPECT_EQ(c->ca_bundle, "/etc/ca.pem");
  EXPECT_EQ(c->retry.max_attempts, 3);
  ::setenv("AWS_REGION", "ap-south-1", 1);
  EXPECT_EQ(StoreConfig::FromEnvironment()->region, "ap-south-1");
  EXPECT_EQ(c->Describe().find("SK"), std::string::npos);
}

TEST_F(StoreConfigTest, ProfilesFromTheAwsFiles) {
  WriteTree(home_, ".aws/credentials",
            "[default]\naws_access_key_id = DEFKEY\naws_secret_access_key = DEFSECRET\n"
            "# a comment\n[minio]\naws_access_key_id=MINIOKEY\naws_secret_access_key=MINIOSECRET\n");
  WriteTree(home_, ".aws/config",
            "[default]\nregion = us-west-2\n\n[profile minio]\nregion = eu-central-1\n"
            "s3 =\n  endpoint_url = http://minio.local:9000\n");
  StatusOr<StoreConfig> d = StoreConfig::FromEnvironment();
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->access_key_id, "DEFKEY");
  EXPECT_EQ(d->region, "us-west-2");
  EXPECT_EQ(d->endpoint, "");
  ::setenv("AWS_PROFILE", "minio", 1);
  StatusOr<StoreConfig> m = StoreConfig::FromEnvironment();
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->access_key_id, "MINIOKEY");
  EXPECT_EQ(m->secret_access_key, "MINIOSECRET");
  EXPECT_EQ(m->region, "eu-central-1");
  EXPECT_EQ(m->endpoint, "http://minio.local:9000");
  // The environment's credentials win, as a set.
  ::setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET", 1);
  EXPECT_EQ(StoreConfig::FromEnvironment()->secret_access_key, "ENVSECRET");
  ::setenv("AWS_PROFILE", "nosuch", 1);
  Status s = StoreConfig::FromEnvironment().status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("AWS_PROFILE=nosuch"), std::string::npos) << s;
}

TEST_F(StoreConfigTest, BadSettingsNameTheVariable) {
  ::setenv("AWS_ACCESS_KEY_ID", "AK", 1);
  EXPECT_NE(StoreConfig::FromEnvironment().status().message().find("AWS_SECRET_ACCESS_KEY"), std::string::npos);
  ::setenv("AWS_SECRET_ACCESS_KEY", "SK", 1);
  ::setenv("AWS_MAX_ATTEMPTS", "0", 1);
  EXPECT_NE(StoreConfig::FromEnvironment().status().message().find("AWS_MAX_ATTEMPTS=0"), std::string::npos);
  ::unsetenv("AWS_MAX_ATTEMPTS");
  ::setenv("AWS_ENDPOINT_URL", "ftp://x", 1);
  EXPECT_EQ(StoreConfig::FromEnvironment().status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace libshard::store

namespace libshard::store {
namespace {

// An endpoint with user-info (http://user:secret@host) would put the secret
// in every message and in the cache folder's name: refused wherever it comes
// from, by a message without the secret.
TEST_F(StoreConfigTest, EndpointWithUserInfoIsRefusedWithoutTheSecret) {
  for (const char* var : {"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"}) {
    ::setenv(var, "http://alice:hunter2secret@127.0.0.1:9000", 1);
    StatusOr<StoreConfig> c = StoreConfig::FromEnvironment();
    ASSERT_FALSE(c.ok()) << var;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(c.status().message().find(var), std::string::npos) << c.status();
    EXPECT_NE(c.status().message().find("user-info"), std::string::npos) << c.status();
    EXPECT_EQ(c.status().message().find("hunter2secret"), std::string::npos) << c.status();
    EXPECT_EQ(c.status().message().find("alice"), std::string::npos) << c.status();
    ::unsetenv(var);
  }
  // A bad scheme with user-info: the secret stays out of that message too.
  ::setenv("AWS_ENDPOINT_URL", "ftp://alice:hunter2secret@h", 1);
  StatusOr<StoreConfig> c = StoreConfig::FromEnvironment();
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message().find("hunter2secret"), std::string::npos) << c.status();
  ::unsetenv("AWS_ENDPOINT_URL");
  // A configuration made in code is checked when the store is opened.
  StoreConfig config;
  config.endpoint = "http://alice:hunter2secret@127.0.0.1:9000";
  StatusOr<Location> loc = ParseLocation("s3://bkt/ds");
  ASSERT_TRUE(loc.ok());
  StatusOr<std::unique_ptr<ObjectStore>> store = OpenStore(*loc, config);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store.status().message().find("hunter2secret"), std::string::npos) << store.status();
}

}  // namespace
}  // namespace libshard::store
