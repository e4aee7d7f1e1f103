// `shard convert` as a user runs it: every exit code, rejects.tsv, the dry
// run (text and JSON), task runs, kill -9 and resume (byte-identical to an
// uninterrupted run), and a full disk (ulimit -f).
#include <fcntl.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "fixtures.h"
#include "formats_testutil.h"
#include "libshard/convert/manifest_io.h"
#include "libshard/image/decode.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/text_escape.h"
#include "libshard/util/strings.h"
#include "tensorflow/core/example/example.pb.h"
#include "testutil.h"

extern char** environ;

namespace libshard {
namespace {

namespace fs = std::filesystem;
using testing::JpegBytes;
using testing::ListFilesRecursive;
using testing::MakeTempDir;
using testing::PngBytes;
using testing::ReadFileOrDie;
using testing::ReadRecords;
using testing::WriteFileOrDie;
using testing::WriteTreeFile;
using Result = testing::CommandResult;

using testing::RunShard;

using testing::Contains;

using util::EndsWith;

using testing::CountDifferences;
std::map<std::string, std::string> Snapshot(const std::string& dir) { return testing::SnapshotDir(dir); }

void ExpectNoTemporaries(const std::string& dir) {
  for (const std::string& f : ListFilesRecursive(dir)) {
    EXPECT_FALSE(Contains(f, ".partial")) << f;
    EXPECT_FALSE(EndsWith(f, ".tmp")) << f;
  }
}

// Every shard under its final name is complete: it reads to a clean end
// with every CRC checked (and passes `shard verify` when `with_cli`), and
// holds the records its entry says.
void ExpectFinalShardsComplete(const std::string& dir, bool with_cli = true) {
  for (const std::string& f : ListFilesRecursive(dir)) {
    if (!EndsWith(f, ".tfrecord")) continue;
    if (with_cli) {
      Result v = RunShard("verify -q " + dir + "/" + f);
      EXPECT_EQ(v.exit_code, 0) << f << ": " << v.out << v.err;
    }
    StatusOr<ShardEntry> e = convert::ReadShardEntry(dir + "/.libshard/" + f + ".json");
    ASSERT_TRUE(e.ok()) << f << ": " << e.status();
    EXPECT_EQ(ReadRecords(dir + "/" + f).size(), e->records()) << f;
    EXPECT_EQ(fs::file_size(dir + "/" + f), e->bytes()) << f;
  }
}

void MakeSmallTree(const std::string& root) {
  WriteTreeFile(root, "cat/a.png", PngBytes(12, 10, 3, 1));
  WriteTreeFile(root, "cat/b.jpg", JpegBytes(16, 16, 3, 2));
  WriteTreeFile(root, "dog/c.png", PngBytes(9, 14, 1, 3));
  WriteTreeFile(root, "dog/d.jpg", JpegBytes(20, 12, 3, 4));
}

// n small PNGs in 4 classes.
void MakeManyImages(const std::string& root, int n, int size) {
  for (int i = 0; i < n; ++i) {
    WriteTreeFile(root, "class" + std::to_string(i % 4) + "/" + std::to_string(i) + ".png", PngBytes(size, size, 3, i));
  }
}

TEST(ConvertCliTest, AllConvertedExitsZero) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  Result r = RunShard("convert " + dir + "/in -o " + dir + "/out --size 8 --records-per-shard 3");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "4 converted")) << r.err;
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->stats().converted(), 4u);
  EXPECT_EQ(m->options().width(), 8);
  EXPECT_EQ(m->options().resize_mode(), "center-crop");
  EXPECT_TRUE(fs::exists(dir + "/out/in-train-00000-of-00002.tfrecord"));
  EXPECT_EQ(ReadFileOrDie(dir + "/out/rejects.tsv"), "path\treason\n");
  ExpectFinalShardsComplete(dir + "/out");
  // --json prints the manifest on stdout.
  r = RunShard("convert -q --json " + dir + "/in -o " + dir + "/out2 --prefix p");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  Manifest printed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &printed).ok()) << r.out;
  EXPECT_EQ(printed.options().prefix(), "p");
  EXPECT_EQ(printed.stats().converted(), 4u);
}

TEST(ConvertCliTest, RejectedInputExitsThreeAndIsListed) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  WriteTreeFile(dir + "/in", "dog/readme.jpg", "this is not an image");  // content decides
  Result r = RunShard("convert " + dir + "/in -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(Contains(r.err, "rejected dog/readme.jpg")) << r.err;
  const std::string tsv = ReadFileOrDie(dir + "/out/rejects.tsv");
  ASSERT_TRUE(Contains(tsv, "\ndog/readme.jpg\t")) << tsv;
  const std::string reason = tsv.substr(tsv.find("dog/readme.jpg\t") + 15);
  EXPECT_GT(reason.size(), 2u) << tsv;  // a reason, not an empty field
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->stats().converted(), 4u);
  ASSERT_EQ(m->rejects_size(), 1);
  EXPECT_EQ(m->rejects(0).path(), "dog/readme.jpg");
  // Run again: the same exit code (the reject is remembered by its shard).
  r = RunShard("convert -q " + dir + "/in -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 3) << r.err;
}

// --size 65535: 12.9 GB per output image, under a 2 GB address-space limit.
// Each image is a reject, never std::bad_alloc aborting the run; with
// every input rejected, nothing is converted: exit 1 (issue 23 item 11).
// --voc / --yolo annotations that no image matches (a wrong folder): the
// dry run and the summary give the matched, unannotated and missing counts
// and the boxes, and the run fails with COCO's code (3) instead of storing
// images without boxes as a success.
TEST(ConvertCliTest, AnnotationsMatchingNoImageExitThree) {
  const std::string dir = MakeTempDir();
  WriteTreeFile(dir, "in/a.png", PngBytes(12, 10, 3, 1));
  WriteTreeFile(dir, "in/b.png", PngBytes(12, 10, 3, 2));
  const std::string box = "<bndbox><xmin>1</xmin><ymin>1</ymin><xmax>5</xmax><ymax>5</ymax></bndbox>";
  WriteTreeFile(dir, "Annotations/other.xml", "<annotation><object><name>dog</name>" + box + "</object></annotation>");
  WriteTreeFile(dir, "classes.txt", "dog\n");
  for (const std::string& flag : {"--voc " + dir + "/Annotations", "--yolo " + dir + "/classes.txt"}) {
    SCOPED_TRACE(flag);
    Result dry = RunShard("convert --dry-run " + dir + "/in -o " + dir + "/dry " + flag);
    EXPECT_EQ(dry.exit_code, 3) << dry.out << dry.err;
    EXPECT_TRUE(Contains(dry.out, "): 0 image(s) matched an annotation, 2 without, 0 named but missing; 0 boxes"))
        << dry.out;
    EXPECT_TRUE(Contains(dry.err, "no image matched an annotation")) << dry.err;
    fs::remove_all(dir + "/out");
    Result r = RunShard("convert " + dir + "/in -o " + dir + "/out " + flag);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_TRUE(Contains(r.err, "0 image(s) matched an annotation, 2 without, 0 named but missing; 0 boxes")) << r.err;
    EXPECT_TRUE(Contains(r.err, "no image matched an annotation")) << r.err;
  }
  // One match: both succeed and count it.
  WriteTreeFile(dir, "Annotations/a.xml",
                "<annotation><object><name>dog</name>" + box + "</object><object><name>dog</name>" + box +
                    "</object></annotation>");
  Result dry = RunShard("convert --dry-run " + dir + "/in -o " + dir + "/dry --voc " + dir + "/Annotations");
  EXPECT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_TRUE(Contains(dry.out, "annotations (voc): 1 image(s) matched an annotation, 1 without, 0 named but "
                                "missing; 2 boxes"))
      << dry.out;
  Result json = RunShard("convert --dry-run --json " + dir + "/in -o " + dir + "/dry --voc " + dir + "/Annotations");
  EXPECT_TRUE(Contains(json.out, "\"annotations\":{\"format\":\"voc\",\"matched_images\":1,"
                                 "\"unannotated_images\":1,\"missing_images\":0,\"boxes\":2}"))
      << json.out;
  fs::remove_all(dir + "/out");
  Result r = RunShard("convert " + dir + "/in -o " + dir + "/out --voc " + dir + "/Annotations");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "1 image(s) matched an annotation, 1 without, 0 named but missing; 2 boxes: 2 stored"))
      << r.err;
}

