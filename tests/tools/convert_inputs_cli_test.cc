// What `shard convert` takes from its input: WebP, TIFF, GIF and BMP
// sources (re-encoded; forged ones rejected naming the format), CSV lists
// (column options, an empty label, reject reasons carrying the line), class
// folders (an empty one keeps its label), split layouts (recognised, said,
// forced with --layout; CamVid with a mask folder per split), and the files
// it skips (non-image extensions) or chooses (--exclude, --include). More in
// tests/convert/convert_input_test.cc.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>

#include "convert/fixtures.h"
#include "convert_cli_fixtures.h"
#include "formats_testutil.h"
#include "libshard/image/decode.h"
#include "libshard/manifest/manifest_json.h"
#include "tensorflow/core/example/example.pb.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::MakeSmallTree;
using testing::MakeTempDir;
using testing::PngBytes;
using testing::ReadFileOrDie;
using testing::ReadRecords;
using testing::RunShard;
using testing::WriteFileOrDie;
using testing::WriteTreeFile;
using Result = testing::CommandResult;

TEST(ConvertInputsCliTest, WebpTiffGifBmpSourcesAreReencodedAndForgedOnesNamed) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  const image::Image rgb = testing::RandomImage(12, 8, 3, 8, 5);
  const image::Image rgba = testing::RandomImage(7, 9, 4, 8, 6);
  WriteTreeFile(dir + "/in", "cat/e.webp", testing::WebpLosslessBytes(rgb.data(), 12, 8, 3));
  WriteTreeFile(dir + "/in", "dog/f.webp", testing::WebpLosslessBytes(rgba.data(), 7, 9, 4));
  Result r = RunShard("convert -q " + dir + "/in -o " + dir + "/out --format png");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->stats().converted(), 6u);
  std::map<std::string, uint64_t> formats;
  for (const auto& f : m->stats().source_formats()) formats[f.name()] = f.count();
  EXPECT_EQ(formats["webp"], 2u);
  EXPECT_EQ(m->stats().passed_through(), 0u);
  Result v = RunShard("verify --decode -q " + dir + "/out");
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  // The RGB WebP is stored as PNG with the very same pixels.
  bool found = false;
  for (const std::string& rec : ReadRecords(dir + "/out/in-train-00000-of-00001.tfrecord")) {
    tensorflow::Example ex;
    ASSERT_TRUE(ex.ParseFromString(rec));
    const auto& f = ex.features().feature();
    if (f.at("image/filename").bytes_list().value(0) != "cat/e.webp") continue;
    found = true;
    EXPECT_EQ(f.at("image/format").bytes_list().value(0), "png");
    StatusOr<image::Image> back = image::DecodeImage(f.at("image/encoded").bytes_list().value(0));
    ASSERT_TRUE(back.ok()) << back.status();
    ASSERT_EQ(back->byte_size(), rgb.byte_size());
    EXPECT_EQ(0, std::memcmp(back->data(), rgb.data(), rgb.byte_size()));
  }
  EXPECT_TRUE(found);

  // TIFF (16-bit gray), GIF and BMP files convert; forged headers and a
  // truncated TIFF are rejects whose reason names the format.
  const std::string other = MakeTempDir();
  MakeSmallTree(other + "/in");
  testing::TiffPage page;
  page.width = 6, page.height = 5, page.bits = 16;
  page.samples = testing::PatternBytes(6 * 5 * 2, 3);
  const std::string tiff = testing::TiffBytes({page}, other);
  testing::GifFrame frame;
  frame.width = 4, frame.height = 3, frame.indices.assign(12, 1);
  WriteTreeFile(other + "/in", "cat/t.tif", tiff);
  WriteTreeFile(other + "/in", "cat/g.gif", testing::GifBytes(4, 3, {0, 0, 0, 200, 100, 50}, 0, {frame}));
  WriteTreeFile(other + "/in", "dog/b.bmp", testing::Bmp24Bytes(2, 2, testing::PatternBytes(12, 1)));
  WriteTreeFile(other + "/in", "dog/z.gif", std::string("GIF89a") + std::string(30, '\0'));
  WriteTreeFile(other + "/in", "dog/h.bmp",
                std::string("BM\x46\0\0\0\0\0\0\0\x36\0\0\0\x28\0\0\0", 18) + std::string(52, '\0'));
  WriteTreeFile(other + "/in", "dog/cut.tif", tiff.substr(0, tiff.size() - 20));
  r = RunShard("convert -q " + other + "/in -o " + other + "/out");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  m = manifest::ReadManifest(other + "/out/manifest.json");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->stats().converted(), 7u);
  formats.clear();
  for (const auto& f : m->stats().source_formats()) formats[f.name()] = f.count();
  EXPECT_EQ(formats["tiff"], 1u);
  EXPECT_EQ(formats["gif"], 1u);
  EXPECT_EQ(formats["bmp"], 1u);
  const std::string tsv = ReadFileOrDie(other + "/out/rejects.tsv");
  EXPECT_TRUE(Contains(tsv, "dog/z.gif\tGIF: zero screen size 0x0\n")) << tsv;
  EXPECT_TRUE(Contains(tsv, "dog/h.bmp\tBMP: invalid dimensions 0x0\n")) << tsv;
  EXPECT_TRUE(Contains(tsv, "dog/cut.tif\tTIFF: ")) << tsv;
  EXPECT_EQ(RunShard("verify --decode -q " + other + "/out").exit_code, 0);

  // --tiff-page 1 stores a two-page TIFF's second page; a one-page TIFF is then a reject naming its pages.
  const std::string paged = MakeTempDir();
  testing::TiffPage second = page;
  second.width = 3, second.height = 4, second.bits = 8, second.samples = testing::PatternBytes(12, 4);
  WriteTreeFile(paged + "/in", "cat/two.tif", testing::TiffBytes({page, second}, paged));
  WriteTreeFile(paged + "/in", "cat/one.tif", tiff);
  r = RunShard("convert -q " + paged + "/in -o " + paged + "/out --tiff-page 1 --format png");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(Contains(ReadFileOrDie(paged + "/out/rejects.tsv"),
                       "cat/one.tif\tTIFF: page 1 asked for, but the file has 1 page(s) (numbered from 0)\n"));
  const std::vector<std::string> records = ReadRecords(paged + "/out/in-train-00000-of-00001.tfrecord");
  ASSERT_EQ(records.size(), 1u);
  tensorflow::Example ex;
  ASSERT_TRUE(ex.ParseFromString(records[0]));
  EXPECT_EQ(ex.features().feature().at("image/width").int64_list().value(0), 3);
  EXPECT_EQ(ex.features().feature().at("image/height").int64_list().value(0), 4);
}

