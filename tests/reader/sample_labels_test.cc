// ReadSampleLabels: every sample's label as the loader gives it, read from
// the Example views without decoding an image.
#include "libshard/reader/sample_labels.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "libshard/example/example_builder.h"
#include "libshard/example/image_keys.h"
#include "libshard/reader/batch_loader.h"
#include "libshard/record/record_labels.h"
#include "libshard/record/record_writer.h"
#include "reader_fixtures.h"
#include "testutil.h"

namespace libshard::reader {
namespace {

// Records whose image bytes decode as nothing, labelled by `labels` (a
// record with label -2 has no label feature; -3 a float label).
void WriteUndecodableShard(const std::string& path, const std::vector<int64_t>& labels) {
  auto w = record::RecordWriter::Create(path, {});
  ASSERT_TRUE(w.ok()) << w.status();
  for (int64_t label : labels) {
    example::ExampleBuilder b;
    b.AddBytes(keys::kEncoded, "\xff\xd8\xff not a JPEG at all");
    b.AddBytes(keys::kFormat, "jpeg");
    if (label == -3) b.AddFloat(keys::kLabel, 1.5f);
    if (label >= 0) b.AddInt64(keys::kLabel, label);
    ASSERT_TRUE((*w)->Write(b.Serialize()).ok());
  }
  ASSERT_TRUE((*w)->Close().ok());
}

TEST(SampleLabelsTest, TheLabelsTheLoaderDecodesInSampleOrder) {
  const std::string dir = testing::MakeTempDir();
  testing::FixtureOptions fo;
  fo.format = "png";
  fo.width = fo.height = 8;
  testing::WriteImageShard(dir + "/a-00000.tfrecord", 1500, 7, fo);  // two chunks of a thread's work
  testing::WriteImageShard(dir + "/a-00001.tfrecord", 0, 0, fo);
  testing::WriteImageShard(dir + "/a-00002.tfrecord", 30, 3, fo);
  std::shared_ptr<const Dataset> ds = *Dataset::Open({dir});
  for (int threads : {1, 3}) {
    auto labels = ReadSampleLabels(*ds, threads);
    ASSERT_TRUE(labels.ok()) << labels.status();
    ASSERT_EQ(labels->size(), 1530u);
    EXPECT_EQ((*labels)[0], 7);
    EXPECT_EQ((*labels)[1499], 1506);
    EXPECT_EQ((*labels)[1500], 3);
    EXPECT_EQ((*labels)[1529], 32);
  }
  BatchLoaderOptions o;
  o.batch_size = 1;
  o.height = o.width = 8;
  auto loader = BatchLoader::Create(ds, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  const std::vector<int64_t> labels = *ReadSampleLabels(*ds);
  std::vector<uint8_t> image(8 * 8 * 3);
  for (uint64_t i : {0u, 1u, 999u, 1000u, 1499u, 1500u, 1529u}) {
    int64_t decoded = -5;
    ASSERT_TRUE((*loader)->DecodeSample(i, 0, image.data(), nullptr, &decoded).ok());
    EXPECT_EQ(labels[i], decoded) << i;
  }
}

TEST(SampleLabelsTest, NoImageIsDecoded) {
  const std::string dir = testing::MakeTempDir();
  WriteUndecodableShard(dir + "/bad.tfrecord", {4, 0, -2, 9});
  std::shared_ptr<const Dataset> ds = *Dataset::Open({dir + "/bad.tfrecord"});
  auto labels = ReadSampleLabels(*ds);
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_EQ(*labels, (std::vector<int64_t>{4, 0, -1, 9}));  // no label: -1, as the loader gives
  // The loader, which decodes, refuses the same records.
  BatchLoaderOptions o;
  o.batch_size = 1;
  o.height = o.width = 8;
  auto loader = BatchLoader::Create(ds, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  std::vector<uint8_t> image(8 * 8 * 3);
  int64_t label = 0;
  EXPECT_FALSE((*loader)->DecodeSample(0, 0, image.data(), nullptr, &label).ok());
}

TEST(SampleLabelsTest, ALabelOfAnotherKindIsDataLossNamingTheRecord) {
  const std::string dir = testing::MakeTempDir();
  WriteUndecodableShard(dir + "/a.tfrecord", std::vector<int64_t>(1200, 1));
  WriteUndecodableShard(dir + "/b.tfrecord", {1, 2, -3, -3});
  std::shared_ptr<const Dataset> ds = *Dataset::Open({dir + "/a.tfrecord", dir + "/b.tfrecord"});
  const uint64_t offset = (*ds->OpenShard(1))->entry(2).offset;
  for (int threads : {1, 4}) {
    auto labels = ReadSampleLabels(*ds, threads);
    ASSERT_EQ(labels.status().code(), StatusCode::kDataLoss);
    // The lowest bad sample, whatever thread met it first.
    EXPECT_EQ(labels.status().message(), dir + "/b.tfrecord: record 2 at byte " + std::to_string(offset) +
                                             ": feature \"image/class/label\" is float_list, expected int64_list");
  }
}

TEST(SampleLabelsTest, CorruptRecordIsDataLossNamingTheFile) {
  const std::string dir = testing::MakeTempDir();
  WriteUndecodableShard(dir + "/a.tfrecord", {1, 2, 3});
  std::string bytes = testing::ReadFileOrDie(dir + "/a.tfrecord");
  bytes[bytes.size() - 10] ^= 0x20;  // the last record's data: its CRC no longer matches
  testing::WriteFileOrDie(dir + "/a.tfrecord", bytes);
  std::shared_ptr<const Dataset> ds = *Dataset::Open({dir + "/a.tfrecord"});
  auto labels = ReadSampleLabels(*ds);
  ASSERT_EQ(labels.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(labels.status().message().find(dir + "/a.tfrecord"), std::string::npos) << labels.status();
}

TEST(SampleLabelsTest, KeysSlicesAndMergedMixtures) {
  const std::string dir = testing::MakeTempDir();
  testing::FixtureOptions fo;
  fo.format = "png";
  fo.width = fo.height = 8;
  // A converted folder of one train shard of n PNGs labelled 0..n-1 whose map names labels 0 and 1.
  auto make = [&](const std::string& name, int n, const std::string& zero, const std::string& one) {
    std::filesystem::create_directories(dir + "/" + name);
    testing::WriteImageShard(dir + "/" + name + "/train-00000-of-00001.tfrecord", n, 0, fo);
    const std::string records = "\"" + std::to_string(n) + "\"";
    testing::WriteFileOrDie(
        dir + "/" + name + "/manifest.json",
        R"({"format": "libshard.manifest/1", "complete": true, "labels": [{"label": "0", "name": ")" + zero +
            R"("}, {"label": "1", "name": ")" + one + R"("}], "splits": [{"name": "train", "records": )" + records +
            R"(, "shards": [{"file": "train-00000-of-00001.tfrecord", "records": )" + records + "}]}]}");
  };
  make("a", 10, "cat", "dog");
  make("b", 2, "dog", "emu");
  DatasetOptions o;
  o.split = "train[-30%:]";
  EXPECT_EQ(*ReadSampleLabels(**Dataset::Open({dir + "/a"}, o)), (std::vector<int64_t>{7, 8, 9}));
  // Another label key: each record's "image/height" (8) here.
  o.split = "train[:2]";
  o.keys.label = keys::kHeight;
  EXPECT_EQ(*ReadSampleLabels(**Dataset::Open({dir + "/a"}, o)), (std::vector<int64_t>{8, 8}));
  o = DatasetOptions();
  MixtureOptions mix;
  mix.weights = {1, 1};
  mix.label_maps = LabelMaps::kMerge;  // cat 0, dog 1, emu 2
  auto merged = Dataset::OpenMixture({{dir + "/a"}, {dir + "/b"}}, mix, o);
  ASSERT_TRUE(merged.ok()) << merged.status();
  auto labels = ReadSampleLabels(**merged);
  ASSERT_TRUE(labels.ok()) << labels.status();
  // a's labels 0, 1 (cat, dog), 2..9 outside its map (-1); then b's dog, emu.
  EXPECT_EQ(*labels, (std::vector<int64_t>{0, 1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 2}));
}

// A shard whose manifest lists its labels sidecar: the labels come from that
// file, not the records (the sidecar here says 100 + i, the records i), for a
// slice too; a label key other than the converter's reads the records; a
// damaged, short or missing sidecar is an error naming it, never labels
// that look right.
TEST(SampleLabelsTest, TheSidecarIsReadInsteadOfTheRecords) {
  const std::string dir = testing::MakeTempDir();
  testing::FixtureOptions fo;
  fo.format = "png";
  fo.width = fo.height = 8;
  const std::string shard = dir + "/train-00000-of-00001.tfrecord", sidecar = shard + ".labels";
  testing::WriteImageShard(shard, 10, 0, fo);
  testing::WriteFileOrDie(dir + "/manifest.json",
                          R"({"format": "libshard.manifest/1", "complete": true, "splits": [{"name": "train", )"
                          R"("records": "10", "shards": [{"file": "train-00000-of-00001.tfrecord", "records": "10", )"
                          R"("labels_file": "train-00000-of-00001.tfrecord.labels"}]}]})");
  std::vector<int64_t> side;
  for (int64_t i = 0; i < 10; ++i) side.push_back(100 + i);
  side[4] = -1;
  testing::WriteFileOrDie(sidecar, record::FormatLabels(side));
  EXPECT_EQ(*ReadSampleLabels(**Dataset::Open({dir})), side);
  DatasetOptions o;
  o.split = "train[7:]";
  EXPECT_EQ(*ReadSampleLabels(**Dataset::Open({dir}, o)), (std::vector<int64_t>{107, 108, 109}));
  o.split = "train[:2]";
  o.keys.label = keys::kHeight;
  EXPECT_EQ(*ReadSampleLabels(**Dataset::Open({dir}, o)), (std::vector<int64_t>{8, 8}));
  // The shard named on its own has no manifest entry: its records.
  EXPECT_EQ((*ReadSampleLabels(**Dataset::Open({shard})))[9], 9);

  side.pop_back();
  testing::WriteFileOrDie(sidecar, record::FormatLabels(side));
  auto short_one = ReadSampleLabels(**Dataset::Open({dir}));
  ASSERT_EQ(short_one.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(short_one.status().message(), sidecar + ": 9 labels, its shard " + shard + " has 10 records");
  std::string bytes = record::FormatLabels(std::vector<int64_t>(10, 3));
  bytes[30] ^= 1;  // a label: the CRC no longer matches
  testing::WriteFileOrDie(sidecar, bytes);
  auto damaged = ReadSampleLabels(**Dataset::Open({dir}));
  ASSERT_EQ(damaged.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(damaged.status().message().find(sidecar + ": at byte 34: CRC-32C"), std::string::npos) << damaged.status();
  std::filesystem::remove(sidecar);
  auto missing = ReadSampleLabels(**Dataset::Open({dir}));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(sidecar), std::string::npos) << missing.status();
}

TEST(SampleLabelsTest, AnEmptyDatasetHasNoLabels) {
  const std::string dir = testing::MakeTempDir();
  WriteUndecodableShard(dir + "/a.tfrecord", {});
  auto labels = ReadSampleLabels(**Dataset::Open({dir + "/a.tfrecord"}));
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_TRUE(labels->empty());
}

}  // namespace
}  // namespace libshard::reader