TEST(ConvertCliTest, OutOfMemoryRejectsEachImageAndNothingConvertedExitsOne) {
#ifdef LIBSHARD_TEST_ASAN
  GTEST_SKIP() << "address space limits do not work under AddressSanitizer";
#endif
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  Result r = testing::RunCommand("ulimit -v 2000000; " + std::string(SHARD_BIN) +
                                 " convert -q --threads 2 --size 65535 " + dir + "/in -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok()) << r.err;
  EXPECT_EQ(m->stats().converted(), 0u);
  ASSERT_EQ(m->rejects_size(), 4) << r.err;
  for (const Reject& x : m->rejects()) {
    EXPECT_EQ(x.reason(), "out of memory decoding the image (not caused by the file: retried on the next run)")
        << x.path();
  }
}

TEST(ConvertCliTest, WebpTiffGifBmpSourcesAreReencodedAndForgedOnesNamed) {
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

TEST(ConvertCliTest, FatalErrorsExitOne) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  WriteTreeFile(dir + "/in", "dog/zzz.png", "PNG? no");
  Result r = RunShard("convert --on-error fail " + dir + "/in -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, dir + "/in/dog/zzz.png")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out/manifest.json"));
  ExpectNoTemporaries(dir + "/out");
  ExpectFinalShardsComplete(dir + "/out");
}

// docs/cli.md: 2 = usage error or unreadable argument. These returned 1.
TEST(ConvertCliTest, UnreadableOrInvalidArgumentsExitTwoBeforeWriting) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  WriteFileOrDie(dir + "/bad.csv", "path,label\nin/cat/a.png,0,extra\n");
  WriteFileOrDie(dir + "/badhead.csv", "file,label\nin/cat/a.png,0\n");
  const std::string out = " -o " + dir + "/out";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {dir + "/missing" + out, dir + "/missing: cannot read: No such file or directory"},
      {dir + "/in" + out + " --labels " + dir + "/nolabels.txt", "--labels " + dir + "/nolabels.txt: cannot read"},
      {dir + "/in" + out + " --masks " + dir + "/nomasks", "--masks " + dir + "/nomasks: cannot read"},
      {dir + "/in" + out + " --mask-labels " + dir + "/none.csv", "--mask-labels " + dir + "/none.csv: cannot read"},
      {dir + "/bad.csv" + out, dir + "/bad.csv:2: 3 fields, header has 2"},
      {dir + "/badhead.csv" + out, dir + "/badhead.csv:1: unknown column 'file'"},
      {dir + "/in" + out + " --prefix a/b", "shard prefix 'a/b' contains '/'"},
      {dir + "/in" + out + " --threads -1", "--threads: '-1' is out of range"},
      {dir + "/in" + out + " --task-index 1", "--task-index 1 needs --num-tasks N"},
  };
  for (const auto& [args, message] : cases) {
    for (const char* dry : {"", " --dry-run"}) {
      Result r = RunShard("convert " + args + dry);
      EXPECT_EQ(r.exit_code, 2) << args << dry << "\n" << r.err;
      EXPECT_TRUE(Contains(r.err, message)) << args << dry << "\n" << r.err;
      EXPECT_FALSE(fs::exists(dir + "/out")) << args << dry;
    }
  }
}

TEST(ConvertCliTest, UsageErrorsExitTwo) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  const std::string io = dir + "/in -o " + dir + "/out ";
  for (const std::string& args : {io + "--bogus",
                                  io + "--size abc",
                                  io + "--size 0",
                                  io + "--size 10x",
                                  io + "--size 70000",
                                  io + "--format gif",
                                  io + "--on-error maybe",
                                  io + "--channels cmyk",
                                  io + "--shard-size 12Q",
                                  io + "--resize-mode stretch",
                                  io + "--filter sinc",
                                  io + "--val-fraction 1.5",
                                  dir + "/in",
                                  io + "--shard-size .",
                                  io + "--shard-size 1.2.3",
                                  io + "--shard-size 99999999999999999999999G",
                                  io + "--quality 0",
                                  io + "--zstd-level 23",
                                  io + "--zstd-level -131073",
                                  io + "--raw-filter delta",
                                  io + "--num-tasks 0",
                                  io + "--num-tasks 2 --task-index 2"}) {
    Result r = RunShard("convert " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
  }
  EXPECT_FALSE(fs::exists(dir + "/out"));
  Result help = RunShard("convert --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(Contains(help.out, "Exit codes")) << help.out;
}

// An object-store URL other than s3:// as the output is a usage error, not a
// local folder named "https:" (which a plain path join would create in the
// working folder). s3:// uploads: tests/tools/remote_cli_test.cc.
TEST(ConvertCliTest, ObjectStoreOutputIsAUsageErrorNotALocalFolder) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  const size_t inputs = ListFilesRecursive(dir).size();
  for (const char* url : {"https://host/ds", "gs://b/p"}) {
    Result r = testing::RunCommand("cd " + dir + " && " + SHARD_BIN + " convert in -o " + url + " --threads 1");
    EXPECT_EQ(r.exit_code, 2) << url << "\n" << r.err;
    EXPECT_TRUE(Contains(r.err, url)) << r.err;
    EXPECT_TRUE(Contains(r.err, "object storage")) << r.err;
  }
  EXPECT_EQ(ListFilesRecursive(dir).size(), inputs);  // nothing written
  EXPECT_FALSE(fs::exists(dir + "/s3:"));
  EXPECT_FALSE(fs::exists(dir + "/https:"));
  EXPECT_FALSE(fs::exists(dir + "/gs:"));
}

