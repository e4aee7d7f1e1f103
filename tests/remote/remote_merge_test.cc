// remote::MergeTarget (remote/remote_merge.h): the tasks of a conversion
// merged in an s3:// prefix in place, committed by manifest.json last; what
// the location names badly refused at Open; an upload that fails commits
// nothing. Against s3rver behind the fault proxy.
#include "libshard/remote/remote_merge.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "libshard/manifest/manifest_json.h"
#include "libshard/store/http_transport.h"
#include "libshard/store/object_store.h"
#include "libshard/store/s3_store.h"
#include "remote/remote_fixtures.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;
using testing::Contains;

class RemoteMergeTest : public testing::StagedDatasetTest {
 protected:
  // ConvertSmallDataset's input converted as 2 tasks into dir_/tasks, then
  // put under s3://bkt/tasks (the task manifests under .libshard/).
  void UploadTasks() {
    for (int i = 0; i < 2; ++i) {
      testing::CommandResult r = testing::RunShard("convert -q " + dir_ + "/in -o " + dir_ +
                                                   "/tasks --shard-size 2KiB --num-tasks 2 --task-index " +
                                                   std::to_string(i));
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    UploadFolder(dir_ + "/tasks", "tasks");
    UploadFolder(dir_ + "/tasks/.libshard", "tasks/.libshard");
    proxy_->Reset();
  }
  bool HasObject(const std::string& key) {
    const store::StoreConfig c = s3_->Config();
    std::unique_ptr<store::ObjectStore> s = store::NewS3Store(c, "bkt", store::NewCurlTransport(c));
    return s->Head(key).ok();
  }
};

TEST_F(RemoteMergeTest, TasksInAPrefixAreMergedInPlaceAndCommittedLast) {
  ASSERT_NO_FATAL_FAILURE(UploadTasks());
  {
    StatusOr<std::unique_ptr<remote::MergeTarget>> t = remote::MergeTarget::Open("s3://bkt/tasks");
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_TRUE((*t)->remote());
    StatusOr<convert::MergeResult> r = (*t)->Merge();
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->problems.empty());
    EXPECT_EQ(r->tasks, 2u);
    EXPECT_EQ(r->manifest_path, "s3://bkt/tasks/manifest.json");
    EXPECT_EQ(r->manifest.stats().converted(), 6u);
    EXPECT_TRUE(fs::exists((*t)->local() + "/duplicates.tsv"));  // the leak check's, while the target lives
  }
  EXPECT_TRUE(HasObject("tasks/manifest.json"));
  EXPECT_TRUE(HasObject("tasks/rejects.tsv"));
  // A LIST, the 2 task manifests, and each shard streamed once through its
  // CRC check, never stored (UploadFolder records no CRC-32C to trust).
  int shards = 0;
  for (const auto& e : fs::directory_iterator(dir_ + "/tasks")) shards += e.path().extension() == ".tfrecord";
  EXPECT_GT(shards, 1);
  EXPECT_EQ(proxy_->Count("GET"), 1 + 2 + shards);
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));  // the staged task manifests are gone
}

TEST_F(RemoteMergeTest, AFailedUploadCommitsNothingAndNamesThePrefix) {
  ASSERT_NO_FATAL_FAILURE(UploadTasks());
  proxy_->Fault("error500", "PUT", "manifest.json", 100);
  StatusOr<std::unique_ptr<remote::MergeTarget>> t = remote::MergeTarget::Open("s3://bkt/tasks");
  ASSERT_TRUE(t.ok()) << t.status();
  StatusOr<convert::MergeResult> r = (*t)->Merge();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIOError) << r.status();
  EXPECT_TRUE(Contains(r.status().message(), "uploading to s3://bkt/tasks: ")) << r.status();
  EXPECT_FALSE(Contains(r.status().message(), dir_ + "/tmp")) << r.status();
  EXPECT_FALSE(HasObject("tasks/manifest.json"));
}

TEST_F(RemoteMergeTest, WhatTheLocationNamesBadlyIsRefusedAtOpen) {
  StatusOr<std::unique_ptr<remote::MergeTarget>> https = remote::MergeTarget::Open("https://host/ds");
  EXPECT_EQ(https.status().code(), StatusCode::kInvalidArgument) << https.status();
  EXPECT_TRUE(Contains(https.status().message(), "only local folders and s3:// prefixes")) << https.status();
  StatusOr<std::unique_ptr<remote::MergeTarget>> none = remote::MergeTarget::Open(dir_ + "/none");
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound) << none.status();
  EXPECT_TRUE(Contains(none.status().message(), dir_ + "/none: no such folder")) << none.status();
  // A prefix without task manifests (a single run's dataset): nothing to
  // merge, said by Merge (MergeTasks's NotFound), naming the prefix.
  StatusOr<std::unique_ptr<remote::MergeTarget>> single = remote::MergeTarget::Open("s3://bkt/ds");
  ASSERT_TRUE(single.ok()) << single.status();
  StatusOr<convert::MergeResult> r = (*single)->Merge();
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << r.status();
  EXPECT_TRUE(Contains(r.status().message(), "s3://bkt/ds")) << r.status();
  EXPECT_FALSE(Contains(r.status().message(), dir_ + "/tmp")) << r.status();
  single->reset();
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

}  // namespace
}  // namespace libshard
