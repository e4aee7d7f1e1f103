// reader::InspectFile (reader/inspect.h): what a TFRecord file holds, as a
// struct, and the document `shard inspect --json` prints, on files written
// here byte by byte: Examples, records that are no Example, damage, options.
#include "libshard/reader/inspect.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "libshard/example/example_builder.h"
#include "libshard/record/record_writer.h"
#include "testutil.h"

namespace libshard {
namespace {

using testing::MakeTempDir;
using testing::ReadFileOrDie;
using testing::WriteFileOrDie;

// Writes `records` as a plain TFRecord file at `path`.
void WriteRecords(const std::string& path, const std::vector<std::string>& records) {
  auto w = record::RecordWriter::Create(path);
  ASSERT_TRUE(w.ok()) << w.status();
  for (const std::string& r : records) ASSERT_TRUE((*w)->Write(r).ok());
  ASSERT_TRUE((*w)->Close().ok());
}

std::string Example(int64_t label, const std::string& name, int floats) {
  example::ExampleBuilder b;
  b.AddInt64("label", label);
  b.AddBytes("name", name);
  std::vector<float> f(static_cast<size_t>(floats), 0.5f);
  if (floats > 0) b.AddFloatList("score", f.data(), f.size());
  return b.Serialize();
}

TEST(InspectTest, CountsKeysAndSummarizesTheFirstRecords) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/a.tfrecord";
  const std::vector<std::string> records = {Example(3, "cat", 2), Example(4, "dog", 0), Example(5, "eel", 10)};
  ASSERT_NO_FATAL_FAILURE(WriteRecords(path, records));
  reader::InspectOptions o;
  o.show = 2;
  StatusOr<reader::Inspection> in = reader::InspectFile(path, o);
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->file, path);
  EXPECT_EQ(in->compression, record::Compression::kNone);
  EXPECT_EQ(in->records, 3u);
  EXPECT_EQ(in->examples, 3u);
  uint64_t framed = 0;
  for (const std::string& r : records) framed += r.size() + 16;
  EXPECT_EQ(in->bytes, framed);
  ASSERT_EQ(in->features.size(), 3u);  // sorted by key
  EXPECT_EQ(in->features[0].key, "label");
  EXPECT_EQ(in->features[1].key, "name");
  EXPECT_EQ(in->features[2].key, "score");
  EXPECT_STREQ(in->features[0].KindName(), "int64_list");
  EXPECT_EQ(in->features[0].records, 3u);
  EXPECT_EQ(in->features[2].records, 2u);  // the dog has no score
  EXPECT_EQ(in->features[2].min_values, 2u);
  EXPECT_EQ(in->features[2].max_values, 10u);
  ASSERT_EQ(in->first_records.size(), 2u);
  const reader::RecordSummary& r1 = in->first_records[1];
  EXPECT_EQ(r1.offset, records[0].size() + 16);
  EXPECT_EQ(r1.size, records[1].size() + 16);
  EXPECT_TRUE(r1.is_example);
  ASSERT_EQ(r1.features.size(), 2u);
  EXPECT_EQ(in->first_records[0].features[0].preview, "3");
  EXPECT_EQ(in->first_records[0].features[2].preview, "0.5, 0.5");
  EXPECT_EQ(r1.features[1].key, "name");
  EXPECT_EQ(r1.features[1].preview, "\"dog\"");
  EXPECT_EQ(r1.features[1].count, 1u);
  EXPECT_TRUE(in->error.empty());
}

