// What `shard convert` tells its user: the dry run (text and --json:
// counts, formats, risky inputs; nothing written), the summary (the output
// format and channels, gray sources stored as RGB, what a resume kept),
// plain progress lines when stderr is not a terminal, reject reasons naming
// their files, and odd or non-UTF-8 file names escaped, never dropped, in
// rejects.tsv, manifest.json and the JSON outputs.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "convert/fixtures.h"
#include "convert_cli_fixtures.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/text_escape.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::JpegBytes;
using testing::MakeManyImages;
using testing::MakeSmallTree;
using testing::MakeTempDir;
using testing::PngBytes;
using testing::ReadFileOrDie;
using testing::RunShard;
using testing::WriteFileOrDie;
using testing::WriteTreeFile;
using Result = testing::CommandResult;

bool ValidUtf8(const std::string& s) { return IsValidUtf8(s); }

// Non-UTF-8 and odd file names: rejects.tsv and manifest.json keep every byte
// through the documented escape (\\, \t, \n, \xHH); --json outputs stay
// valid UTF-8 (\udcXX for a byte that is not UTF-8).
TEST(ConvertMessagesCliTest, OddFileNamesAreEscapedNeverDropped) {
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

TEST(ConvertMessagesCliTest, DryRunWritesNothingAndPrintsCounts) {
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

TEST(ConvertMessagesCliTest, DryRunJsonFlagsRiskyInputs) {
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

// Issue 23 item 12: a colour-mask reject names the mask file and the
// class_dict.csv; in task mode the summary points at the task's manifest,
// not at a rejects.tsv that only the merge writes.
TEST(ConvertMessagesCliTest, MaskRejectsNameTheirFilesAndTaskSummaryNamesTheTaskManifest) {
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

// Issue 23 item 16: gray sources stored as RGB by default are counted in
// the dry run and the summary, with the flag that keeps them gray.
TEST(ConvertMessagesCliTest, GraySourcesExpandedToRgbAreSaid) {
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

// Issue 16 item 15 (and the messages of item 13): --task-index alone, the
// summary after a resume, the dry-run headline of `.`, the output format
// and channel count in the dry run and the summary.
TEST(ConvertMessagesCliTest, MessagesNameTasksResumeFolderAndOutputFormat) {
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

// Slurm logs, nohup, CI: stderr is not a terminal, and nothing used to be
// printed until the end.
TEST(ConvertMessagesCliTest, PlainProgressLinesWhenStderrIsNotATerminal) {
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

}  // namespace
}  // namespace libshard
