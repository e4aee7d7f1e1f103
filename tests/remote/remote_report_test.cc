// remote::WriteDatasetReport (remote/remote_report.h): the page of an s3://
// dataset, staged, written and naming the objects, against s3rver behind the
// fault proxy; the same call on a local folder is report's page.
#include "libshard/remote/remote_report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "remote/remote_fixtures.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::ReadFileOrDie;

class RemoteReportTest : public testing::StagedDatasetTest {
 protected:
  void SetUp() override {
    StagedDatasetTest::SetUp();
    options_.seed = 4;
  }
  report::ReportOptions options_;
};

TEST_F(RemoteReportTest, ThePageOfABucketIsTheFoldersPageNamingTheObjects) {
  StatusOr<std::string> local = remote::WriteDatasetReport(dir_ + "/ds", dir_ + "/local.html", options_);
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(*local, dir_ + "/local.html");
  StatusOr<std::string> page = remote::WriteDatasetReport("s3://bkt/ds", dir_ + "/remote.html", options_);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(*page, dir_ + "/remote.html");
  std::string want = ReadFileOrDie(dir_ + "/local.html");
  ASSERT_TRUE(Contains(want, dir_ + "/ds"));
  for (size_t at; (at = want.find(dir_ + "/ds")) != std::string::npos;)
    want.replace(at, dir_.size() + 3, "s3://bkt/ds");
  EXPECT_EQ(ReadFileOrDie(*page), want);
  EXPECT_GT(proxy_->Count("GET"), 0);
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));  // the staging folder is gone
}

TEST_F(RemoteReportTest, ErrorsNameTheUrlNeverTheStagingFolder) {
  StatusOr<std::string> no_output = remote::WriteDatasetReport("s3://bkt/ds", "", options_);
  EXPECT_EQ(no_output.status().code(), StatusCode::kInvalidArgument) << no_output.status();
  EXPECT_TRUE(Contains(no_output.status().message(), "s3://bkt/ds")) << no_output.status();
  StatusOr<std::string> none = remote::WriteDatasetReport("s3://bkt/none", dir_ + "/none.html", options_);
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound) << none.status();
  EXPECT_TRUE(Contains(none.status().message(), "s3://bkt/none")) << none.status();
  // Bad options are refused before anything is downloaded.
  report::ReportOptions bad = options_;
  bad.thumbnails_per_class = 65;
  const int gets = proxy_->Count("GET");
  StatusOr<std::string> refused = remote::WriteDatasetReport("s3://bkt/ds", dir_ + "/bad.html", bad);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << refused.status();
  EXPECT_EQ(proxy_->Count("GET"), gets);
  // A page that cannot be written names the page, not the staging folder.
  StatusOr<std::string> nowhere = remote::WriteDatasetReport("s3://bkt/ds", dir_ + "/no/page.html", options_);
  ASSERT_FALSE(nowhere.ok());
  EXPECT_TRUE(Contains(nowhere.status().message(), dir_ + "/no/page.html")) << nowhere.status();
  EXPECT_FALSE(Contains(nowhere.status().message(), dir_ + "/tmp")) << nowhere.status();
  EXPECT_FALSE(fs::exists(dir_ + "/none.html"));
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

}  // namespace
}  // namespace libshard