TEST(InspectTest, TheJsonIsTheProgramsDocument) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/j.tfrecord";
  const std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
  ASSERT_NO_FATAL_FAILURE(WriteRecords(path, {Example(7, "x", 0), png}));
  StatusOr<reader::Inspection> in = reader::InspectFile(path);
  ASSERT_TRUE(in.ok()) << in.status();
  const std::string first = std::to_string(Example(7, "x", 0).size() + 16);
  EXPECT_EQ(reader::InspectionJson(*in),
            "{\"file\":\"" + path + "\",\"compression\":\"none\",\"records\":2,\"examples\":1,\"bytes\":" +
                std::to_string(std::stoull(first) + 32) +
                ",\"features\":[{\"key\":\"label\",\"kind\":\"int64_list\",\"records\":1,\"min_values\":1,"
                "\"max_values\":1},{\"key\":\"name\",\"kind\":\"bytes_list\",\"records\":1,\"min_values\":1,"
                "\"max_values\":1}],\"first_records\":[{\"index\":0,\"offset\":0,\"size\":" +
                first +
                ",\"example\":true,\"features\":[{\"key\":\"label\",\"kind\":\"int64_list\",\"count\":1,"
                "\"preview\":\"7\"},{\"key\":\"name\",\"kind\":\"bytes_list\",\"count\":1,\"preview\":\"\\\"x\\\"\"}"
                "]},{\"index\":1,\"offset\":" +
                first +
                ",\"size\":32,\"example\":false,\"preview\":\"PNG image, 16 bytes\",\"features\":[]}],"
                "\"error\":null}\n");
}

TEST(InspectTest, DamageStopsTheSummaryAndNamesTheOffset) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/cut.tfrecord";
  const std::vector<std::string> records = {Example(1, "a", 0), Example(2, "b", 0), Example(3, "c", 0)};
  ASSERT_NO_FATAL_FAILURE(WriteRecords(path, records));
  const std::string bytes = ReadFileOrDie(path);
  WriteFileOrDie(path, bytes.substr(0, bytes.size() - 5));
  StatusOr<reader::Inspection> in = reader::InspectFile(path);
  ASSERT_TRUE(in.ok()) << in.status();  // damage is data, not an error
  EXPECT_EQ(in->records, 2u);
  const std::string at = std::to_string(records[0].size() + records[1].size() + 32);
  EXPECT_TRUE(testing::Contains(in->error, path)) << in->error;
  EXPECT_TRUE(testing::Contains(in->error, "truncated record at byte " + at)) << in->error;
  EXPECT_TRUE(testing::Contains(reader::InspectionJson(*in), "\"error\":\"" + path)) << reader::InspectionJson(*in);
  // Names mapped back (a staged object's URL).
  reader::MapText(
      [&](const std::string& s) {
        std::string t = s;
        t.replace(t.find(dir), dir.size(), "s3://bkt");
        return t;
      },
      &*in);
  EXPECT_EQ(in->file, "s3://bkt/cut.tfrecord");
  EXPECT_TRUE(testing::Contains(in->error, "s3://bkt/cut.tfrecord")) << in->error;
}

TEST(InspectTest, UnreadableFilesAndBadOptionsAreErrors) {
  const std::string dir = MakeTempDir();
  StatusOr<reader::Inspection> missing = reader::InspectFile(dir + "/missing.tfrecord");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(testing::Contains(missing.status().message(), dir + "/missing.tfrecord")) << missing.status();
  const std::string path = dir + "/ok.tfrecord";
  ASSERT_NO_FATAL_FAILURE(WriteRecords(path, {Example(1, "a", 0)}));
  reader::InspectOptions o;
  o.show = reader::kMaxInspectShow + 1;
  const Status too_many = reader::InspectFile(path, o).status();
  EXPECT_EQ(too_many.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(too_many.message(), "show: " + std::to_string(reader::kMaxInspectShow + 1) + " is not in 0.." +
                                    std::to_string(reader::kMaxInspectShow));
  o.show = 0;
  StatusOr<reader::Inspection> none = reader::InspectFile(path, o);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->first_records.empty());
  EXPECT_EQ(none->records, 1u);
  o.compression = record::Compression::kGzip;  // a plain file read as GZIP
  StatusOr<reader::Inspection> gz = reader::InspectFile(path, o);
  EXPECT_TRUE(!gz.ok() || !gz->error.empty());
}

}  // namespace
}  // namespace libshard
