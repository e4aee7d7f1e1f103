// remote::VerifyLocation (remote/remote_verify.h): s3://bkt/ds verified
// through a staged copy gives the local set's report, naming the objects;
// damage found there is a fault naming its object; what the request names
// badly is refused before anything is downloaded. Against s3rver behind the
// fault proxy.
#include "libshard/remote/remote_verify.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "remote/remote_fixtures.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::ReadFileOrDie;
using testing::WriteFileOrDie;

class RemoteVerifyTest : public testing::StagedDatasetTest {
 protected:
  static verify::VerifyRequest Request(std::vector<std::string> paths) {
    verify::VerifyRequest r;
    r.paths = std::move(paths);
    return r;
  }
  // The shard files of dir_/ds, sorted.
  std::vector<std::string> Shards() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_ + "/ds")) {
      const std::string name = e.path().filename().string();
      if (name.size() > 9 && name.compare(name.size() - 9, 9, ".tfrecord") == 0) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }
};

TEST_F(RemoteVerifyTest, ADatasetInABucketIsTheLocalSetNamedByItsUrls) {
  StatusOr<remote::VerifyOutcome> local = remote::VerifyLocation(Request({dir_ + "/ds"}));
  ASSERT_TRUE(local.ok()) << local.status();
  StatusOr<remote::VerifyOutcome> there = remote::VerifyLocation(Request({"s3://bkt/ds"}));
  ASSERT_TRUE(there.ok()) << there.status();
  EXPECT_FALSE(local->remote);
  EXPECT_TRUE(there->remote);
  EXPECT_EQ(local->exit_code, 0);
  EXPECT_EQ(there->exit_code, 0);
  const verify::VerifySummary &a = local->report.summary, &b = there->report.summary;
  EXPECT_EQ(b.files, Shards().size());
  EXPECT_EQ(b.files, a.files);
  EXPECT_EQ(b.records, a.records);
  EXPECT_EQ(b.bytes, a.bytes);
  EXPECT_EQ(b.faults, 0u);
  ASSERT_EQ(there->report.set.files.size(), local->report.set.files.size());
  for (size_t i = 0; i < local->report.set.files.size(); ++i) {
    std::string want = local->report.set.files[i].path;
    want.replace(0, dir_.size() + 4, "s3://bkt/ds/");
    EXPECT_EQ(there->report.set.files[i].path, want);
  }
  ASSERT_EQ(there->report.set.manifests.size(), 1u);
  EXPECT_EQ(there->report.set.manifests[0].path, "s3://bkt/ds/manifest.json");
  EXPECT_FALSE(Contains(verify::VerifyReportJson(there->report), dir_ + "/tmp"));
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));  // the staged copy is gone
}

TEST_F(RemoteVerifyTest, DamageInAnObjectIsAFaultNamingIt) {
  // A copy of the set with one byte of the first shard's last record
  // changed, uploaded as s3://bkt/bad.
  fs::copy(dir_ + "/ds", dir_ + "/bad", fs::copy_options::recursive);
  const std::string shard = Shards().front();
  std::string bytes = ReadFileOrDie(dir_ + "/bad/" + shard);
  ASSERT_GT(bytes.size(), 8u);
  bytes[bytes.size() - 8] ^= 0x20;
  WriteFileOrDie(dir_ + "/bad/" + shard, bytes);
  UploadFolder(dir_ + "/bad", "bad");
  StatusOr<remote::VerifyOutcome> v = remote::VerifyLocation(Request({"s3://bkt/bad"}));
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->exit_code, 1);
  EXPECT_GT(v->report.summary.faults, 0u);
  const std::string json = verify::VerifyReportJson(v->report);
  EXPECT_TRUE(Contains(json, "s3://bkt/bad/" + shard)) << json;
  EXPECT_FALSE(Contains(json, dir_ + "/tmp")) << json;
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

TEST_F(RemoteVerifyTest, WhatTheRequestNamesBadlyIsRefusedBeforeAnyDownload) {
  const int gets = proxy_->Count("GET");
  StatusOr<remote::VerifyOutcome> two = remote::VerifyLocation(Request({"s3://bkt/ds", dir_ + "/ds"}));
  EXPECT_EQ(two.status().code(), StatusCode::kInvalidArgument) << two.status();
  EXPECT_TRUE(Contains(two.status().message(), "checked on its own")) << two.status();
  verify::VerifyRequest with_manifest = Request({"s3://bkt/ds"});
  with_manifest.manifest = dir_ + "/ds/manifest.json";
  EXPECT_EQ(remote::VerifyLocation(with_manifest).status().code(), StatusCode::kInvalidArgument);
  verify::VerifyRequest bad_threads = Request({"s3://bkt/ds"});
  bad_threads.options.threads = 100000;
  EXPECT_EQ(remote::VerifyLocation(bad_threads).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(proxy_->Count("GET"), gets);
  // Nothing there: staging's NotFound, naming the URL, not the folder.
  StatusOr<remote::VerifyOutcome> none = remote::VerifyLocation(Request({"s3://bkt/none"}));
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound) << none.status();
  EXPECT_TRUE(Contains(none.status().message(), "s3://bkt/none")) << none.status();
  EXPECT_FALSE(Contains(none.status().message(), dir_ + "/tmp")) << none.status();
  // A local path that matches nothing: Verify's own error, InvalidArgument.
  EXPECT_EQ(remote::VerifyLocation(Request({dir_ + "/nothing-*.tfrecord"})).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

}  // namespace
}  // namespace libshard
