// What `shard convert` stores: the shard plan (--records-per-shard an upper
// bound on inputs planned; a shard whose inputs were all rejected is written
// empty and verifies), labels (--label-offset, recorded and part of the
// plan), resizing (shorter-side keeps the aspect ratio; letterbox pads with
// --fill) and masks (classes, the pixel histogram, --mask-ignore-index).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "convert/fixtures.h"
#include "convert_cli_fixtures.h"
#include "libshard/image/decode.h"
#include "libshard/manifest/manifest_json.h"
#include "tensorflow/core/example/example.pb.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::JpegBytes;
using testing::MakeSmallTree;
using testing::MakeTempDir;
using testing::PngBytes;
using testing::ReadFileOrDie;
using testing::ReadRecords;
using testing::RunShard;
using testing::WriteTreeFile;
using Result = testing::CommandResult;

// A shard whose planned inputs were all rejected is written with no records
// and listed so in manifest.json: `shard verify OUT` accepts it (a file that
// is empty without a manifest saying so is still an empty_file fault).
TEST(ConvertRecordsCliTest, AShardOfOnlyRejectsVerifies) {
  const std::string dir = MakeTempDir();
  WriteTreeFile(dir, "in/train/cat/a.png", PngBytes(6, 6, 3, 1));
  WriteTreeFile(dir, "in/val/cat/b.png", "not an image");
  Result r = RunShard("convert -q " + dir + "/in -o " + dir + "/out");
  ASSERT_EQ(r.exit_code, 3) << r.err;
  const std::string empty = dir + "/out/in-val-00000-of-00001.tfrecord";
  ASSERT_TRUE(fs::exists(empty));
  ASSERT_EQ(fs::file_size(empty), 0u);
  Result v = RunShard("verify " + dir + "/out");
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  v = RunShard("verify --no-manifest " + empty);
  EXPECT_EQ(v.exit_code, 1) << v.out << v.err;
  EXPECT_TRUE(Contains(v.out + v.err, "empty_file")) << v.out << v.err;
}

