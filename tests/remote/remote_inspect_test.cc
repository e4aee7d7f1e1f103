// remote::InspectObject (remote/remote_inspect.h): one object of s3://bkt/ds
// inspected through a staged copy, its summary the local file's, naming the
// URL; against s3rver behind the fault proxy.
#include "libshard/remote/remote_inspect.h"

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

class RemoteInspectTest : public testing::StagedDatasetTest {
 protected:
  // The first shard's name.
  std::string FirstShard() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_ + "/ds")) {
      const std::string name = e.path().filename().string();
      if (name.size() > 9 && name.compare(name.size() - 9, 9, ".tfrecord") == 0) names.push_back(name);
    }
    EXPECT_FALSE(names.empty());
    return names.empty() ? "" : *std::min_element(names.begin(), names.end());
  }
};

TEST_F(RemoteInspectTest, AnObjectIsTheLocalFileNamedByItsUrl) {
  const std::string shard = FirstShard();
  StatusOr<reader::Inspection> local = remote::InspectObject(dir_ + "/ds/" + shard);
  ASSERT_TRUE(local.ok()) << local.status();
  StatusOr<reader::Inspection> remote = remote::InspectObject("s3://bkt/ds/" + shard);
  ASSERT_TRUE(remote.ok()) << remote.status();
  EXPECT_EQ(remote->file, "s3://bkt/ds/" + shard);
  EXPECT_GT(remote->records, 0u);
  std::string want = reader::InspectionJson(*local);
  want.replace(want.find(dir_ + "/ds/"), dir_.size() + 4, "s3://bkt/ds/");
  EXPECT_EQ(reader::InspectionJson(*remote), want);
  EXPECT_GT(proxy_->Count("GET"), 0);
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));  // the staged copy is gone
}

TEST_F(RemoteInspectTest, ErrorsNameTheUrl) {
  StatusOr<reader::Inspection> none = remote::InspectObject("s3://bkt/ds/none.tfrecord");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound) << none.status();
  EXPECT_TRUE(Contains(none.status().message(), "s3://bkt/ds/none.tfrecord")) << none.status();
  EXPECT_FALSE(Contains(none.status().message(), dir_ + "/tmp")) << none.status();
  // A bad option is refused before anything is downloaded.
  reader::InspectOptions o;
  o.show = reader::kMaxInspectShow + 1;
  const int gets = proxy_->Count("GET");
  EXPECT_EQ(remote::InspectObject("s3://bkt/ds/" + FirstShard(), o).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(proxy_->Count("GET"), gets);
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

}  // namespace
}  // namespace libshard