TEST(ConvertCliTest, BadPrefixesAndHeaderOnlyCsvExitTwo) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  WriteFileOrDie(dir + "/only_header.csv", "path,label\n");
  const std::string io = dir + "/in -o " + dir + "/out ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {io + "--prefix ''", "--prefix: the prefix is empty"},
      {io + "--prefix ..", "shard prefix '..' is not a name"},
      {io + "--prefix .x", "shard prefix '.x' starts with '.': its shards would be hidden files"},
      {io + "--prefix a/b", "shard prefix 'a/b' contains '/'"},
      {io + "--split ../x", "split name '../x' contains '/'"},
      {dir + "/only_header.csv -o " + dir + "/out", dir + "/only_header.csv: no samples (only a header)"},
  };
  for (const auto& [args, message] : cases) {
    Result r = RunShard("convert " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_TRUE(Contains(r.err, message)) << args << "\n" << r.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/out"));
}

// "empty = unlabeled" used to give shards that verify rejected (the label
// key was required by the schema but missing from the unlabeled records).
// A shard whose planned inputs were all rejected is written with no records
// and listed so in manifest.json: `shard verify OUT` accepts it (a file that
// is empty without a manifest saying so is still an empty_file fault).
TEST(ConvertCliTest, AShardOfOnlyRejectsVerifies) {
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

TEST(ConvertCliTest, CsvWithAnEmptyLabelPassesVerify) {
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

TEST(ConvertCliTest, CsvColumnOptionsAndDecodeRejectsCarryTheLine) {
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

TEST(ConvertCliTest, EmptyClassFolderWarnsAndKeepsLabels) {
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

bool ValidUtf8(const std::string& s) { return IsValidUtf8(s); }

// Non-UTF-8 and odd file names: rejects.tsv and manifest.json keep every byte
// through the documented escape (\\, \t, \n, \xHH); --json outputs stay
// valid UTF-8 (\udcXX for a byte that is not UTF-8).
TEST(ConvertCliTest, OddFileNamesAreEscapedNeverDropped) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  WriteTreeFile(in, "cat/a.png", PngBytes(6, 6, 3, 1));
  WriteTreeFile(in,
                "cat/b\xe4"
                "d.jpg",
                "not an image");
  WriteTreeFile(in, "cat/t\tab.jpg", "not an image");
  WriteTreeFile(in, "cat/back\\slash.jpg", "not an image");
  WriteTreeFile(in, "cat/new\nline.jpg", "not an image");
  Result r = RunShard("convert " + in + " -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const std::string tsv = ReadFileOrDie(dir + "/out/rejects.tsv");
  EXPECT_TRUE(ValidUtf8(tsv)) << tsv;
  EXPECT_TRUE(Contains(tsv, "\ncat/b\\xe4d.jpg\t")) << tsv;
  EXPECT_TRUE(Contains(tsv, "\ncat/t\\tab.jpg\t")) << tsv;
  EXPECT_TRUE(Contains(tsv, "\ncat/back\\\\slash.jpg\t")) << tsv;
  EXPECT_TRUE(Contains(tsv, "\ncat/new\\nline.jpg\t")) << tsv;
  size_t lines = 0;
  for (char c : tsv) lines += c == '\n';
  EXPECT_EQ(lines, 5u) << tsv;  // header + 4: no name broke a line
  const std::string json = ReadFileOrDie(dir + "/out/manifest.json");
  EXPECT_TRUE(ValidUtf8(json));
  EXPECT_TRUE(Contains(json, "\"cat/b\\\\xe4d.jpg\"")) << json;
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->rejects_size(), 4);

  // The dry run's JSON: surrogate escapes, valid UTF-8.
  Result dry = RunShard("convert --dry-run --json " + in + " -o " + dir + "/out2");
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_TRUE(ValidUtf8(dry.out));
  EXPECT_TRUE(Contains(dry.out, "\"cat/b\\udce4d.jpg\"")) << dry.out;
  EXPECT_TRUE(Contains(dry.out, "\"cat/t\\tab.jpg\"")) << dry.out;

  // An input folder whose own name is not UTF-8: the manifest escapes it.
  fs::create_directories(dir + "/d\xe9j\xe0");
  WriteTreeFile(dir + "/d\xe9j\xe0", "x/a.png", PngBytes(6, 6, 3, 1));
  r = RunShard("convert -q '" + dir + "/d\xe9j\xe0' -o " + dir + "/out3 --prefix p");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string json3 = ReadFileOrDie(dir + "/out3/manifest.json");
  EXPECT_TRUE(ValidUtf8(json3));
  EXPECT_TRUE(Contains(json3, "/d\\\\xe9j\\\\xe0\"")) << json3;
}

TEST(ConvertCliTest, CamVidLayoutInOneRunWithPerSplitMasks) {
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

// TF's build_imagenet_data stores labels 1-based (0 = background).
TEST(ConvertCliTest, MaskClassesHistogramIgnoreIndexAndFill) {
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

TEST(ConvertCliTest, LabelOffsetShiftsLabelsAndIsRecorded) {
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

TEST(ConvertCliTest, DryRunWritesNothingAndPrintsCounts) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  Result r = RunShard("convert --dry-run " + dir + "/in -o " + dir + "/out --records-per-shard 1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out"));
  EXPECT_TRUE(Contains(r.out, "dry run: 4 samples")) << r.out;
  EXPECT_TRUE(Contains(r.out, "2 classes")) << r.out;
  EXPECT_TRUE(Contains(r.out, "shards: train 4")) << r.out;
  EXPECT_TRUE(Contains(r.out, "formats: jpeg 2 png 2")) << r.out;
}

const google::protobuf::Value& Field(const google::protobuf::Struct& s, const std::string& key) {
  static const google::protobuf::Value kNull;
  auto it = s.fields().find(key);
  if (it == s.fields().end()) {
    ADD_FAILURE() << "no field " << key;
    return kNull;
  }
  return it->second;
}

TEST(ConvertCliTest, DryRunJsonFlagsRiskyInputs) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  WriteTreeFile(in, "a/plain.jpg", JpegBytes(16, 16, 3, 1));
  WriteTreeFile(in, "a/progressive.jpg", JpegBytes(16, 16, 3, 2, /*progressive=*/true));
  WriteTreeFile(in, "a/deep.png", PngBytes(6, 6, 3, 3, 16));
  WriteTreeFile(in, "b/alpha.png", PngBytes(6, 6, 4, 4));
  WriteTreeFile(in, "b/rotated.jpg", testing::WithExifOrientation(JpegBytes(16, 8, 3, 5), 6));
  WriteTreeFile(in, "b/broken.png", "\x89PNG\r\n\x1a\n garbage");
  const image::Image still = testing::RandomImage(5, 4, 3, 8, 6);
  WriteTreeFile(in, "b/still.webp", testing::WebpLosslessBytes(still.data(), 5, 4, 3));
  // RIFF + VP8X with the animation flag, canvas 4x3.
  WriteTreeFile(in, "b/anim.webp", std::string("RIFF\x16\0\0\0WEBPVP8X\x0a\0\0\0\x02\0\0\0\x03\0\0\x02\0\0", 30));
  WriteTreeFile(in, "stray.png", "x");
  Result r = RunShard("convert --dry-run --json " + in + " -o " + dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out"));
  google::protobuf::Struct json;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &json).ok()) << r.out;
  EXPECT_EQ(Field(json, "samples").number_value(), 8);
  EXPECT_EQ(Field(json, "input").string_value(), in);
  const auto& classes = Field(json, "classes").list_value().values();
  ASSERT_EQ(classes.size(), 2);
  EXPECT_EQ(classes[0].string_value(), "a");
  const auto& formats = Field(json, "formats").struct_value();
  EXPECT_EQ(Field(formats, "jpeg").number_value(), 3);
  EXPECT_EQ(Field(formats, "png").number_value(), 2);
  EXPECT_EQ(Field(formats, "unknown").number_value(), 1);
  EXPECT_EQ(Field(formats, "webp").number_value(), 2);
  std::map<std::string, std::string> risky;
  for (const auto& v : Field(json, "risky").list_value().values()) {
    risky[Field(v.struct_value(), "path").string_value()] = Field(v.struct_value(), "reason").string_value();
  }
  EXPECT_EQ(risky.size(), 6u);
  EXPECT_EQ(risky.count("b/still.webp"), 0u);
  EXPECT_EQ(risky["b/anim.webp"], "animated WebP (not decodable)");
  EXPECT_EQ(risky.count("a/plain.jpg"), 0u);
  EXPECT_TRUE(Contains(risky["a/progressive.jpg"], "progressive")) << risky["a/progressive.jpg"];
  EXPECT_TRUE(Contains(risky["a/deep.png"], "16-bit")) << risky["a/deep.png"];
  EXPECT_TRUE(Contains(risky["b/alpha.png"], "alpha")) << risky["b/alpha.png"];
  EXPECT_TRUE(Contains(risky["b/rotated.jpg"], "EXIF-rotated (orientation 6)")) << risky["b/rotated.jpg"];
  EXPECT_TRUE(Contains(risky["b/broken.png"], "undecodable")) << risky["b/broken.png"];
  const auto& rejects = Field(json, "rejects").list_value().values();
  ASSERT_EQ(rejects.size(), 1);
  EXPECT_EQ(Field(rejects[0].struct_value(), "path").string_value(), "stray.png");
  const auto& shards = Field(json, "shards").list_value().values();
  ASSERT_EQ(shards.size(), 1);
  EXPECT_EQ(Field(shards[0].struct_value(), "file").string_value(), "in-train-00000-of-00001.tfrecord");
  EXPECT_EQ(Field(shards[0].struct_value(), "samples").number_value(), 8);
}

TEST(ConvertCliTest, TaskRunWritesItsOwnManifest) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  Result whole = RunShard("convert -q " + dir + "/in -o " + dir + "/whole --records-per-shard 1");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  for (int t = 0; t < 3; ++t) {
    Result r = RunShard("convert -q " + dir + "/in -o " + dir +
                        "/tasks --records-per-shard 1 --num-tasks 3 --task-index " + std::to_string(t));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir + "/tasks/.libshard/" + convert::TaskManifestName(t, 3)));
  }
  EXPECT_FALSE(fs::exists(dir + "/tasks/manifest.json"));
  for (int i = 0; i < 4; ++i) {
    const std::string f = "/in-train-0000" + std::to_string(i) + "-of-00004.tfrecord";
    EXPECT_EQ(ReadFileOrDie(dir + "/tasks" + f), ReadFileOrDie(dir + "/whole" + f)) << f;
  }
  // Merged, the folder verifies clean: no task manifest is taken for a shard.
  Result merge = RunShard("merge -q " + dir + "/tasks");
  ASSERT_EQ(merge.exit_code, 0) << merge.err;
  Result verify = RunShard("verify " + dir + "/tasks");
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  Result bad = RunShard("convert -q " + dir + "/in -o " + dir + "/bad --num-tasks 2 --task-index 2");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(Contains(bad.err, "task index 2")) << bad.err;
}