TEST(ConvertRecordsCliTest, MaskClassesHistogramIgnoreIndexAndFill) {
  const std::string dir = MakeTempDir();
  testing::MakeColourMaskSet(dir, 4, 8, 5);
  // 8x5 letterboxed into 10x10: the image is 10x6 (rounded), padded with
  // --fill above and below; the mask is padded with --mask-ignore-index.
  Result r = RunShard("convert -q " + dir + "/in -o " + dir + "/out --masks " + dir + "/masks --mask-labels " + dir +
                      "/class_dict.csv --size 10 --resize-mode letterbox --format png --mask-ignore-index 200 "
                      "--fill 1,2,3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->options().mask_ignore_index(), 200);
  EXPECT_EQ(m->options().fill(), "1,2,3,255");
  ASSERT_EQ(m->mask_classes_size(), 3);
  EXPECT_EQ(m->mask_classes(1).name(), "Road");
  EXPECT_EQ(m->mask_classes(1).g(), 64u);
  const std::string json = ReadFileOrDie(dir + "/out/manifest.json");
  EXPECT_TRUE(Contains(json, "\"mask_classes\": [")) << json;
  EXPECT_TRUE(Contains(json, "\"mask_pixels\": [")) << json;
  std::map<int64_t, uint64_t> stated;
  uint64_t total = 0;
  for (const auto& l : m->stats().mask_pixels()) {
    stated[l.label()] = l.count();
    total += l.count();
  }
  EXPECT_EQ(stated, testing::CountOutputMaskPixels(dir + "/out"));
  EXPECT_EQ(total, 4u * 10 * 10);
  EXPECT_GT(stated[200], 0u);  // the padding
  EXPECT_EQ(stated.size(), 4u);
  // The image's padding has the --fill colour.
  for (const std::string& rec : ReadRecords(dir + "/out/in-train-00000-of-00001.tfrecord")) {
    tensorflow::Example ex;
    ASSERT_TRUE(ex.ParseFromString(rec));
    StatusOr<image::Image> img = image::DecodeImage(ex.features().feature().at("image/encoded").bytes_list().value(0));
    ASSERT_TRUE(img.ok()) << img.status();
    EXPECT_EQ(img->row(0)[0], 1);
    EXPECT_EQ(img->row(0)[1], 2);
    EXPECT_EQ(img->row(0)[2], 3);
  }
  // Bad values are usage errors.
  r = RunShard("convert " + dir + "/in -o " + dir + "/bad --fill 1,2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "--fill: expected R,G,B or R,G,B,A with values 0..255, got '1,2'")) << r.err;
  r = RunShard("convert " + dir + "/in -o " + dir + "/bad --fill 1,2,300");
  EXPECT_EQ(r.exit_code, 2);
  r = RunShard("convert " + dir + "/in -o " + dir + "/bad --mask-ignore-index 256");
  EXPECT_EQ(r.exit_code, 2);
  r = RunShard("convert " + dir + "/in -o " + dir + "/bad --masks " + dir + "/masks --mask-labels " + dir +
               "/class_dict.csv --mask-ignore-index 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "mask ignore index 1 is the index of class 'Road' in " + dir +
                                  "/class_dict.csv (3 classes); choose an index from 3 to 255"))
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/bad"));
}

// TF's build_imagenet_data stores labels 1-based (0 = background).
TEST(ConvertRecordsCliTest, LabelOffsetShiftsLabelsAndIsRecorded) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  Result r = RunShard("convert -q " + dir + "/in -o " + dir + "/zero --no-shuffle");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunShard("convert -q " + dir + "/in -o " + dir + "/one --no-shuffle --label-offset 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/one/manifest.json");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->options().label_offset(), 1);
  ASSERT_EQ(m->labels_size(), 2);
  EXPECT_EQ(m->labels(0).label(), 1);
  EXPECT_EQ(m->labels(0).name(), "cat");
  EXPECT_EQ(m->labels(1).label(), 2);
  std::vector<int64_t> labels;
  for (const std::string& rec : ReadRecords(dir + "/one/in-train-00000-of-00001.tfrecord")) {
    tensorflow::Example pb;
    ASSERT_TRUE(pb.ParseFromString(rec));
    const auto& f = pb.features().feature();
    labels.push_back(f.at("image/class/label").int64_list().value(0));
    EXPECT_EQ(f.at("image/class/text").bytes_list().value(0), labels.back() == 1 ? "cat" : "dog");
  }
  EXPECT_EQ(labels, (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(RunShard("verify " + dir + "/one").exit_code, 0);
  // The offset is part of the plan: rerunning "zero" with an offset redoes its shards.
  const std::string before = ReadFileOrDie(dir + "/zero/in-train-00000-of-00001.tfrecord");
  r = RunShard("convert " + dir + "/in -o " + dir + "/zero --no-shuffle --label-offset 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "4 converted in this run (1 shards written);")) << r.err;
  EXPECT_NE(ReadFileOrDie(dir + "/zero/in-train-00000-of-00001.tfrecord"), before);
  EXPECT_EQ(ReadFileOrDie(dir + "/zero/in-train-00000-of-00001.tfrecord"),
            ReadFileOrDie(dir + "/one/in-train-00000-of-00001.tfrecord"));
}

// Issue 23 item 14: --records-per-shard says what it guarantees (inputs
// planned, at most N, spread evenly; a reject leaves a shard short), which
// the plan and the manifest bear out: 25 inputs at 10 are 3 shards of 9, 8
// and 8 planned, a reject making one record fewer.
TEST(ConvertRecordsCliTest, RecordsPerShardIsAnUpperBoundOnPlannedInputs) {
  Result help = RunShard("convert --help");
  EXPECT_TRUE(Contains(help.out, "at most N inputs planned per shard")) << help.out;
  EXPECT_TRUE(Contains(help.out, "a rejected input leaves its shard one record short")) << help.out;
  const std::string dir = MakeTempDir();
  for (int i = 0; i < 24; ++i) WriteTreeFile(dir, "in/c/" + std::to_string(i) + ".png", PngBytes(4, 4, 3, i));
  WriteTreeFile(dir, "in/c/bad.png", "not an image");
  Result r = RunShard("convert -q " + dir + "/in -o " + dir + "/out --records-per-shard 10");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->splits(0).shards_size(), 3);
  uint64_t planned = 0, records = 0;
  for (const ShardEntry& e : m->splits(0).shards()) {
    EXPECT_LE(e.planned(), 10u);
    EXPECT_GE(e.planned(), 8u);
    planned += e.planned();
    records += e.records();
  }
  EXPECT_EQ(planned, 25u);
  EXPECT_EQ(records, 24u);
}

// Issue 23 item 15: --resize-mode shorter-side --size N stores each image
// with its shorter side N and its aspect ratio (recorded in the manifest).
TEST(ConvertRecordsCliTest, ShorterSideResizeKeepsTheAspectRatio) {
  const std::string dir = MakeTempDir();
  WriteTreeFile(dir, "in/c/wide.png", PngBytes(40, 20, 3, 1));
  WriteTreeFile(dir, "in/c/tall.jpg", JpegBytes(16, 48, 3, 2));
  Result r = RunShard("convert -q " + dir + "/in -o " + dir + "/out --resize-mode shorter-side --size 10 --format png");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::pair<int64_t, int64_t>> sizes;
  for (const std::string& rec : ReadRecords(dir + "/out/in-train-00000-of-00001.tfrecord")) {
    tensorflow::Example ex;
    ASSERT_TRUE(ex.ParseFromString(rec));
    const auto& f = ex.features().feature();
    sizes[f.at("image/filename").bytes_list().value(0)] = {f.at("image/width").int64_list().value(0),
                                                           f.at("image/height").int64_list().value(0)};
  }
  EXPECT_EQ(sizes["c/wide.png"], std::make_pair(int64_t{20}, int64_t{10}));
  EXPECT_EQ(sizes["c/tall.jpg"], std::make_pair(int64_t{10}, int64_t{30}));
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->options().resize_mode(), "shorter-side");
  Result v = RunShard("verify --decode -q " + dir + "/out");
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  Result bad = RunShard("convert -q " + dir + "/in -o " + dir + "/bad --resize-mode shorter-side --size 10x12");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_TRUE(Contains(bad.err, "shorter-side takes one size N")) << bad.err;
  EXPECT_FALSE(fs::exists(dir + "/bad"));
}

}  // namespace
}  // namespace libshard