// "empty = unlabeled" used to give shards that verify rejected (the label
// key was required by the schema but missing from the unlabeled records).
TEST(ConvertInputsCliTest, CsvWithAnEmptyLabelPassesVerify) {
  const std::string dir = MakeTempDir();
  WriteTreeFile(dir, "img/a.png", PngBytes(6, 6, 3, 1));
  WriteTreeFile(dir, "img/b.png", PngBytes(6, 6, 3, 2));
  WriteTreeFile(dir, "img/c.png", PngBytes(6, 6, 3, 3));
  WriteFileOrDie(dir + "/list.csv", "path,label\nimg/a.png,3\nimg/b.png,\nimg/c.png,0\n");
  Result r = RunShard("convert -q " + dir + "/list.csv -o " + dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result v = RunShard("verify " + dir + "/out");
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok()) << m.status();
  bool found = false;
  for (const FeatureSpec& f : m->schema()) {
    if (f.key() == "image/class/label") {
      found = true;
      EXPECT_FALSE(f.required());
    }
  }
  EXPECT_TRUE(found);
  // All labeled: the label stays required.
  WriteFileOrDie(dir + "/all.csv", "path,label\nimg/a.png,3\nimg/c.png,0\n");
  ASSERT_EQ(RunShard("convert -q " + dir + "/all.csv -o " + dir + "/out2").exit_code, 0);
  m = manifest::ReadManifest(dir + "/out2/manifest.json");
  ASSERT_TRUE(m.ok());
  for (const FeatureSpec& f : m->schema()) {
    if (f.key() == "image/class/label") {
      EXPECT_TRUE(f.required());
    }
  }
  EXPECT_EQ(RunShard("verify " + dir + "/out2").exit_code, 0);
}