// A second writer (here: this test holding the folder's lock, as a running
// conversion does) makes `shard convert` and `shard merge` fail at once.
TEST(ConvertCliTest, SecondWriterFailsFastNamingTheFolder) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  const std::string out = dir + "/out";
  fs::create_directories(out + "/.libshard");
  const int fd = ::open((out + "/.libshard/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const std::string busy = "shard convert: " + out +
                           ": another `shard convert` or `shard merge` is writing to this output folder (it holds " +
                           out + "/.libshard/lock); wait for it to end, or use another folder\n";
  const auto t0 = std::chrono::steady_clock::now();
  Result r = RunShard("convert -q " + dir + "/in -o " + out);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));  // no waiting
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, busy);
  EXPECT_FALSE(fs::exists(out + "/manifest.json"));
  Result m = RunShard("merge " + out);
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_EQ(m.err, "shard merge" + busy.substr(std::string("shard convert").size()));
  ::close(fd);
  Result again = RunShard("convert -q " + dir + "/in -o " + out);
  EXPECT_EQ(again.exit_code, 0) << again.err;
}

// Issue 12 item 22: output equal to the input is refused (usage, exit 2);
// output inside the input is left out of the listing, so a rerun does not
// list its own shards (it gave 4 bogus rejects and an extra class).
TEST(ConvertCliTest, OutputIsTheInputOrInsideIt) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  MakeSmallTree(in);
  for (const std::string& out : {in, in + "/", in + "/../in/."}) {
    Result r = RunShard("convert -q " + in + " -o " + out);
    EXPECT_EQ(r.exit_code, 2) << out;
    EXPECT_EQ(r.err, "shard convert: output folder " + out + " is the input folder " + in +
                         "; write the shards to another folder (one inside the input that holds only shards is "
                         "left out of the listing)\n");
    EXPECT_FALSE(fs::exists(in + "/.libshard"));
    EXPECT_FALSE(fs::exists(in + "/manifest.json"));
  }

  Result outside = RunShard("convert -q " + in + " -o " + dir + "/outside --records-per-shard 2");
  ASSERT_EQ(outside.exit_code, 0) << outside.err;
  const std::string inside = in + "/shards";
  for (int run = 0; run < 2; ++run) {
    SCOPED_TRACE(run);
    Result r = RunShard("convert " + in + " -o " + inside + " --records-per-shard 2");
    EXPECT_EQ(r.exit_code, 0) << r.err;  // no rejects
    StatusOr<Manifest> a = manifest::ReadManifest(dir + "/outside/manifest.json");
    StatusOr<Manifest> b = manifest::ReadManifest(inside + "/manifest.json");
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(b->rejects_size(), 0);
    EXPECT_EQ(b->labels_size(), a->labels_size());  // no class "shards"
    EXPECT_EQ(b->plan_id(), a->plan_id());          // the same plan, byte for byte
    EXPECT_EQ(b->stats().converted(), a->stats().converted());
  }
  for (const char* f : {"/in-train-00000-of-00002.tfrecord", "/in-train-00001-of-00002.tfrecord"}) {
    EXPECT_EQ(ReadFileOrDie(inside + f), ReadFileOrDie(dir + "/outside" + f)) << f;
  }
}

