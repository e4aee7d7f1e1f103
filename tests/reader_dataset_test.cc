#include "libshard/reader/dataset.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "reader_fixtures.h"
#include "testutil.h"

namespace libshard::reader {
namespace {

TEST(Dataset, OpensListGlobAndFolderInOrder) {
  const std::string dir = testing::MakeTempDir();
  auto a = testing::WritePlainShard(dir + "/a-00000.tfrecord", 3);
  auto b = testing::WritePlainShard(dir + "/a-00001.tfrecord", 0);
  auto c = testing::WritePlainShard(dir + "/a-00002.tfrecord", 4);
  for (const std::vector<std::string>& src :
       {std::vector<std::string>{dir + "/a-00000.tfrecord", dir + "/a-00001.tfrecord", dir + "/a-00002.tfrecord"},
        std::vector<std::string>{dir + "/a-*.tfrecord"}, std::vector<std::string>{dir}}) {
    auto ds = Dataset::Open(src);
    ASSERT_TRUE(ds.ok()) << ds.status();
    ASSERT_EQ((*ds)->size(), 7u);
    ASSERT_EQ((*ds)->num_shards(), 3u);
    RecordBuffer buf;
    std::string_view v;
    for (uint64_t i = 0; i < 7; ++i) {
      ASSERT_TRUE((*ds)->ReadRecord(i, &buf, &v).ok());
      EXPECT_EQ(v, i < 3 ? a[i] : c[i - 3]);
    }
    EXPECT_EQ((*ds)->Locate(3).shard, 2u);
    EXPECT_EQ((*ds)->ReadRecord(7, &buf, &v).code(), StatusCode::kOutOfRange);
  }
}

// The Python module maps NotFound to FileNotFoundError (docs/reader.md).
TEST(Dataset, AMissingSourceIsNotFoundNamingIt) {
  const std::string dir = testing::MakeTempDir();
  testing::WritePlainShard(dir + "/a-00000.tfrecord", 1);
  std::filesystem::create_directories(dir + "/empty");
  const std::pair<std::string, std::string> cases[] = {
      {dir + "/missing.tfrecord", "NOT_FOUND: " + dir + "/missing.tfrecord: no such file or folder"},
      {dir + "/missing", "NOT_FOUND: " + dir + "/missing: no such file or folder"},
      {dir + "/nothing-*.tfrecord", "NOT_FOUND: " + dir + "/nothing-*.tfrecord: no file matches"},
  };
  for (const auto& [src, want] : cases) {
    EXPECT_EQ(Dataset::Open({dir + "/a-00000.tfrecord", src}).status().ToString(), want);
  }
  auto manifest = Dataset::Open({dir + "/missing/manifest.json"});
  EXPECT_EQ(manifest.status().code(), StatusCode::kNotFound) << manifest.status();
  EXPECT_NE(manifest.status().message().find(dir + "/missing/manifest.json"), std::string::npos);
  // There, but holding nothing to read: a bad argument, not a missing one.
  EXPECT_EQ(Dataset::Open({dir + "/empty"}).status().ToString(),
            "INVALID_ARGUMENT: " + dir + "/empty: no TFRecord files in this folder");
}

// A manifest as protobuf's JSON printer writes it (64-bit counts as strings).
std::string Manifest(const std::string& format, const std::string& records_b) {
  return R"({"format": ")" + format + R"(", "labels": [{"label": "0", "name": "cat"}, {"label": "1", "name": "dog"}],
  "splits": [
   {"name": "train", "records": "5", "shards": [
     {"file": "train-00000-of-00002.tfrecord", "records": "2"},
     {"file": "sub/train-00001-of-00002.tfrecord", "records": ")" + records_b + R"("}]},
   {"name": "val", "records": "1", "shards": [{"file": "val-00000-of-00001.tfrecord", "records": "1"}]}],
  "some_future_field": 1})";
}