TEST(ConvertInputsCliTest, CsvColumnOptionsAndDecodeRejectsCarryTheLine) {
  const std::string dir = MakeTempDir();
  WriteTreeFile(dir, "img/a.png", PngBytes(6, 6, 3, 1));
  WriteTreeFile(dir, "img/bad.png", "not a png at all");
  WriteFileOrDie(dir + "/list.csv", "filename,class\nimg/a.png,cat\nimg/bad.png,dog\n");
  Result r = RunShard("convert " + dir + "/list.csv -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "list.csv:1: unknown column 'filename'")) << r.err;
  r = RunShard("convert " + dir + "/list.csv -o " + dir + "/out --path-col filename --label-col class");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const std::string tsv = ReadFileOrDie(dir + "/out/rejects.tsv");
  EXPECT_TRUE(Contains(tsv, "img/bad.png\t" + dir + "/list.csv:3: ")) << tsv;
  EXPECT_TRUE(Contains(r.err, "rejected img/bad.png: " + dir + "/list.csv:3: ")) << r.err;
  r = RunShard("convert " + dir + "/list.csv -o " + dir +
               "/fail --path-col filename --label-col class --on-error fail");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Contains(r.err, "shard convert: " + dir + "/list.csv:3: " + dir + "/img/bad.png: ")) << r.err;
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->labels_size(), 2);
  EXPECT_EQ(m->labels(1).name(), "dog");
}

TEST(ConvertInputsCliTest, EmptyClassFolderWarnsAndKeepsLabels) {
  const std::string dir = MakeTempDir();
  WriteTreeFile(dir + "/in", "a/1.png", PngBytes(6, 6, 3, 1));
  fs::create_directories(dir + "/in/b");
  WriteTreeFile(dir + "/in", "c/2.png", PngBytes(6, 6, 3, 2));
  Result r = RunShard("convert " + dir + "/in -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "shard convert: warning: class folder b has no files; class 'b' keeps its label"))
      << r.err;
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->labels_size(), 3);
  EXPECT_EQ(m->labels(2).name(), "c");
  Result dry = RunShard("convert --dry-run " + dir + "/in -o " + dir + "/out2");
  EXPECT_TRUE(Contains(dry.err, "class folder b has no files")) << dry.err;
  // A flat folder's split from --split.
  r = RunShard("convert -q " + dir + "/in/a -o " + dir + "/flat --split test");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/flat/a-test-00000-of-00001.tfrecord"));
}

TEST(ConvertInputsCliTest, CamVidLayoutInOneRunWithPerSplitMasks) {
  const std::string dir = MakeTempDir();
  const std::string cv = dir + "/CamVid";
  for (const char* split : {"train", "val", "test"}) {
    for (int i = 0; i < 2; ++i) {
      const std::string stem = std::string(split) + std::to_string(i);
      WriteTreeFile(cv, std::string(split) + "/" + stem + ".png", PngBytes(8, 6, 3, i));
      WriteTreeFile(cv, std::string(split) + "_labels/" + stem + "_L.png", PngBytes(8, 6, 1, i + 7));
    }
  }
  Result r = RunShard("convert " + cv + " -o " + dir + "/out --masks '" + cv + "/{split}_labels' --mask-suffix _L");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* split : {"train", "val", "test"}) {
    EXPECT_TRUE(fs::exists(dir + "/out/CamVid-" + std::string(split) + "-00000-of-00001.tfrecord")) << split;
  }
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->stats().converted(), 6u);
  EXPECT_EQ(m->rejects_size(), 0);
  Result v = RunShard("verify --decode " + dir + "/out");
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

