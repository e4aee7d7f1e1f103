// reader::Dataset over s3:// and https://: the same records as the local
// folder, shards from the verified cache, no requests for cached shards, a
// corrupt object refused by name when read, a cache limit too small for the
// largest shard refused at Open, a name outside the prefix refused before
// any fetch.
#include <gtest/gtest.h>

#include <filesystem>

#include "convert/fixtures.h"
#include "libshard/reader/dataset.h"
#include "libshard/store/s3_store.h"
#include "servers/servers.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;

// A converted dataset in dir/ds (two splits, several shards each).
void ConvertSmallDataset(const std::string& dir) {
  for (int i = 0; i < 24; ++i) {
    const std::string cls = i % 3 == 0 ? "cat" : (i % 3 == 1 ? "dog" : "emu");
    fs::create_directories(dir + "/in/" + cls);
    testing::WriteFileOrDie(dir + "/in/" + cls + "/" + std::to_string(i) + ".png",
                            testing::PngBytes(20 + i, 16 + i % 5, 3, i));
  }
  testing::CommandResult r = testing::RunCommand(std::string(SHARD_BIN) + " convert -q " + dir + "/in -o " + dir +
                                                 "/ds --shard-size 2KiB --val-fraction 0.25 --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

std::vector<std::string> AllRecords(const reader::Dataset& ds) {
  std::vector<std::string> out;
  reader::RecordBuffer buf;
  for (uint64_t i = 0; i < ds.size(); ++i) {
    std::string_view rec;
    Status s = ds.ReadRecord(i, &buf, &rec);
    EXPECT_TRUE(s.ok()) << s;
    out.emplace_back(rec);
  }
  return out;
}

class StoreDatasetTest : public testing::S3ProxyTest {
 protected:
  void SetUp() override {
    S3ProxyTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ConvertSmallDataset(dir_);
    UploadFolder(dir_ + "/ds", "data/ds");
    ReadThroughProxy();
  }
};

TEST_F(StoreDatasetTest, SameRecordsAsTheLocalFolderThroughTheCache) {
  for (const std::string split : {"train", "val"}) {
    reader::DatasetOptions o;
    o.split = split;
    o.cache_dir = dir_ + "/cache";
    StatusOr<std::unique_ptr<reader::Dataset>> local = reader::Dataset::Open({dir_ + "/ds"}, o);
    ASSERT_TRUE(local.ok()) << local.status();
    for (const std::string src : {"s3://bkt/data/ds", "s3://bkt/data/ds/manifest.json"}) {
      StatusOr<std::unique_ptr<reader::Dataset>> remote = reader::Dataset::Open({src}, o);
      ASSERT_TRUE(remote.ok()) << remote.status();
      EXPECT_EQ((*remote)->num_shards(), (*local)->num_shards());
      ASSERT_EQ((*remote)->size(), (*local)->size());
      EXPECT_TRUE(AllRecords(**remote) == AllRecords(**local)) << src;
      EXPECT_EQ((*remote)->labels().size(), 3u);
      EXPECT_EQ((*(*remote)->OpenShard(0))->index_source(), (*(*local)->OpenShard(0))->index_source());
      EXPECT_TRUE((*remote)->shard_path(0).rfind(dir_ + "/cache/s3/", 0) == 0) << (*remote)->shard_path(0);
    }
  }
  // Each shard and index was fetched once (the labels sidecars, which only
  // ReadSampleLabels reads locally, not at all); later opens asked for the
  // manifest only.
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_ + "/ds")) {
    const std::string n = e.path().filename().string();
    files += n.size() > 9 && n.find(".tfrecord") != std::string::npos && e.path().extension() != ".labels";
  }
  EXPECT_EQ(proxy_->Count("GET"), static_cast<int>(files) + 4);  // + 4 manifest reads, no LIST
}

TEST_F(StoreDatasetTest, CorruptObjectIsDataLossNamingIt) {
  // Replace one shard with bytes of the same size but other content.
  std::string victim;
  for (const auto& e : fs::directory_iterator(dir_ + "/ds")) {
    const std::string n = e.path().filename().string();
    if (n.rfind("in-train-00000", 0) == 0 && n.size() > 8 && n.substr(n.size() - 9) == ".tfrecord") victim = n;
  }
  ASSERT_FALSE(victim.empty());
  std::string bytes = testing::ReadFileOrDie(dir_ + "/ds/" + victim);
  bytes[bytes.size() / 2] ^= 0x40;
  store::StoreConfig c = s3_->Config();
  ASSERT_TRUE(store::NewS3Store(c, "bkt", store::NewCurlTransport(c))->Put("data/ds/" + victim, bytes).ok());
  reader::DatasetOptions o;
  o.split = "train";
  o.cache_dir = dir_ + "/cache";
  StatusOr<std::unique_ptr<reader::Dataset>> ds = reader::Dataset::Open({"s3://bkt/data/ds"}, o);
  ASSERT_TRUE(ds.ok()) << ds.status();  // planned from the manifest: nothing downloaded yet
  // The read of a record of that shard downloads it, and fails naming it.
  Status s;
  reader::RecordBuffer buf;
  std::string_view rec;
  for (uint64_t i = 0; i < (*ds)->size() && s.ok(); ++i) s = (*ds)->ReadRecord(i, &buf, &rec);
  ASSERT_EQ(s.code(), StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("s3://bkt/data/ds/" + victim), std::string::npos) << s;
  for (const std::string& f : testing::ListFilesRecursive(dir_ + "/cache")) {
    EXPECT_EQ(f.find(victim + ".libshard-partial"), std::string::npos) << f;
  }
}