// Issue 23 item 1: an output folder inside the input that holds input
// images (a typo: -o in/train for -o out/train) is refused with exit 2,
// naming how many it holds, instead of converting the rest without them;
// the same for a class folder (-o in/b) and a folder deeper down.
TEST(ConvertCliTest, OutputInsideTheInputHoldingImagesIsRefused) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  for (int i = 0; i < 5; ++i) WriteTreeFile(in, "train/a/" + std::to_string(i) + ".png", PngBytes(4, 4, 3, i));
  for (int i = 0; i < 3; ++i) WriteTreeFile(in, "train/b/" + std::to_string(i) + ".png", PngBytes(4, 4, 3, i));
  WriteTreeFile(in, "val/a/v.png", PngBytes(4, 4, 3, 9));
  for (const auto& [out, n, as] : {std::tuple(in + "/train", 8, "train"), std::tuple(in + "/train/b", 3, "train/b"),
                                   std::tuple(in + "/val/a", 1, "val/a")}) {
    SCOPED_TRACE(out);
    for (const char* dry : {"", "--dry-run "}) {
      Result r = RunShard(std::string("convert -q ") + dry + in + " -o " + out);
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_TRUE(Contains(r.err, "output folder " + out + " lies inside the input " + in + " (as " + as +
                                      ") and holds " + std::to_string(n) + " input image(s)"))
          << r.err;
      EXPECT_FALSE(fs::exists(out + "/.libshard"));
      EXPECT_FALSE(fs::exists(out + "/manifest.json"));
    }
  }
  // An empty folder inside, or one holding only an earlier run's output,
  // is still fine.
  fs::create_directories(in + "/shards");
  Result first = RunShard("convert -q " + in + " -o " + in + "/shards");
  EXPECT_EQ(first.exit_code, 0) << first.err;
  Result again = RunShard("convert -q " + in + " -o " + in + "/shards");
  EXPECT_EQ(again.exit_code, 0) << again.err;
}

// Issue 23 item 4: resume re-checks a kept shard's CRC-32C: a damaged
// shard of the right size is redone (and said), not kept on every rerun.
TEST(ConvertCliTest, ResumeRedoesADamagedShardOfTheRightSize) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  const std::string out = dir + "/out";
  Result first = RunShard("convert -q " + dir + "/in -o " + out + " --records-per-shard 2");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string shard = out + "/in-train-00001-of-00002.tfrecord";
  const std::string good = ReadFileOrDie(shard);
  std::string bad = good;
  bad[bad.size() - 10] ^= 1;
  WriteFileOrDie(shard, bad);
  Result r = RunShard("convert " + dir + "/in -o " + out + " --records-per-shard 2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "shard convert: shard in-train-00001-of-00002.tfrecord (crc32c:")) << r.err;
  EXPECT_TRUE(Contains(r.err, "of an earlier run did not match its checksum: redone")) << r.err;
  EXPECT_TRUE(Contains(r.err, "2 kept from an earlier run in 1 shard(s)")) << r.err;
  EXPECT_EQ(ReadFileOrDie(shard), good);
  ExpectFinalShardsComplete(out);
}

// Issue 23 item 8: files whose extension is not an image type are skipped
// and counted (not rejects: the run exits 0); content decides for an image
// extension (a PNG named .jpg converts); --exclude and --include choose.
TEST(ConvertCliTest, NonImageFilesAreSkippedAndCountedAndGlobsChoose) {
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
TEST(ConvertCliTest, LayoutIsRecognisedSaidAndForced) {
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

// Issue 23 item 11: exit codes as docs/cli.md states them. Every input
// rejected is "nothing converted" (1, not 3); `shard merge` of a missing
// folder is a usage error (2); a --prefix too long for a file name is a
// usage error (2) before anything is created.
TEST(ConvertCliTest, ExitCodesForNothingConvertedMissingMergeFolderAndLongPrefix) {
  const std::string dir = MakeTempDir();
  WriteTreeFile(dir, "in/cat/a.png", "not an image");
  WriteTreeFile(dir, "in/dog/b.jpg", "not an image either");
  Result r = RunShard("convert " + dir + "/in -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Contains(r.err, "shard convert: nothing converted: all 2 input(s) were rejected (" + dir +
                                  "/out/rejects.tsv names them)\n"))
      << r.err;
  // One good input: some converted, exit 3 as before.
  WriteTreeFile(dir, "in/dog/c.png", PngBytes(4, 4, 3, 1));
  r = RunShard("convert -q " + dir + "/in -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 3) << r.err;

  Result m = RunShard("merge " + dir + "/nonexistent");
  EXPECT_EQ(m.exit_code, 2) << m.err;
  EXPECT_EQ(m.err, "shard merge: " + dir + "/nonexistent: no such folder\n");

  const std::string long_prefix(230, 'p');
  r = RunShard("convert -q " + dir + "/in -o " + dir + "/long --prefix " + long_prefix);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err,
                       "passes the file system's 255-byte limit: use a --prefix of at most 213 bytes "
                       "(split 'train')"))
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/long"));
  r = RunShard("convert -q " + dir + "/in -o " + dir + "/long --prefix " + std::string(213, 'p'));
  EXPECT_EQ(r.exit_code, 3) << r.err;
}

// Issue 23 item 10: task variables are named in every message, and Slurm
// arrays with an offset or a step map onto tasks 0..COUNT-1.
TEST(ConvertCliTest, TaskVariablesAreNamedAndSlurmStepsMap) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  const std::string no_env =
      "env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_COUNT -u SLURM_ARRAY_TASK_MIN "
      "-u SLURM_ARRAY_TASK_STEP -u JOB_COMPLETION_INDEX ";
  auto run = [&](const std::string& vars, const std::string& flags) {
    return testing::RunCommand(no_env + vars + " " + SHARD_BIN + " convert --dry-run " + dir + "/in -o " + dir +
                               "/out --records-per-shard 1 " + flags);
  };
  Result r = run("JOB_COMPLETION_INDEX=1", "");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "shard convert: JOB_COMPLETION_INDEX=1 gives this task's index but not the number of tasks: add "
            "--num-tasks N (an Indexed Job's completions)\n");
  r = run("JOB_COMPLETION_INDEX=5", "--num-tasks 4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "shard convert: task index 5 from JOB_COMPLETION_INDEX=5 is out of range for --num-tasks 4 (0..3)\n");
  r = run("JOB_COMPLETION_INDEX=2", "--num-tasks 4");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "shard convert: task 2 of 4 (0-based), from JOB_COMPLETION_INDEX=2\n")) << r.err;
  // --array=0-9:2 (tasks 0, 2, 4, 6, 8) and --array=10-19.
  r = run("SLURM_ARRAY_TASK_ID=6 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_STEP=2 SLURM_ARRAY_TASK_COUNT=5", "");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err,
                       "shard convert: task 3 of 5 (0-based), from SLURM_ARRAY_TASK_ID=6, SLURM_ARRAY_TASK_MIN=0, "
                       "SLURM_ARRAY_TASK_STEP=2, SLURM_ARRAY_TASK_COUNT=5\n"))
      << r.err;
  r = run("SLURM_ARRAY_TASK_ID=12 SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_STEP=1 SLURM_ARRAY_TASK_COUNT=10", "");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "task 2 of 10 (0-based), from SLURM_ARRAY_TASK_ID=12")) << r.err;
  // Out of range or off the step: named, not "--task-index".
  r = run("SLURM_ARRAY_TASK_ID=7 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_STEP=2 SLURM_ARRAY_TASK_COUNT=5", "");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "shard convert: SLURM_ARRAY_TASK_ID=7, SLURM_ARRAY_TASK_MIN=0, SLURM_ARRAY_TASK_STEP=2, "
            "SLURM_ARRAY_TASK_COUNT=5: not one of the array's 5 tasks (MIN + k * STEP, k in 0..4); an array "
            "given as a list (--array=1,5,9) has no step: give --num-tasks N and --task-index I\n");
  r = run("SLURM_ARRAY_TASK_ID=9 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=4", "");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "SLURM_ARRAY_TASK_ID=9, SLURM_ARRAY_TASK_MIN=0, SLURM_ARRAY_TASK_COUNT=4: not one of"))
      << r.err;
  EXPECT_FALSE(Contains(r.err, "--task-index:")) << r.err;
  r = run("SLURM_ARRAY_TASK_ID=x1 SLURM_ARRAY_TASK_COUNT=4", "");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "shard convert: SLURM_ARRAY_TASK_ID='x1' is not a task number\n");
  // Explicit flags win over a broken environment.
  r = run("SLURM_ARRAY_TASK_ID=x1", "--num-tasks 2 --task-index 1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Issue 23 item 9: --alpha keep with --format jpeg is refused up front
// (exit 2, nothing written) instead of rejecting every image with alpha.
TEST(ConvertCliTest, AlphaKeepWithJpegIsAUsageError) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  Result r = RunShard("convert -q " + dir + "/in -o " + dir + "/out --alpha keep");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err,
            "shard convert: --alpha keep needs --format png or raw: JPEG has no alpha channel (every image "
            "with alpha would be rejected); --alpha composite flattens it over the background\n");
  EXPECT_FALSE(fs::exists(dir + "/out"));
  r = RunShard("convert -q " + dir + "/in -o " + dir + "/out --alpha keep --format png");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Issue 23 item 12: a colour-mask reject names the mask file and the
