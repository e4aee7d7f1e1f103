// The uploader of a conversion into object storage (remote/uploader.h), on
// s3rver: the commit point is written only while the objects are still the
// ones this run uploaded (a bucket has no lock: two runs into one prefix).
#include "libshard/remote/uploader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "libshard/io/open_file.h"
#include "libshard/store/s3_store.h"
#include "remote/remote_fixtures.h"
#include "servers/servers.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;

class RemoteUploadTest : public testing::S3ProxyTest {
 protected:
  void SetUp() override {
    S3ProxyTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_NO_FATAL_FAILURE(testing::ConvertSmallDataset(dir_));
    for (const auto& e : fs::directory_iterator(dir_ + "/ds")) {
      const std::string name = e.path().filename().string();
      if (name.size() > 9 && name.compare(name.size() - 9, 9, ".tfrecord") == 0) shards_.push_back(name);
    }
    std::sort(shards_.begin(), shards_.end());
    ASSERT_GE(shards_.size(), 2u);
    const store::StoreConfig c = s3_->Config();
    store_ = store::NewS3Store(c, "bkt", store::NewCurlTransport(c));
    ReadThroughProxy();
  }
  void TearDown() override {
    ::unsetenv("AWS_ENDPOINT_URL");
    ::unsetenv("AWS_ACCESS_KEY_ID");
    ::unsetenv("AWS_SECRET_ACCESS_KEY");
  }

  std::vector<std::string> shards_;
  std::unique_ptr<store::ObjectStore> store_;
};

TEST_F(RemoteUploadTest, AnObjectRewrittenByAnotherRunStopsTheCommitNamingIt) {
  fs::copy(dir_ + "/ds", dir_ + "/staging", fs::copy_options::recursive);
  auto u = remote::ShardUploader::Start("s3://bkt/p", dir_ + "/staging");
  ASSERT_TRUE(u.ok()) << u.status();
  ASSERT_TRUE((*u)->Finish(/*commit=*/false).ok());  // the shards are up, the commit point is not
  ASSERT_TRUE(store_->Head("p/" + shards_[1]).ok());
  ASSERT_FALSE(store_->Head("p/manifest.json").ok());
  // Another run (other options) puts its own shard under the same name.
  ASSERT_TRUE(store_->Put("p/" + shards_[1], "another run's shard").ok());
  Status s = (*u)->Finish(/*commit=*/true);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("1 object(s) changed since this run uploaded them"), std::string::npos) << s;
  EXPECT_NE(s.message().find("s3://bkt/p/" + shards_[1] + " (now 19 bytes, no crc32c metadata; this run: "),
            std::string::npos)
      << s;
  EXPECT_FALSE(store_->Head("p/manifest.json").ok());  // nothing committed
}

TEST_F(RemoteUploadTest, ObjectsStillThisRunsAreCommitted) {
  fs::copy(dir_ + "/ds", dir_ + "/staging", fs::copy_options::recursive);
  auto u = remote::ShardUploader::Start("s3://bkt/q", dir_ + "/staging");
  ASSERT_TRUE(u.ok()) << u.status();
  Status s = (*u)->Finish(/*commit=*/true);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(store_->Head("q/manifest.json").ok());
  for (const std::string& shard : shards_) EXPECT_FALSE(fs::exists(dir_ + "/staging/" + shard)) << shard;
}

// A damaged object whose CRC metadata is intact was kept by every rerun
// (resume trusted x-amz-meta-crc32c), and verify then failed for ever:
// --recheck reads the kept objects back and redoes the damaged one.
TEST_F(RemoteUploadTest, RecheckRedoesAnObjectDamagedUnderIntactMetadata) {
  const std::string convert =
      "convert -q " + dir_ + "/in -o s3://bkt/r --shard-size 2KiB --staging " + dir_ + "/staging";
  testing::CommandResult r = testing::RunShard(convert);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(testing::RunShard("verify -q s3://bkt/r").exit_code, 0);
  // The object's bytes change; its metadata still says the entry's CRC-32C.
  const std::string local = dir_ + "/ds/" + shards_[0];
  StatusOr<uint32_t> crc = io::Crc32cOfFile(local);
  ASSERT_TRUE(crc.ok()) << crc.status();
  std::string bytes = testing::ReadFileOrDie(local);
  bytes[bytes.size() / 2] ^= 0x01;
  testing::WriteFileOrDie(dir_ + "/damaged", bytes);
  store::PutOptions o;
  o.metadata["crc32c"] = remote::CrcMetadata(*crc);
  ASSERT_TRUE(store_->PutFile("r/" + shards_[0], dir_ + "/damaged", o).ok());

  const std::string counted = "convert " + dir_ + "/in -o s3://bkt/r --shard-size 2KiB --staging " + dir_ + "/staging";
  r = testing::RunShard(counted);  // trusts the metadata: kept
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("(0 shards written)"), std::string::npos) << r.err;
  r = testing::RunShard("verify s3://bkt/r");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("rerun it with --recheck"), std::string::npos) << r.err;

  r = testing::RunShard(counted + " --recheck");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("(1 shards written)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("read back by --recheck"), std::string::npos) << r.err;
  EXPECT_EQ(testing::RunShard("verify -q s3://bkt/r").exit_code, 0);
}

// x-amz-meta-crc32c is the server's text: only 8 hex digits are a CRC to
// compare (in the manifest's lower case); anything else is as no metadata,
// so the object is read back to be checked instead of compared as text.
TEST(MetadataChecksumTest, OnlyEightHexDigitsAreACrc) {
  auto of = [](const char* value) {
    store::ObjectInfo info;
    if (value != nullptr) info.metadata[remote::kCrcMetadataKey] = value;
    return remote::MetadataChecksum(info);
  };
  EXPECT_EQ(of(remote::CrcMetadata(0x0badf00d).c_str()), std::optional<std::string>("crc32c:0badf00d"));
  EXPECT_EQ(of("0BADF00D"), std::optional<std::string>("crc32c:0badf00d"));
  EXPECT_EQ(of(nullptr), std::nullopt);
  for (const char* bad : {"", "0badf00", "0badf00d0", "0badf00g", "crc32c:0badf00d", " 0badf00d", "0badf00d\n"}) {
    EXPECT_EQ(of(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace libshard
