// `shard verify` on detection boxes (example/box_record.h): malformed box
// keys are box_invalid faults and box labels outside the manifest's object
// label map manifest_box_label_out_of_range, each naming file, record and
// byte offset, in the JSON report too.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "box_fixtures.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/record/record_reader.h"
#include "libshard/verify/verifier.h"
#include "testutil.h"

namespace libshard::verify {
namespace {

using testing::BoxSample;
using testing::Contains;

std::vector<BoxSample> Samples() {
  BoxSample good;
  good.boxes = {{10, 8, 30, 28, 1}, {50, 20, 90, 40, 2}};
  BoxSample none;
  none.box_keys = false;
  BoxSample unequal;
  unequal.raw_lists = true;
  unequal.xmin = {0.1f, 0.2f};
  unequal.ymin = {0.1f};
  unequal.xmax = {0.3f};
  unequal.ymax = {0.4f};
  unequal.labels = {1};
  BoxSample reversed = unequal;
  reversed.xmin = {0.5f};
  BoxSample nan = unequal;
  nan.xmin = {std::nanf("")};
  BoxSample outside = unequal;
  outside.xmin = {0.1f};
  outside.ymax = {1.25f};
  BoxSample label3;
  label3.boxes = {{0, 0, 20, 20, 1}, {30, 30, 40, 40, 3}};
  return {good, none, unequal, reversed, nan, outside, label3};
}

uint64_t OffsetOf(const std::string& path, uint64_t record) {
  const std::string data = testing::ReadFileOrDie(path);
  record::RecordReader r(data);
  record::RecordView v;
  for (uint64_t i = 0; i <= record; ++i) EXPECT_TRUE(r.Next(&v).ok());
  return v.offset;
}

TEST(VerifyBoxesTest, MalformedBoxesAreFaultsNamingTheRecordAndOffset) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/b.tfrecord";
  testing::WriteBoxShard(path, Samples());
  const FileResult r = VerifyFile(path, VerifyOptions{});
  ASSERT_EQ(r.faults.size(), 4u);
  const std::vector<std::string> want = {"unequal box lists", "box 0: min > max", "xmin nan is not in [0, 1]",
                                         "ymax 1.25 is not in [0, 1]"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.faults[i].kind, FaultKind::kBoxInvalid);
    EXPECT_EQ(r.faults[i].record, i + 2);
    EXPECT_EQ(r.faults[i].offset, OffsetOf(path, i + 2));
    EXPECT_TRUE(Contains(r.faults[i].message, want[i])) << r.faults[i].message;
  }
  EXPECT_STREQ(FaultKindName(FaultKind::kBoxInvalid), "box_invalid");
  // Without Example checks, no box checks either.
  VerifyOptions framing;
  framing.check_examples = false;
  EXPECT_TRUE(VerifyFile(path, framing).faults.empty());
}

TEST(VerifyBoxesTest, BoxLabelsMustBeInTheObjectLabelMap) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/b.tfrecord";
  std::vector<BoxSample> samples = Samples();
  samples.erase(samples.begin() + 2, samples.begin() + 6);  // good, none, label3
  testing::WriteBoxShard(path, samples);
  RecordRules rules;
  rules.object_labels = {1, 2};
  FileChecks checks;
  checks.rules = &rules;
  const FileResult r = VerifyFile(path, VerifyOptions{}, checks);
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].kind, FaultKind::kManifestBoxLabelOutOfRange);
  EXPECT_EQ(r.faults[0].record, 2u);
  EXPECT_EQ(r.faults[0].offset, OffsetOf(path, 2));
  EXPECT_TRUE(Contains(r.faults[0].message, "box 1: image/object/class/label 3 is not in the object label map"))
      << r.faults[0].message;
  rules.object_labels = {1, 2, 3};
  EXPECT_TRUE(VerifyFile(path, VerifyOptions{}, checks).faults.empty());
}

#ifdef SHARD_BIN
// samples/boxes converted with --coco: verify passes; with a box class taken
// out of the manifest's object label map, its boxes are faults.
TEST(VerifyBoxesTest, AConvertedCocoSetPassesAndItsObjectLabelMapIsChecked) {
  const std::string dir = testing::MakeTempDir();
  const std::string out = dir + "/out";
  const std::string samples = testing::SourceDir() + "/samples/boxes";
  testing::CommandResult r = testing::RunShard("convert " + samples + "/images -o " + out + " --coco " + samples +
                                               "/instances.json --size 64 -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = testing::RunShard("verify --json " + out);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  StatusOr<Manifest> m = manifest::ReadManifest(out + "/manifest.json");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->object_labels_size(), 3);
  m->mutable_object_labels()->RemoveLast();  // label 3
  testing::WriteFileOrDie(out + "/manifest.json", manifest::ToJson(*m));
  r = testing::RunShard("verify --json " + out);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "\"kind\":\"manifest_box_label_out_of_range\"")) << r.out;
  EXPECT_TRUE(Contains(r.out, "image/object/class/label 3 is not in the object label map (2 labels, 1..2)")) << r.out;
}

TEST(VerifyBoxesTest, TheJsonReportListsBoxFaults) {
  const std::string dir = testing::MakeTempDir();
  testing::WriteBoxShard(dir + "/b.tfrecord", Samples());
  const testing::CommandResult r = testing::RunShard("verify --json " + dir + "/b.tfrecord");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "\"kind\":\"box_invalid\"")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"record\":3")) << r.out;
  EXPECT_TRUE(Contains(r.out, "\"offset\":" + std::to_string(OffsetOf(dir + "/b.tfrecord", 3)))) << r.out;
}
#endif

}  // namespace
}  // namespace libshard::verify