TEST_F(StoreDatasetTest, CacheLimitTooSmallIsRefusedAtOpen) {
  reader::DatasetOptions o;
  o.split = "train";
  o.cache_dir = dir_ + "/cache";
  o.cache_limit = 1000;
  StatusOr<std::unique_ptr<reader::Dataset>> ds = reader::Dataset::Open({"s3://bkt/data/ds"}, o);
  ASSERT_EQ(ds.status().code(), StatusCode::kInvalidArgument) << ds.status();
  EXPECT_NE(ds.status().message().find("cache_limit 1000 bytes cannot hold the"), std::string::npos) << ds.status();
  EXPECT_EQ(proxy_->Count("GET"), 1);  // the manifest only
}

TEST_F(StoreDatasetTest, WrongSecretAndMissingManifestAreClear) {
  reader::DatasetOptions o;
  o.cache_dir = dir_ + "/cache";
  ::setenv("AWS_SECRET_ACCESS_KEY", "WRONG", 1);
  Status s = reader::Dataset::Open({"s3://bkt/data/ds"}, o).status();
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s;
  EXPECT_NE(s.message().find("GET s3://bkt/data/ds/manifest.json"), std::string::npos) << s;
  EXPECT_NE(s.message().find("HTTP 403 SignatureDoesNotMatch"), std::string::npos) << s;
  ::setenv("AWS_SECRET_ACCESS_KEY", "S3RVER", 1);
  s = reader::Dataset::Open({"s3://bkt/nothing/here"}, o).status();
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s;
  EXPECT_NE(s.message().find("s3://bkt/nothing/here/manifest.json"), std::string::npos) << s;
}

TEST_F(StoreDatasetTest, ANameOutsideThePrefixIsRefusedBeforeAnyFetch) {
  // A manifest whose index_file leaves the dataset's prefix (another bucket,
  // read with the user's keys) is refused at Open, naming it; only the
  // manifest was fetched.
  std::string text = testing::ReadFileOrDie(dir_ + "/ds/manifest.json");
  const size_t at = text.find("\"index_file\": \"");
  ASSERT_NE(at, std::string::npos) << text;
  const size_t value = at + std::string("\"index_file\": \"").size();
  text.replace(value, text.find('"', value) - value, "../../otherbucket/payroll.csv");
  store::StoreConfig c = s3_->Config();
  ASSERT_TRUE(store::NewS3Store(c, "bkt", store::NewCurlTransport(c))->Put("data/ds/manifest.json", text).ok());
  reader::DatasetOptions o;
  o.split = "*";
  o.cache_dir = dir_ + "/cache";
  StatusOr<std::unique_ptr<reader::Dataset>> ds = reader::Dataset::Open({"s3://bkt/data/ds"}, o);
  ASSERT_EQ(ds.status().code(), StatusCode::kInvalidArgument) << ds.status();
  EXPECT_NE(ds.status().message().find("s3://bkt/data/ds/manifest.json: split \""), std::string::npos) << ds.status();
  EXPECT_NE(ds.status().message().find("lists \"../../otherbucket/payroll.csv\", outside the manifest's folder"),
            std::string::npos)
      << ds.status();
  EXPECT_EQ(proxy_->Count("GET"), 1);  // the manifest only
}

// A sliced split (reader/split_spec.h) reads the local slice's records and
// downloads only the shards the slice reaches.
TEST_F(StoreDatasetTest, ASlicedSplitFetchesOnlyTheShardsItReaches) {
  reader::DatasetOptions o;
  o.split = "train[:3]";  // inside the first shard (2 KiB shards of PNGs over 1 KiB)
  o.cache_dir = dir_ + "/cache";
  StatusOr<std::unique_ptr<reader::Dataset>> local = reader::Dataset::Open({dir_ + "/ds"}, o);
  ASSERT_TRUE(local.ok()) << local.status();
  StatusOr<std::unique_ptr<reader::Dataset>> remote = reader::Dataset::Open({"s3://bkt/data/ds"}, o);
  ASSERT_TRUE(remote.ok()) << remote.status();
  ASSERT_EQ((*remote)->size(), 3u);
  EXPECT_EQ((*remote)->num_shards(), (*local)->num_shards());
  EXPECT_TRUE(AllRecords(**remote) == AllRecords(**local));
  o.split = "train";
  StatusOr<std::unique_ptr<reader::Dataset>> whole = reader::Dataset::Open({dir_ + "/ds"}, o);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_GT((*whole)->num_shards(), (*remote)->num_shards());
  // The manifest, then each reached shard and its index.
  EXPECT_EQ(proxy_->Count("GET"), 1 + 2 * static_cast<int>((*remote)->num_shards()));
}

TEST(StoreHttpsDatasetTest, DatasetOverHttps) {
  const std::string dir = testing::MakeTempDir();
  ConvertSmallDataset(dir);
  std::string why;
  auto nginx = testing::LocalNginx::Start(dir, dir, &why);
  LIBSHARD_REQUIRE_SERVER(nginx, why);
  ::setenv("AWS_CA_BUNDLE", nginx->ca_file().c_str(), 1);
  reader::DatasetOptions o;
  o.split = "val";
  o.cache_dir = dir + "/cache";
  StatusOr<std::unique_ptr<reader::Dataset>> remote = reader::Dataset::Open({nginx->base() + "/ds"}, o);
  ASSERT_TRUE(remote.ok()) << remote.status();
  StatusOr<std::unique_ptr<reader::Dataset>> local = reader::Dataset::Open({dir + "/ds"}, o);
  ASSERT_TRUE(local.ok());
  EXPECT_TRUE(AllRecords(**remote) == AllRecords(**local));
}

}  // namespace
}  // namespace libshard