// class_dict.csv; in task mode the summary points at the task's manifest,
// not at a rejects.tsv that only the merge writes.
TEST(ConvertCliTest, MaskRejectsNameTheirFilesAndTaskSummaryNamesTheTaskManifest) {
  const std::string dir = MakeTempDir();
  testing::MakeColourMaskSet(dir, 2, 6, 4);
  WriteFileOrDie(dir + "/class_dict.csv", "name,r,g,b\nonly,1,2,3\n");  // the masks' colours are not in it
  Result r = RunShard("convert -q " + dir + "/in -o " + dir + "/out --masks " + dir + "/masks --mask-labels " + dir +
                      "/class_dict.csv --format png");
  EXPECT_EQ(r.exit_code, 1) << r.err;  // nothing converted
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->rejects_size(), 2);
  EXPECT_TRUE(
      Contains(m->rejects(0).reason(), "mask " + dir + "/masks/img0.png (colours of " + dir + "/class_dict.csv): "))
      << m->rejects(0).reason();

  const std::string in = dir + "/many";
  WriteTreeFile(in, "c/good.png", PngBytes(4, 4, 3, 1));
  for (int i = 0; i < 60; ++i) WriteTreeFile(in, "c/bad" + std::to_string(i) + ".png", "not an image");
  r = RunShard("convert " + in + " -o " + dir + "/tasks --records-per-shard 1 --num-tasks 2 --task-index 0");
  EXPECT_TRUE(Contains(r.err, "more rejects in " + dir +
                                  "/tasks/.libshard/manifest.task-00000-of-00002.json "
                                  "(rejects.tsv once shard merge has run)\n"))
      << r.err;
  EXPECT_FALSE(Contains(r.err, "rejects.tsv\n")) << r.err;
}

