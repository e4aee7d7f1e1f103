// Shared by the remote tests: a small converted dataset made by `shard`.
#ifndef LIBSHARD_TESTS_REMOTE_REMOTE_FIXTURES_H_
#define LIBSHARD_TESTS_REMOTE_REMOTE_FIXTURES_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "convert/fixtures.h"
#include "servers/servers.h"
#include "testutil.h"

namespace libshard::testing {

// Six PNGs in two classes under `dir`/in, converted by `shard` into `dir`/ds
// (2 KiB shards: several of them). Call with ASSERT_NO_FATAL_FAILURE.
inline void ConvertSmallDataset(const std::string& dir) {
  for (int i = 0; i < 6; ++i) {
    const std::string cls = dir + "/in/" + std::string(i % 2 ? "a" : "b");
    std::filesystem::create_directories(cls);
    WriteFileOrDie(cls + "/" + std::to_string(i) + ".png", PngBytes(16, 12, 3, i));
  }
  CommandResult r = RunShard("convert -q " + dir + "/in -o " + dir + "/ds --shard-size 2KiB");
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// ConvertSmallDataset's set uploaded to s3rver as s3://bkt/ds, read through
// the fault proxy (AWS_* set in the process), with TMPDIR (the staging
// folder's home) at dir_/tmp, for the library's remote calls in-process.
class StagedDatasetTest : public S3ProxyTest {
 protected:
  void SetUp() override {
    S3ProxyTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_NO_FATAL_FAILURE(ConvertSmallDataset(dir_));
    UploadFolder(dir_ + "/ds", "ds");
    ReadThroughProxy();
    std::filesystem::create_directories(dir_ + "/tmp");
    const char* tmp = std::getenv("TMPDIR");
    had_tmpdir_ = tmp != nullptr;
    if (had_tmpdir_) old_tmpdir_ = tmp;
    ::setenv("TMPDIR", (dir_ + "/tmp").c_str(), 1);
  }
  void TearDown() override {
    if (had_tmpdir_)
      ::setenv("TMPDIR", old_tmpdir_.c_str(), 1);
    else
      ::unsetenv("TMPDIR");
    ::unsetenv("AWS_ENDPOINT_URL");
    ::unsetenv("AWS_ACCESS_KEY_ID");
    ::unsetenv("AWS_SECRET_ACCESS_KEY");
  }

 private:
  std::string old_tmpdir_;
  bool had_tmpdir_ = false;
};

}  // namespace libshard::testing

#endif  // LIBSHARD_TESTS_REMOTE_REMOTE_FIXTURES_H_
