// `shard convert`'s exit codes as docs/cli.md states them: 0 when every
// input converted, 3 when some were rejected (rejects.tsv names them, and a
// rerun says so again), 1 for a fatal error or nothing converted (every input
// rejected, out of memory on each image), 2 for a usage error or an
// unreadable argument, refused before anything is written.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "convert/fixtures.h"
#include "convert_cli_fixtures.h"
#include "libshard/manifest/manifest_json.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::ExpectFinalShardsComplete;
using testing::ExpectNoTemporaries;
using testing::MakeSmallTree;
using testing::MakeTempDir;
using testing::PngBytes;
using testing::ReadFileOrDie;
using testing::RunShard;
using testing::WriteFileOrDie;
using testing::WriteTreeFile;
using Result = testing::CommandResult;

TEST(ConvertExitCodesCliTest, AllConvertedExitsZero) {
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

TEST(ConvertExitCodesCliTest, RejectedInputExitsThreeAndIsListed) {
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

// --voc / --yolo annotations that no image matches (a wrong folder): the
// dry run and the summary give the matched, unannotated and missing counts
// and the boxes, and the run fails with COCO's code (3) instead of storing
// images without boxes as a success.
TEST(ConvertExitCodesCliTest, AnnotationsMatchingNoImageExitThree) {
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

// --size 65535: 12.9 GB per output image, under a 2 GB address-space limit.
// Each image is a reject, never std::bad_alloc aborting the run; with
// every input rejected, nothing is converted: exit 1 (issue 23 item 11).
TEST(ConvertExitCodesCliTest, OutOfMemoryRejectsEachImageAndNothingConvertedExitsOne) {
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

TEST(ConvertExitCodesCliTest, FatalErrorsExitOne) {
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
TEST(ConvertExitCodesCliTest, UnreadableOrInvalidArgumentsExitTwoBeforeWriting) {
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

TEST(ConvertExitCodesCliTest, UsageErrorsExitTwo) {
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

TEST(ConvertExitCodesCliTest, BadPrefixesAndHeaderOnlyCsvExitTwo) {
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

// Issue 23 item 11: exit codes as docs/cli.md states them. Every input
// rejected is "nothing converted" (1, not 3); `shard merge` of a missing
// folder is a usage error (2); a --prefix too long for a file name is a
// usage error (2) before anything is created.
TEST(ConvertExitCodesCliTest, ExitCodesForNothingConvertedMissingMergeFolderAndLongPrefix) {
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

// Issue 23 item 9: --alpha keep with --format jpeg is refused up front
// (exit 2, nothing written) instead of rejecting every image with alpha.
TEST(ConvertExitCodesCliTest, AlphaKeepWithJpegIsAUsageError) {
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

}  // namespace
}  // namespace libshard