TEST(Dataset, OpensTheConvertersManifest) {
  const std::string dir = testing::MakeTempDir();
  std::filesystem::create_directories(dir + "/sub");
  testing::WritePlainShard(dir + "/train-00000-of-00002.tfrecord", 2);
  testing::WritePlainShard(dir + "/sub/train-00001-of-00002.tfrecord", 3);
  testing::WritePlainShard(dir + "/val-00000-of-00001.tfrecord", 1);
  testing::WriteFileOrDie(dir + "/manifest.json", Manifest("libshard.manifest/1", "3"));
  DatasetOptions o;
  o.split = "train";
  auto ds = Dataset::Open({dir + "/manifest.json"}, o);
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ((*ds)->size(), 5u);
  ASSERT_EQ((*ds)->labels().size(), 2u);
  EXPECT_EQ((*ds)->labels()[1].name, "dog");
  o.split = "*";
  EXPECT_EQ((*Dataset::Open({dir + "/manifest.json"}, o))->size(), 6u);
  o.split = "";  // two splits: which one?
  auto none = Dataset::Open({dir + "/manifest.json"}, o);
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(none.status().message(),
            dir + "/manifest.json: the manifest has splits train, val; pick one (split=NAME, or \"*\" for all)");
  o.split = "test";
  auto unknown = Dataset::Open({dir + "/manifest.json"}, o);
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(),
            dir + "/manifest.json: no split named \"test\" (the manifest has train, val)");
  // The converter's output folder means its manifest, split and labels included.
  o.split = "val";
  auto folder = Dataset::Open({dir}, o);
  ASSERT_TRUE(folder.ok()) << folder.status();
  EXPECT_EQ((*folder)->size(), 1u);
  EXPECT_EQ((*folder)->shard(0).path(), dir + "/val-00000-of-00001.tfrecord");
  EXPECT_EQ((*folder)->labels().size(), 2u);
  // A split means nothing to plain shards: refused rather than ignored.
  auto plain = Dataset::Open({dir + "/val-00000-of-00001.tfrecord"}, o);
  EXPECT_EQ(plain.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(plain.status().message(),
            "split \"val\" needs a manifest.json (or a folder holding one); the sources are plain shards");

  o.split = "train";
  testing::WriteFileOrDie(dir + "/manifest.json", Manifest("libshard.manifest/2", "3"));
  auto bad = Dataset::Open({dir + "/manifest.json"}, o);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("libshard.manifest/2"), std::string::npos);
  testing::WriteFileOrDie(dir + "/manifest.json", Manifest("libshard.manifest/1", "4"));
  bad = Dataset::Open({dir + "/manifest.json"}, o);
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(bad.status().message().find("sub/train-00001-of-00002.tfrecord"), std::string::npos) << bad.status();
  testing::WriteFileOrDie(dir + "/manifest.json", "{not json");
  EXPECT_EQ(Dataset::Open({dir + "/manifest.json"}, o).status().code(), StatusCode::kInvalidArgument);
}

TEST(Dataset, HasFeatureComesFromTheManifestsSchema) {
  const std::string dir = testing::MakeTempDir();
  testing::WritePlainShard(dir + "/train-00000-of-00001.tfrecord", 2);
  testing::WriteFileOrDie(dir + "/manifest.json", R"({"format": "libshard.manifest/1",
    "schema": [{"key": "image/encoded", "kind": "bytes", "required": true},
               {"key": "image/segmentation/class/encoded", "kind": "bytes", "required": false}],
    "splits": [{"name": "train", "records": "2", "shards": [
      {"file": "train-00000-of-00001.tfrecord", "records": "2"}]}]})");
  auto ds = Dataset::Open({dir + "/manifest.json"});
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ((*ds)->HasFeature("image/encoded"), std::optional<bool>(true));
  EXPECT_EQ((*ds)->HasFeature("image/segmentation/class/encoded"), std::optional<bool>(false));
  auto files = Dataset::Open({dir + "/train-00000-of-00001.tfrecord"});
  ASSERT_TRUE(files.ok());
  EXPECT_EQ((*files)->HasFeature("image/encoded"), std::nullopt);  // no manifest: unknown
}

}  // namespace
}  // namespace libshard::reader
