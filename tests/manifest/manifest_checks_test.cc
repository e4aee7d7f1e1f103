// manifest/manifest_checks.h: a name a manifest gives stays inside its folder
// and its statistics agree with their sums, and the reader, verify and
// ReadManifest refuse the same manifests (issue 30: item 2, statistics).
#include "libshard/manifest/manifest_checks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include "libshard/manifest/manifest_json.h"
#include "libshard/reader/dataset.h"
#include "libshard/verify/verifier.h"
#include "reader_fixtures.h"
#include "testutil.h"

namespace libshard::manifest {
namespace {

namespace fs = std::filesystem;
using ::libshard::testing::MakeTempDir;
using ::libshard::testing::WriteFileOrDie;

TEST(ManifestChecksTest, NamesInsideTheFolder) {
  for (const char* inside : {"a.tfrecord", "sub/a.tfrecord", "a/../b.tfrecord", "./a.tfrecord", "a//b"}) {
    EXPECT_TRUE(IsInsideFolder(inside)) << inside;
  }
  for (const char* outside :
       {"", "..", "../x.tfrecord", "a/../../x", "/etc/passwd", "//host/x", "./../x", "a/b/../../.."}) {
    EXPECT_FALSE(IsInsideFolder(outside)) << outside;
  }
  EXPECT_FALSE(IsInsideFolder(std::string("ok.tfrecord\0/../../x", 20)));
}

// Statistics of 4 values 1, 2, 3, 6: sum 12, squares 50, mean 3, std sqrt(3.5).
ChannelStats GoodStats() {
  ChannelStats c;
  c.set_count(4);
  c.set_sum(12);
  c.set_sum_squares("50");
  c.set_mean(3);
  c.set_std(std::sqrt(3.5));
  return c;
}

TEST(ManifestChecksTest, StatisticsAgreeWithTheirSums) {
  EXPECT_TRUE(CheckChannelStats(GoodStats()).ok());
  EXPECT_TRUE(CheckChannelStats(ChannelStats()).ok());  // nothing counted
  const auto message = [](void (*edit)(ChannelStats*)) {
    ChannelStats c = GoodStats();
    edit(&c);
    Status s = CheckChannelStats(c);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    return std::string(s.message());
  };
  EXPECT_EQ(message([](ChannelStats* c) { c->set_std(-5); }), "std -5 is negative");
  EXPECT_EQ(message([](ChannelStats* c) { c->set_std(std::numeric_limits<double>::quiet_NaN()); }),
            "std nan is not a finite number");
  EXPECT_EQ(message([](ChannelStats* c) { c->set_mean(std::numeric_limits<double>::infinity()); }),
            "mean inf is not a finite number");
  EXPECT_EQ(message([](ChannelStats* c) { c->set_mean(4); }), "mean 4 disagrees with sum / count = 3");
  EXPECT_EQ(message([](ChannelStats* c) { c->set_std(1); }),
            "std 1 disagrees with the sums (sum, sum_squares, count) = 1.870828693");
  EXPECT_EQ(message([](ChannelStats* c) { c->set_sum_squares("5x"); }), "sum_squares \"5x\" is not a decimal number");
  EXPECT_EQ(message([](ChannelStats* c) { c->set_sum_squares("10"); }),
            "sum_squares 10 is below sum^2 / count (no channel has those sums)");
  EXPECT_EQ(message([](ChannelStats* c) { c->set_count(0); }),
            "mean 3 and std 1.870828693 over a count of 0 values (both must be 0)");
}

// A folder `ds` whose manifest lists one shard of 2 records as `listed`,
// written at ds/`listed` (or at `written_at`, a path), with `stats` as its
// split's channel statistics.
class ManifestContentsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir(); }

