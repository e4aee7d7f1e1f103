// Tests of the typed verify call (verify_report.h): a request in, the report
// out, and the one JSON document `shard verify --json` prints, on real
// files: a damaged shard, an incomplete numbered set, a usage error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "libshard/verify/verify_report.h"
#include "testutil.h"
#include "verify_samples.h"

namespace libshard::verify {
namespace {

using ::libshard::testing::HasSubstr;
using ::libshard::testing::MakeTempDir;
using ::libshard::testing::ReadFileOrDie;
using ::libshard::testing::WriteFileOrDie;

TEST(VerifyReportTest, NothingToCheckIsAUsageError) {
  StatusOr<VerifyReport> r = Verify(VerifyRequest());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(HasSubstr(r.status().message(), "nothing to check"));
  VerifyRequest bad;
  bad.paths = {MakeTempDir() + "/missing.tfrecord"};
  r = Verify(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(HasSubstr(r.status().message(), "missing.tfrecord"));
  bad.options.threads = 999;
  EXPECT_EQ(Verify(bad).status().code(), StatusCode::kInvalidArgument);
}

// One shard of a two-shard set, its second record's payload damaged: a
// data_crc_mismatch in the file and a set_incomplete for the missing one.
TEST(VerifyReportTest, DamagedSetReportAndItsJson) {
  const std::string dir = MakeTempDir();
  const std::string shard = dir + "/a-00000-of-00002.tfrecord";
  const std::vector<uint64_t> offsets =
      test::WriteShard(shard, {test::JpegSample(1, 0), test::JpegSample(2, 1), test::JpegSample(3, 0)});
  std::string data = ReadFileOrDie(shard);
  data[offsets[1] + record::kHeaderSize + 3] ^= 0x40;
  WriteFileOrDie(shard, data);

  VerifyRequest request;
  request.paths = {dir};
  StatusOr<VerifyReport> r = Verify(request);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->ok());
  ASSERT_EQ(r->set.files.size(), 1u);
  const FileResult& f = r->set.files[0];
  EXPECT_EQ(f.path, shard);
  EXPECT_EQ(f.records, 1u);
  ASSERT_EQ(f.faults.size(), 1u);
  EXPECT_EQ(f.faults[0].kind, FaultKind::kDataCrcMismatch);
  EXPECT_EQ(f.faults[0].offset, offsets[1]);
  EXPECT_EQ(f.faults[0].record, 1u);
  EXPECT_TRUE(r->set.no_manifest);
  ASSERT_EQ(r->set.name_set_faults.size(), 1u);
  EXPECT_EQ(r->set.name_set_faults[0].kind, SetFaultKind::kSetIncomplete);
  EXPECT_EQ(r->summary.files, 1u);
  EXPECT_EQ(r->summary.files_with_faults, 1u);
  EXPECT_EQ(r->summary.records, 1u);
  EXPECT_EQ(r->summary.bytes, offsets[1]);
  EXPECT_EQ(r->summary.unchecked_bytes, data.size() - offsets[1]);
  EXPECT_EQ(r->summary.faults, 2u);
  EXPECT_FALSE(r->summary.unreadable);

  r->summary.seconds = 0;  // the one field that differs from run to run
  const std::string want =
      "{\"files\":[{\"path\":\"" + shard +
      "\",\"compression\":\"none\",\"records\":1,\"bytes\":" + std::to_string(offsets[1]) +
      ",\"unchecked_bytes\":" + std::to_string(data.size() - offsets[1]) +
      ",\"faults_omitted\":0,\"faults\":[{\"offset\":" + std::to_string(offsets[1]) +
      ",\"record\":1,\"kind\":\"data_crc_mismatch\",\"message\":\"" + f.faults[0].message +
      "\"}]}],\"manifests\":[],\"summary\":{\"files\":1,\"files_with_faults\":1,\"records\":1,\"bytes\":" +
      std::to_string(offsets[1]) + ",\"unchecked_bytes\":" + std::to_string(data.size() - offsets[1]) +
      ",\"faults\":2,\"seconds\":0,\"mb_per_s\":0},\"no_manifest\":true,\"sets\":[{\"path\":\"" +
      r->set.name_set_faults[0].path + "\",\"kind\":\"set_incomplete\",\"message\":\"" +
      r->set.name_set_faults[0].message + "\"}]}\n\n";
  EXPECT_EQ(VerifyReportJson(*r), want);

  // A staged dataset's folder named by its URL everywhere.
  MapText(
      [&](const std::string& s) {
        std::string out = s;
        for (size_t at; (at = out.find(dir)) != std::string::npos;) out.replace(at, dir.size(), "s3://b/ds");
        return out;
      },
      &*r);
  EXPECT_EQ(r->set.files[0].path, "s3://b/ds/a-00000-of-00002.tfrecord");
  EXPECT_EQ(VerifyReportJson(*r).find(dir), std::string::npos);
}

}  // namespace
}  // namespace libshard::verify
