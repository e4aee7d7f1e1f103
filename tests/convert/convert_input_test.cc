// What `shard convert` accepts from its input and what it refuses, so that
// nothing it writes is refused later by the project's own reader and no
// label shifts without a word: 16-bit gray label PNGs (issue 30 item 14),
// class folders without images (issue 32 item 3), an input without images
// (issue 32 item 4).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "fixtures.h"
#include "libshard/manifest/manifest_json.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::MakeTempDir;
using testing::PngBytes;
using testing::ReadFileOrDie;
using testing::RunShard;
using testing::WriteTreeFile;
using Result = testing::CommandResult;

std::string Mask16Path() { return testing::SourceDir() + "/tests/image/golden/mask_gray16.png"; }

// A 16-bit gray label PNG written by Pillow (tests/image/make_golden.py
// make_masks: classes 0..6 and 255) converts to the same 8-bit classes, and
// the output passes the project's own decode check.
TEST(ConvertInputTest, SixteenBitGrayMasksWithClassValuesConvertAndRead) {
  const std::string dir = MakeTempDir();
  const std::string mask = ReadFileOrDie(Mask16Path());
  for (int k = 0; k < 2; ++k) {
    WriteTreeFile(dir + "/in", "img" + std::to_string(k) + ".png", PngBytes(29, 17, 3, 5 + k));
    WriteTreeFile(dir + "/masks", "img" + std::to_string(k) + ".png", mask);
  }
  Result r = RunShard("convert -q " + dir + "/in -o " + dir + "/out --masks " + dir + "/masks --format png");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->rejects_size(), 0);
  std::map<int64_t, uint64_t> expected;  // make_golden.py mask16_values(29, 17), twice
  for (int y = 0; y < 17; ++y) {
    for (int x = 0; x < 29; ++x) expected[x < 4 && y < 4 ? 255 : (x + 2 * y) / 5 % 7] += 2;
  }
  EXPECT_EQ(testing::CountOutputMaskPixels(dir + "/out"), expected);
  Result v = RunShard("verify --decode " + dir + "/out");
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

// Values above 255 are no 8-bit class: the sample is rejected, naming the
// mask and the value, and nothing the reader refuses is written.
TEST(ConvertInputTest, SixteenBitGrayMasksAbove255AreRejectedNamingTheFile) {
  const std::string png = testing::SharedPath("interop/pngsuite/basn0g16.png");  // 32x32, 0..65535
  if (png.empty()) GTEST_SKIP() << "shared interop/pngsuite not found";
  const std::string dir = MakeTempDir();
  WriteTreeFile(dir + "/in", "a.png", PngBytes(32, 32, 3, 1));
  WriteTreeFile(dir + "/masks", "a.png", ReadFileOrDie(png));
  WriteTreeFile(dir + "/in", "b.png", PngBytes(29, 17, 3, 2));
  WriteTreeFile(dir + "/masks", "b.png", ReadFileOrDie(Mask16Path()));
  Result r = RunShard("convert -q " + dir + "/in -o " + dir + "/out --masks " + dir + "/masks --format png");
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok()) << m.status() << r.err;
  ASSERT_EQ(m->rejects_size(), 1);
  EXPECT_TRUE(Contains(m->rejects(0).reason(), "mask " + dir + "/masks/a.png: index mask: 16-bit gray value "))
      << m->rejects(0).reason();
  EXPECT_TRUE(Contains(m->rejects(0).reason(), "is above 255; class indices are 0..255")) << m->rejects(0).reason();
  EXPECT_EQ(m->stats().converted(), 1u);
  Result v = RunShard("verify --decode " + dir + "/out");
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

// Classes autumn and winter under train/, and train/annotations/ holding
// only a JSON file.
void MakeSeasons(const std::string& in) {
  for (const char* cls : {"autumn", "winter"}) {
    for (int k = 0; k < 2; ++k) {
      WriteTreeFile(in, std::string("train/") + cls + "/" + std::to_string(k) + ".png", PngBytes(8, 8, 3, k));
    }
  }
  WriteTreeFile(in, "train/annotations/boxes.json", "{}");
}

