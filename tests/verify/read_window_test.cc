// The verifier's pread walk over a plain file (read_window.h): records
// longer than its buffer and across its edges, damage inside a long record,
// a file cut inside one, and the whole-file CRC-32C computed as it reads.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libshard/crc32c.h"
#include "libshard/verify/verifier.h"
#include "testutil.h"
#include "verify_samples.h"

namespace libshard::verify {
namespace {

namespace fs = std::filesystem;
using ::libshard::testing::HasSubstr;
using ::libshard::testing::MakeTempDir;
using ::libshard::testing::ReadFileOrDie;
using ::libshard::testing::WriteFileOrDie;
using test::Sample;
using test::WriteShard;

TEST(ReadWindowTest, RecordsLongerThanTheBufferAndAcrossItsEdges) {
  const std::string dir = MakeTempDir();
  std::vector<Sample> samples;
  for (size_t bytes : {size_t{1000}, size_t{200'000}, size_t{900'000}, size_t{3'000'000}, size_t{70'000}, size_t{5},
                       size_t{260'000}}) {
    Sample s;
    s.encoded = std::string(bytes, static_cast<char>('a' + bytes % 26));
    samples.push_back(s);
  }
  const std::string path = dir + "/big.tfrecord";
  const auto offsets = WriteShard(path, samples);
  const std::string data = ReadFileOrDie(path);
  FileChecks checks;
  checks.checksum = true;
  FileResult r = VerifyFile(path, VerifyOptions(), checks);
  EXPECT_TRUE(r.ok()) << r.faults[0].message;  // .idx compared during the walk too
  EXPECT_EQ(r.records, samples.size());
  EXPECT_EQ(r.bytes, data.size());
  EXPECT_EQ(r.crc32c, std::optional<uint32_t>(crc32c::Value(data.data(), data.size())));

  // A flipped bit inside the 3 MB record: found at its offset, and the
  // checksum still covers the whole file.
  std::string bad = data;
  bad[offsets[3] + 2'000'000] ^= 4;
  WriteFileOrDie(path, bad);
  FileResult d = VerifyFile(path, VerifyOptions(), checks);
  ASSERT_EQ(d.faults.size(), 1u);
  EXPECT_EQ(d.faults[0].kind, FaultKind::kDataCrcMismatch);
  EXPECT_EQ(d.faults[0].offset, offsets[3]);
  EXPECT_EQ(d.faults[0].record, 3u);
  EXPECT_EQ(d.unchecked_bytes, std::optional<uint64_t>(bad.size() - offsets[3]));
  EXPECT_EQ(d.crc32c, std::optional<uint32_t>(crc32c::Value(bad.data(), bad.size())));
  // The same faults as the in-memory walk.
  FileResult m = VerifyBuffer(bad, path, VerifyOptions());
  EXPECT_EQ(m.faults[0].message, d.faults[0].message);

  // Cut inside the big record: truncated_data with the true remainder.
  WriteFileOrDie(path, data.substr(0, offsets[3] + 1'000'000));
  fs::remove(path + ".idx");
  FileResult t = VerifyFile(path, VerifyOptions());
  ASSERT_EQ(t.faults.size(), 1u);
  EXPECT_EQ(t.faults[0].kind, FaultKind::kTruncatedData);
  EXPECT_EQ(t.faults[0].offset, offsets[3]);
  EXPECT_TRUE(HasSubstr(t.faults[0].message, "1000000 remain"));
}

}  // namespace
}  // namespace libshard::verify