// Issue 23 item 14: --records-per-shard says what it guarantees (inputs
// planned, at most N, spread evenly; a reject leaves a shard short), which
// the plan and the manifest bear out: 25 inputs at 10 are 3 shards of 9, 8
// and 8 planned, a reject making one record fewer.
TEST(ConvertCliTest, RecordsPerShardIsAnUpperBoundOnPlannedInputs) {
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

// Issue 23 item 16: gray sources stored as RGB by default are counted in
// the dry run and the summary, with the flag that keeps them gray.
TEST(ConvertCliTest, GraySourcesExpandedToRgbAreSaid) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");  // dog/c.png is gray
  WriteTreeFile(dir + "/in", "cat/g.jpg", JpegBytes(8, 8, 1, 9));
  Result dry = RunShard("convert --dry-run " + dir + "/in -o " + dir + "/out");
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_TRUE(Contains(dry.out, "\ngray sources: 2 will be stored as RGB (--channels auto keeps them gray)\n"))
      << dry.out;
  Result r = RunShard("convert " + dir + "/in -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "shard convert: 2 gray source(s) stored as RGB (--channels auto keeps them gray)\n"))
      << r.err;
  Result kept = RunShard("convert --channels auto " + dir + "/in -o " + dir + "/auto");
  EXPECT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_FALSE(Contains(kept.err, "stored as RGB")) << kept.err;
  Result dry_auto = RunShard("convert --dry-run --channels auto " + dir + "/in -o " + dir + "/out2");
  EXPECT_FALSE(Contains(dry_auto.out, "stored as RGB")) << dry_auto.out;
}

// Issue 23 item 15: --resize-mode shorter-side --size N stores each image
// with its shorter side N and its aspect ratio (recorded in the manifest).
TEST(ConvertCliTest, ShorterSideResizeKeepsTheAspectRatio) {
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

// Issue 16 item 15 (and the messages of item 13): --task-index alone, the
// summary after a resume, the dry-run headline of `.`, the output format
// and channel count in the dry run and the summary.
TEST(ConvertCliTest, MessagesNameTasksResumeFolderAndOutputFormat) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  MakeSmallTree(in);
  const std::string no_env =
      "env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_COUNT -u SLURM_ARRAY_TASK_MIN "
      "-u JOB_COMPLETION_INDEX ";
  Result alone = testing::RunCommand(no_env + SHARD_BIN + " convert -q " + in + " -o " + dir + "/t --task-index 1");
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_EQ(alone.err,
            "shard convert: --task-index 1 needs --num-tasks N (the number of tasks the work is split "
            "into, or SLURM_ARRAY_TASK_COUNT)\n");

  const std::string out = dir + "/out";
  Result first = RunShard("convert " + in + " -o " + out + " --records-per-shard 1");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_TRUE(Contains(first.err, "shard convert: 4 converted in this run (4 shards written); ")) << first.err;
  EXPECT_TRUE(Contains(first.err, "; jpeg quality 90 (JPEGs needing no change copied), 3 channels (rgb); "))
      << first.err;
  fs::remove(out + "/in-train-00002-of-00004.tfrecord");
  Result resumed = RunShard("convert " + in + " -o " + out + " --records-per-shard 1 --channels gray --format png");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_TRUE(Contains(resumed.err, "shard convert: 4 converted in this run (4 shards written); ")) << resumed.err;
  EXPECT_TRUE(Contains(resumed.err, "; png, 1 channel (gray); ")) << resumed.err;
  fs::remove(out + "/in-train-00002-of-00004.tfrecord");
  resumed = RunShard("convert " + in + " -o " + out + " --records-per-shard 1 --channels gray --format png");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_TRUE(Contains(resumed.err,
                       "shard convert: 1 converted in this run (1 shards written); 3 kept from an "
                       "earlier run in 3 shard(s), 4 in all; "))
      << resumed.err;

  Result dry = testing::RunCommand("cd " + in + " && " + SHARD_BIN + " convert --dry-run . -o ../dry --channels auto");
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_TRUE(Contains(dry.out, "dry run: 4 samples in " + in + ", 2 classes; nothing written\n")) << dry.out;
  EXPECT_TRUE(Contains(dry.out,
                       "output: 1 shards in ../dry; jpeg quality 90 (JPEGs needing no change copied), 1 "
                       "or 3 channels (auto: gray sources stay gray)\n"))
      << dry.out;
}

// Issue 16 item 2, from the command line: a killed conversion's folder (no
// manifest.json, 6 of 20 shards) fails `shard verify`, which says that it
// had no manifest, in text and JSON.
TEST(ConvertCliTest, VerifyWithoutManifestChecksNumberedSets) {
  const std::string dir = MakeTempDir();
  MakeManyImages(dir + "/in", 20, 8);
  const std::string out = dir + "/out";
  ASSERT_EQ(RunShard("convert -q " + dir + "/in -o " + out + " --records-per-shard 1").exit_code, 0);
  Result whole = RunShard("verify " + out);
  EXPECT_EQ(whole.exit_code, 0) << whole.out;
  fs::remove(out + "/manifest.json");
  for (int i = 6; i < 20; ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "/in-train-%05d-of-00020.tfrecord", i);
    fs::remove(out + name);
  }
  Result r = RunShard("verify " + out);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "shard verify: " + out +
                                  "/in-train-*-of-00020.tfrecord: set_incomplete: 6 of the 20 shards of this set are "
                                  "here; 14 missing (00006, "))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "shard verify: 6 files (0 with faults), 6 records,")) << r.out;
  EXPECT_TRUE(Contains(r.out, " 1 fault, ")) << r.out;
  EXPECT_TRUE(Contains(r.out,
                       "shard verify: no manifest.json given or found: sets checked by their -NNNNN-of-MMMMM "
                       "names only\n"))
      << r.out;
  // A shard named on its own is not held to its siblings.
  Result one = RunShard("verify " + out + "/in-train-00000-of-00020.tfrecord");
  EXPECT_EQ(one.exit_code, 0) << one.out;
  Result j = RunShard("verify --json " + out);
  EXPECT_EQ(j.exit_code, 1);
  EXPECT_TRUE(Contains(j.out, "\"no_manifest\":true")) << j.out;
  EXPECT_TRUE(Contains(j.out, "\"kind\":\"set_incomplete\"")) << j.out;
}

// Issue 12 item 12 from the command line: the re-plan says what it removed.
TEST(ConvertCliTest, RePlanSaysWhichShardsItRemoved) {
  const std::string dir = MakeTempDir();
  MakeSmallTree(dir + "/in");
  const std::string out = dir + "/out";
  ASSERT_EQ(RunShard("convert -q " + dir + "/in -o " + out + " --records-per-shard 1").exit_code, 0);
  Result r = RunShard("convert " + dir + "/in -o " + out + " --records-per-shard 2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "shard convert: removed 4 shard(s) of an earlier plan from " + out +
                                  " (another shard count or split), with their index and entry: "
                                  "in-train-00000-of-00004.tfrecord, in-train-00001-of-00004.tfrecord, "
                                  "in-train-00002-of-00004.tfrecord, in-train-00003-of-00004.tfrecord\n"))
      << r.err;
  EXPECT_FALSE(fs::exists(out + "/in-train-00000-of-00004.tfrecord"));
  EXPECT_FALSE(fs::exists(out + "/in-train-00000-of-00004.tfrecord.idx"));
  EXPECT_FALSE(fs::exists(out + "/.libshard/in-train-00000-of-00004.tfrecord.json"));
  Result v = RunShard("verify " + out);
  EXPECT_EQ(v.exit_code, 0) << v.out;
}

// Starts `shard convert ARGS...` without a shell, so that the pid is the
// converter's own.
// Starts `shard ARGS` with stderr going to `err`.
pid_t Spawn(const std::vector<std::string>& args, const std::string& err = "/dev/null") {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(SHARD_BIN));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, SHARD_BIN, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0);
  return rc == 0 ? pid : -1;
}

TEST(ConvertCliTest, KillNineAndResumeGivesTheSameBytes) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  MakeManyImages(in, 160, 12);
  auto args = [&](const std::string& out) {
    return std::vector<std::string>{"convert", "-q",        in,  "-o",     out, "--records-per-shard",
                                    "4",       "--threads", "2", "--size", "10"};
  };
  const std::string ref_dir = dir + "/ref";
  std::string cmd = "convert -q " + in + " -o " + ref_dir + " --records-per-shard 4 --threads 2 --size 10";
  ASSERT_EQ(RunShard(cmd).exit_code, 0);
  const std::map<std::string, std::string> ref = Snapshot(ref_dir);
  ASSERT_EQ(ref.count("manifest.json"), 1u);

  // Delays 0..300 ms from a fixed LCG: the run is killed at different points.
  constexpr int kRounds = 6;
  uint32_t state = 12345;
  int interrupted = 0;
  for (int round = 0; round < kRounds; ++round) {
    state = state * 1103515245u + 12345u;
    const int delay_ms = round == 0 ? 0 : static_cast<int>((state >> 8) % 301);
    const std::string out = dir + "/out";
    fs::remove_all(out);
    pid_t pid = Spawn(args(out));
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    const bool killed = WIFSIGNALED(status);
    interrupted += killed;
    if (killed && fs::exists(out)) {
      // What a killed run leaves: complete shards under final names only.
      EXPECT_FALSE(fs::exists(out + "/manifest.json") && !fs::exists(out + "/rejects.tsv"));
      ExpectFinalShardsComplete(out, /*with_cli=*/false);
    }
    Result resumed = RunShard("convert -q " + in + " -o " + out + " --records-per-shard 4 --threads 2 --size 10");
    ASSERT_EQ(resumed.exit_code, 0) << "round " << round << " (" << delay_ms << " ms): " << resumed.err;
    EXPECT_EQ(CountDifferences(ref, Snapshot(out)), 0) << "round " << round << " killed after " << delay_ms << " ms";
    ExpectNoTemporaries(out);
  }
  ::testing::Test::RecordProperty("interrupted_runs", interrupted);
  std::printf("kill-and-resume: %d of %d runs were killed before they finished\n", interrupted, kRounds);
}