// Issue 23 item 8: files whose extension is not an image type are skipped
// and counted (not rejects: the run exits 0); content decides for an image
// extension (a PNG named .jpg converts); --exclude and --include choose.
TEST(ConvertInputsCliTest, NonImageFilesAreSkippedAndCountedAndGlobsChoose) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  MakeSmallTree(in);
  WriteTreeFile(in, "cat/png-named.jpg", PngBytes(6, 6, 3, 7));
  for (int i = 0; i < 3; ++i) WriteTreeFile(in, "cat/meta" + std::to_string(i) + ".json", "{}");
  WriteTreeFile(in, "dog/wall.desktop", "[Desktop Entry]");
  WriteTreeFile(in, "README.txt", "about");  // beside the class folders
  WriteTreeFile(in, "dog/Thumbs.db", "x");
  WriteTreeFile(in, "dog/.DS_Store", "x");
  Result r = RunShard("convert " + in + " -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "5 converted")) << r.err;
  EXPECT_TRUE(Contains(r.err, "shard convert: skipped 6 non-image file(s): .json 3, .db 1, .desktop 1, .txt 1\n"))
      << r.err;
  EXPECT_EQ(ReadFileOrDie(dir + "/out/rejects.tsv"), "path\treason\n");
  Result dry = RunShard("convert --dry-run " + in + " -o " + dir + "/dry");
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_TRUE(Contains(dry.out, "\nskipped 6 non-image file(s): .json 3, .db 1, .desktop 1, .txt 1\n")) << dry.out;
  Result json = RunShard("convert --dry-run --json " + in + " -o " + dir + "/dry");
  EXPECT_TRUE(Contains(json.out,
                       "\"skipped\":{\"non_image\":{\".db\":1,\".desktop\":1,\".json\":3,\".txt\":1},"
                       "\"excluded\":0,\"not_included\":0}"))
      << json.out;

  // --exclude by name and by path; --include takes a non-image extension.
  Result ex = RunShard("convert --dry-run " + in + " -o " + dir + "/dry --exclude '*.jpg' --exclude 'dog/c.*'");
  EXPECT_EQ(ex.exit_code, 0) << ex.err;
  EXPECT_TRUE(Contains(ex.out, "dry run: 1 samples")) << ex.out;
  EXPECT_TRUE(Contains(ex.out, "; 4 file(s) matching --exclude\n")) << ex.out;
  WriteTreeFile(in, "dog/e.img", PngBytes(5, 5, 3, 8));
  Result inc = RunShard("convert -q " + in + " -o " + dir + "/inc --include '*.img' --include 'cat/*.png'");
  EXPECT_EQ(inc.exit_code, 0) << inc.err;
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/inc/manifest.json");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->stats().converted(), 2u);  // cat/a.png, dog/e.img
  // A CSV names its files: the globs are refused.
  WriteFileOrDie(dir + "/m.csv", "path\nin/cat/a.png\n");
  Result csv = RunShard("convert -q " + dir + "/m.csv -o " + dir + "/csv --exclude '*.png'");
  EXPECT_EQ(csv.exit_code, 2) << csv.err;
  EXPECT_TRUE(Contains(csv.err, "--include and --exclude choose the files of a folder")) << csv.err;
}

// Issue 23 item 2: Train/Test folders are splits; the dry run and the
// summary say the layout found; --layout forces another; a bad value is a
// usage error.
TEST(ConvertInputsCliTest, LayoutIsRecognisedSaidAndForced) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  for (int i = 0; i < 6; ++i) {
    WriteTreeFile(
        in, std::string(i < 4 ? "Train" : "Test") + "/c" + std::to_string(i % 2) + "/" + std::to_string(i) + ".png",
        PngBytes(4, 4, 3, i));
  }
  Result dry = RunShard("convert --dry-run " + in + " -o " + dir + "/out");
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_TRUE(Contains(dry.out,
                       "\nlayout split/class: split test (folder Test) 2 samples in 2 classes, split train "
                       "(folder Train) 4 samples in 2 classes\n"))
      << dry.out;
  Result json = RunShard("convert --dry-run --json " + in + " -o " + dir + "/out");
  EXPECT_TRUE(Contains(json.out,
                       "\"layout\":\"split/class\",\"split_folders\":[{\"folder\":\"Test\",\"split\":"
                       "\"test\"},{\"folder\":\"Train\",\"split\":\"train\"}]"))
      << json.out;
  Result r = RunShard("convert " + in + " -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "shard convert: layout split/class: split test (folder Test) 2 samples")) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/out/in-test-00000-of-00001.tfrecord"));
  Result forced = RunShard("convert --dry-run --layout class " + in + " -o " + dir + "/out2");
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_TRUE(Contains(forced.out, "\nlayout class: split train 6 samples in 2 classes\n")) << forced.out;
  EXPECT_TRUE(Contains(forced.err,
                       "warning: top-level folder 'Test' looks like a split but was taken as a class "
                       "(--layout class)"))
      << forced.err;
  Result bad = RunShard("convert --dry-run --layout tree " + in + " -o " + dir + "/out2");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "shard convert: --layout: unknown layout 'tree' (expected auto, class, split/class or flat)\n");
}

}  // namespace
}  // namespace libshard