std::map<std::string, int64_t> LabelsOf(const std::string& out) {
  std::map<std::string, int64_t> labels;
  StatusOr<Manifest> m = manifest::ReadManifest(out + "/manifest.json");
  EXPECT_TRUE(m.ok()) << m.status();
  if (m.ok()) {
    for (const auto& l : m->labels()) labels[l.name()] = l.label();
  }
  return labels;
}

TEST(ConvertInputTest, AClassFolderWithoutImagesIsRefusedNamingWhatItHolds) {
  const std::string dir = MakeTempDir(), in = dir + "/in";
  MakeSeasons(in);
  Result r = RunShard("convert -q " + in + " -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "class folder " + in +
                                  "/train/annotations holds 1 file(s) and no image (.json 1): it would become class "
                                  "'annotations' and shift the labels of the classes after it"))
      << r.err;
  EXPECT_TRUE(Contains(r.err, "--keep-empty-classes")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out/manifest.json"));
  r = RunShard("convert -q --dry-run " + in + " -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 2) << r.err;

  // Kept when asked (warned), or when --labels names the classes.
  r = RunShard("convert " + in + " -o " + dir + "/kept --keep-empty-classes");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "class 'annotations' keeps its label (--keep-empty-classes)")) << r.err;
  EXPECT_EQ(LabelsOf(dir + "/kept"),
            (std::map<std::string, int64_t>{{"annotations", 0}, {"autumn", 1}, {"winter", 2}}));
  testing::WriteFileOrDie(dir + "/labels.txt", "autumn\nwinter\n");
  r = RunShard("convert -q " + in + " -o " + dir + "/labelled --labels " + dir + "/labels.txt");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(LabelsOf(dir + "/labelled"), (std::map<std::string, int64_t>{{"autumn", 0}, {"winter", 1}}));
}

TEST(ConvertInputTest, AnEarlierOutputInsideTheInputIsNotAClass) {
  const std::string dir = MakeTempDir(), in = dir + "/in";
  for (const char* cls : {"cat", "dog"}) WriteTreeFile(in, std::string(cls) + "/a.png", PngBytes(8, 8, 3, 1));
  ASSERT_EQ(RunShard("convert -q " + in + " -o " + dir + "/first").exit_code, 0);
  fs::rename(dir + "/first", in + "/first");
  Result r = RunShard("convert -q " + in + " -o " + dir + "/second");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "class folder " + in + "/first holds ")) << r.err;
  EXPECT_TRUE(Contains(r.err, "like an earlier `shard convert` output")) << r.err;
}

TEST(ConvertInputTest, AnInputWithoutImagesFailsSayingWhatItFound) {
  const std::string dir = MakeTempDir();
  fs::create_directories(dir + "/empty");
  Result r = RunShard("convert -q " + dir + "/empty -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Contains(r.err, dir + "/empty: found no images (the folder is empty); nothing to convert")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out/manifest.json"));
  WriteTreeFile(dir + "/docs", "a.md", "# a");
  WriteTreeFile(dir + "/docs", "b.md", "# b");
  r = RunShard("convert -q " + dir + "/docs -o " + dir + "/out");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Contains(r.err, dir + "/docs: found no images (skipped 2 non-image file(s): .md 2)")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out/manifest.json"));
}

// verify of a manifest of no records is a fault unless --allow-empty.
TEST(ConvertInputTest, VerifyOfAnEmptyManifestFailsUnlessAllowed) {
  const std::string dir = MakeTempDir();
  testing::WriteFileOrDie(dir + "/manifest.json",
                          "{\"format\": \"libshard.manifest/1\", \"complete\": true, \"splits\": [{\"name\": "
                          "\"train\", \"records\": 0}]}");
  Result v = RunShard("verify " + dir);
  EXPECT_EQ(v.exit_code, 1) << v.out << v.err;
  EXPECT_TRUE(Contains(v.out + v.err, "manifest_empty: the manifest lists no records")) << v.out << v.err;
  v = RunShard("verify --allow-empty " + dir);
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

}  // namespace
}  // namespace libshard