  std::string Write(const std::string& listed, const ChannelStats& stats, const std::string& index = "",
                    std::string written_at = "") {
    if (written_at.empty()) written_at = dir_ + "/ds/" + listed;
    fs::create_directories(dir_ + "/ds");
    fs::create_directories(fs::path(written_at).parent_path());
    ::libshard::testing::WriteImageShard(written_at, 2, 0);
    Manifest m;
    m.set_format(kFormat);
    m.set_complete(true);
    m.mutable_stats()->set_converted(2);
    SplitEntry* split = m.add_splits();
    split->set_name("train");
    split->set_records(2);
    *split->mutable_stats()->add_channels() = stats;
    ShardEntry* shard = split->add_shards();
    shard->set_file(listed);
    shard->set_index_file(index);
    shard->set_records(2);
    shard->set_bytes(fs::file_size(written_at));
    const std::string path = dir_ + "/ds/manifest.json";
    WriteFileOrDie(path, ToJson(m));
    return path;
  }

  // ReadManifest and the reader (by the manifest, by its folder) refuse it
  // with the same message; verify faults it.
  void ExpectRefusedByEveryReader(const std::string& path, const std::string& what, const std::string& verify_what) {
    StatusOr<Manifest> m = ReadManifest(path);
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument) << m.status();
    EXPECT_EQ(m.status().message(), path + ": " + what);
    for (const std::string& src : {path, dir_ + "/ds"}) {
      StatusOr<std::unique_ptr<reader::Dataset>> ds = reader::Dataset::Open({src});
      EXPECT_EQ(ds.status().code(), StatusCode::kInvalidArgument) << ds.status();
      EXPECT_EQ(ds.status().message(), path + ": " + what);
    }
    verify::SetResult set = verify::VerifySet({}, {path}, verify::VerifyOptions());
    ASSERT_EQ(set.manifests.size(), 1u);
    bool named = false;
    for (const verify::SetFault& f : set.manifests[0].faults) {
      named |= f.kind == verify::SetFaultKind::kManifestInvalid && f.message == verify_what;
    }
    EXPECT_TRUE(named) << verify_what;
  }

  std::string dir_;
};

TEST_F(ManifestContentsTest, AnHonestManifestIsRead) {
  const std::string path = Write("sub/x.tfrecord", GoodStats());
  StatusOr<std::unique_ptr<reader::Dataset>> ds = reader::Dataset::Open({path});
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ((*ds)->size(), 2u);
}

TEST_F(ManifestContentsTest, AShardOutsideTheFolderIsNotRead) {
  // Both shards exist and are valid: only the names are wrong.
  const std::string elsewhere = dir_ + "/other/x.tfrecord";
  for (const std::string& file : {std::string("../other/x.tfrecord"), elsewhere}) {
    SCOPED_TRACE(file);
    const std::string path = Write(file, GoodStats(), "", elsewhere);
    ExpectRefusedByEveryReader(path, "split \"train\" lists \"" + file + "\", outside the manifest's folder",
                               "split \"train\" lists " + file + ", outside the manifest's folder (not read)");
  }
  const std::string path = Write("x.tfrecord", GoodStats(), "../../payroll.csv");
  ExpectRefusedByEveryReader(path, "split \"train\" lists \"../../payroll.csv\", outside the manifest's folder",
                             "split \"train\" lists ../../payroll.csv, outside the manifest's folder (not read)");
}

TEST_F(ManifestContentsTest, StatisticsThatLieAreRefused) {
  ChannelStats negative = GoodStats();
  negative.set_std(-5);
  ExpectRefusedByEveryReader(Write("x.tfrecord", negative), "split \"train\" channel 0: std -5 is negative",
                             "split \"train\" channel 0: std -5 is negative");
  ChannelStats nan = GoodStats();
  nan.set_std(std::numeric_limits<double>::quiet_NaN());
  ExpectRefusedByEveryReader(Write("x.tfrecord", nan), "split \"train\" channel 0: std nan is not a finite number",
                             "split \"train\" channel 0: std nan is not a finite number");
  ChannelStats mean = GoodStats();
  mean.set_mean(100);
  ExpectRefusedByEveryReader(Write("x.tfrecord", mean),
                             "split \"train\" channel 0: mean 100 disagrees with sum / count = 3",
                             "split \"train\" channel 0: mean 100 disagrees with sum / count = 3");
}

}  // namespace
}  // namespace libshard::manifest