// Slurm logs, nohup, CI: stderr is not a terminal, and nothing used to be
// printed until the end.
TEST(ConvertCliTest, PlainProgressLinesWhenStderrIsNotATerminal) {
  const std::string dir = MakeTempDir();
  MakeManyImages(dir + "/in", 60, 12);
  Result r = RunShard("convert " + dir + "/in -o " + dir + "/out --threads 1 --progress-interval 0.001");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t lines = 0;
  for (size_t at = r.err.find("shard convert: progress "); at != std::string::npos;
       at = r.err.find("shard convert: progress ", at + 1)) {
    ++lines;
    const std::string line = r.err.substr(at, r.err.find('\n', at) - at);
    EXPECT_TRUE(Contains(line, "/60 (")) << line;
    EXPECT_TRUE(Contains(line, " img/s, ")) << line;
    EXPECT_TRUE(Contains(line, " rejected")) << line;
    EXPECT_FALSE(Contains(line, "\r")) << line;
  }
  EXPECT_GE(lines, 1u) << r.err;
  EXPECT_FALSE(Contains(r.err, "\x1b[")) << r.err;  // no terminal codes in a log
  // The default interval is 10 s: a short run prints only its summary.
  r = RunShard("convert " + dir + "/in -o " + dir + "/out2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(Contains(r.err, "progress")) << r.err;
  EXPECT_TRUE(Contains(r.err, "60 converted")) << r.err;
}

TEST(ConvertCliTest, SigintSaysHowToResumeAndExits130) {
  const std::string dir = MakeTempDir();
  MakeManyImages(dir + "/in", 1500, 24);
  const std::string out = dir + "/out", err = dir + "/err.txt";
  const std::vector<std::string> args = {
      "convert", dir + "/in",           "-o",   out, "--threads", "1", "--format", "png", "--records-per-shard",
      "50",      "--progress-interval", "0.001"};
  pid_t pid = Spawn(args, err);
  ASSERT_GT(pid, 0);
  // Signal once converting has begun (the first progress line).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!Contains(testing::ReadFileOrDie(err), "progress") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  const std::string text = ReadFileOrDie(err);
  ASSERT_TRUE(WIFEXITED(status)) << text;
  ASSERT_EQ(WEXITSTATUS(status), 130) << "the run finished before the signal?\n" << text;
  EXPECT_TRUE(EndsWith(text, "\nshard convert: interrupted; rerun the same command to resume\n")) << text;
  // And the rerun does resume to a complete, verified output.
  Result r = RunShard("convert -q " + dir + "/in -o " + out + " --threads 2 --format png --records-per-shard 50");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(RunShard("verify -q " + out).exit_code, 0);
}

TEST(ConvertCliTest, DiskFullFailsNamingTheFileAndLeavesNoIncompleteShard) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  MakeManyImages(in, 120, 24);
  const std::string flags = " --records-per-shard 6 --format png --threads 2";
  const std::string ref_dir = dir + "/ref";
  ASSERT_EQ(RunShard("convert -q " + in + " -o " + ref_dir + flags).exit_code, 0);
  uint64_t total = 0;
  for (const std::string& f : ListFilesRecursive(ref_dir)) total += fs::file_size(ref_dir + "/" + f);
  // A file size limit well under one shard's size... and under the total.
  const uint64_t shard_bytes = fs::file_size(ref_dir + "/in-train-00000-of-00020.tfrecord");
  ASSERT_GT(total, 8 * shard_bytes);
  const uint64_t limit_kib = std::max<uint64_t>(1, shard_bytes / 2 / 1024);
  const std::string out = dir + "/out";
  Result r = testing::RunCommand("bash -c 'ulimit -f " + std::to_string(limit_kib) + "; trap \"\" XFSZ; exec " +
                                 SHARD_BIN + " convert -q " + in + " -o " + out + flags + "'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Contains(r.err, out + "/")) << r.err;
  EXPECT_TRUE(Contains(r.err, "File too large") || Contains(r.err, "EFBIG") || Contains(r.err, "too large")) << r.err;
  EXPECT_FALSE(fs::exists(out + "/manifest.json"));
  ExpectNoTemporaries(out);
  ExpectFinalShardsComplete(out);
  // Space again: the run completes and matches an uninterrupted one.
  Result again = RunShard("convert -q " + in + " -o " + out + flags);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(CountDifferences(Snapshot(ref_dir), Snapshot(out)), 0);
}

// Issue 12 item 21: a full disk while writing a shard's entry, rejects.tsv
// or manifest.json left its `.tmp` behind. Tiny shards (one 4x4 PNG each,
// about 420 bytes) and a per-file size limit put the failure on each of
// those files in turn.
TEST(ConvertCliTest, DiskFullAtEachMetadataFileLeavesNoTemporaries) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  for (int i = 0; i < 8; ++i)
    WriteTreeFile(in, std::string(i % 2 ? "a" : "b") + "/" + std::to_string(i) + ".png", PngBytes(4, 4, 3, i));
  const std::string flags = " --records-per-shard 1 --format png --threads 2";
  struct Case {
    const char* what;  // the file the limit stops
    int limit_kib;
    int strays;  // files outside any class folder: listing rejects, only in rejects.tsv and manifest.json
  };
  // A shard's entry (one image's fingerprints, about 0.8 KiB: 1.9 KiB in all) fits under 3 KiB,
  // and 60 strays' reject lines do not.
  for (const Case& c : {Case{".libshard/in-train-00000-of-00008.tfrecord.json", 1, 0}, Case{"rejects.tsv", 3, 60},
                        Case{"manifest.json", 4, 0}}) {
    SCOPED_TRACE(c.what);
    for (int i = 0; i < c.strays; ++i) {
      WriteTreeFile(in, "stray_file_outside_any_class_folder_with_a_long_name_" + std::to_string(1000 + i) + ".png",
                    "x");
    }
    const std::string out = dir + "/out" + std::to_string(c.limit_kib);
    Result r = testing::RunCommand("bash -c 'ulimit -f " + std::to_string(c.limit_kib) + "; trap \"\" XFSZ; exec " +
                                   SHARD_BIN + " convert -q " + in + " -o " + out + flags + "'");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(Contains(r.err, out + "/" + c.what + ".tmp")) << r.err;
    EXPECT_FALSE(fs::exists(out + "/manifest.json"));
    ExpectNoTemporaries(out);
    ExpectFinalShardsComplete(out, /*with_cli=*/false);
    for (int i = 0; i < c.strays; ++i) {
      fs::remove(in + "/stray_file_outside_any_class_folder_with_a_long_name_" + std::to_string(1000 + i) + ".png");
    }
  }
}

}  // namespace
}  // namespace libshard
