// Source listing: every folder layout, labels files, the val split, CSV/TSV
// manifests and mask matching, on trees of real PNG/JPEG files.
#include "libshard/convert/source_listing.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>

#include "fixtures.h"
#include "testutil.h"

namespace libshard::convert {
namespace {

namespace fs = std::filesystem;
using testing::JpegBytes;
using testing::MakeTempDir;
using testing::PngBytes;
using testing::WriteFileOrDie;
using testing::WriteTreeFile;

using testing::Contains;

std::vector<std::string> Paths(const Listing& l) {
  std::vector<std::string> out;
  for (const SourceSample& s : l.samples) out.push_back(s.path);
  return out;
}

const ListingReject* FindReject(const Listing& l, const std::string& path) {
  for (const ListingReject& r : l.rejects) {
    if (r.path == path) return &r;
  }
  return nullptr;
}

const SourceSample* FindSample(const Listing& l, const std::string& path) {
  for (const SourceSample& s : l.samples) {
    if (s.path == path) return &s;
  }
  return nullptr;
}

TEST(SourceListingTest, ClassPerFolderLabelsAreSortedNames) {
  const std::string root = MakeTempDir();
  const std::string png = PngBytes(5, 4, 3, 1);
  WriteTreeFile(root, "zebra/a.png", png);
  WriteTreeFile(root, "ant/b.jpg", JpegBytes(8, 8, 3, 2));
  WriteTreeFile(root, "ant/c.png", png);
  WriteTreeFile(root, "moth/d.bmp", "not an image");  // an image type: a candidate, rejected later by content
  StatusOr<Listing> l = ListFolder(root + "/", ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->root, root);
  EXPECT_EQ(l->class_names, (std::vector<std::string>{"ant", "moth", "zebra"}));
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"ant/b.jpg", "ant/c.png", "moth/d.bmp", "zebra/a.png"}));
  EXPECT_EQ(l->samples[0].label, 0);
  EXPECT_EQ(l->samples[1].label, 0);
  EXPECT_EQ(l->samples[2].label, 1);
  EXPECT_EQ(l->samples[3].label, 2);
  EXPECT_EQ(l->samples[3].size, png.size());
  EXPECT_EQ(l->splits, (std::vector<std::string>{"train"}));
  for (const SourceSample& s : l->samples) {
    EXPECT_EQ(s.split, "train");
    EXPECT_TRUE(s.mask_path.empty());
  }
  EXPECT_TRUE(l->rejects.empty());
}

TEST(SourceListingTest, SplitFoldersBecomeSplits) {
  const std::string root = MakeTempDir();
  const std::string png = PngBytes(4, 4, 1, 3);
  WriteTreeFile(root, "train/cat/1.png", png);
  WriteTreeFile(root, "train/dog/2.png", png);
  WriteTreeFile(root, "val/dog/3.png", png);
  WriteTreeFile(root, "test/cat/4.png", png);
  WriteTreeFile(root, "extra/cat/5.png", png);  // not a split name
  WriteTreeFile(root, "README", "text");        // a file beside splits
  StatusOr<Listing> l = ListFolder(root, ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->splits, (std::vector<std::string>{"test", "train", "val"}));
  EXPECT_EQ(l->class_names, (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(l->samples.size(), 4u);
  // Sorted by split, then path.
  EXPECT_EQ(Paths(*l),
            (std::vector<std::string>{"test/cat/4.png", "train/cat/1.png", "train/dog/2.png", "val/dog/3.png"}));
  EXPECT_EQ(l->samples[0].split, "test");
  EXPECT_EQ(l->samples[0].label, 0);
  EXPECT_EQ(l->samples[3].split, "val");
  EXPECT_EQ(l->samples[3].label, 1);
  ASSERT_NE(FindReject(*l, "extra"), nullptr);
  ASSERT_NE(FindReject(*l, "README"), nullptr);
  EXPECT_TRUE(Contains(FindReject(*l, "README")->reason, "beside the split folders"));
}

// Issue 23 item 2: split folders named as downloaded datasets name them
// (Train/Test, Training/Testing, valid, validation, dev) are splits, not
// classes; the layout found is said; --layout forces one; a class that
// looks like a split is warned about.
TEST(SourceListingTest, SplitFolderNamesAreCaseInsensitiveWithAliases) {
  const std::string png = PngBytes(3, 3, 3, 1);
  const std::string base = MakeTempDir();
  struct Case {
    std::vector<std::string> folders;
    std::vector<std::string> splits;
  };
  for (const Case& c :
       {Case{{"Train", "Test"}, {"test", "train"}}, Case{{"Training", "Testing"}, {"test", "train"}},
        Case{{"TRAIN", "valid"}, {"train", "valid"}}, Case{{"train", "Validation"}, {"train", "validation"}},
        Case{{"train", "dev"}, {"train", "val"}}}) {
    const std::string root = base + "/" + c.folders[0];
    for (const std::string& f : c.folders) {
      for (const char* cls : {"ant", "bee", "cat"}) WriteTreeFile(root, f + "/" + cls + "/1.png", png);
    }
    StatusOr<Listing> l = ListFolder(root, ListOptions{});
    ASSERT_TRUE(l.ok()) << l.status();
    SCOPED_TRACE(c.folders[0] + "," + c.folders[1]);
    EXPECT_EQ(l->splits, c.splits);
    EXPECT_EQ(l->class_names, (std::vector<std::string>{"ant", "bee", "cat"}));
    EXPECT_EQ(l->layout, "split/class");
    EXPECT_TRUE(l->rejects.empty());
    EXPECT_TRUE(l->warnings.empty()) << l->warnings[0];
    fs::remove_all(root);
  }
  const std::string root = base + "/data";
  for (const char* f : {"Training/ant/1.png", "Training/bee/2.png", "Testing/ant/3.png"}) WriteTreeFile(root, f, png);
  StatusOr<Listing> l = ListFolder(root, ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(LayoutSummary(*l),
            "layout split/class: split test (folder Testing) 1 samples in 1 classes, "
            "split train (folder Training) 2 samples in 2 classes");
  // --layout class: the top-level folders are classes, with a warning.
  ListOptions o;
  o.layout = FolderLayout::kClass;
  l = ListFolder(root, o);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->class_names, (std::vector<std::string>{"Testing", "Training"}));
  EXPECT_EQ(l->layout, "class");
  ASSERT_EQ(l->warnings.size(), 2u);
  EXPECT_EQ(l->warnings[0], "top-level folder 'Testing' looks like a split but was taken as a class (--layout class)");
  // --layout flat: every file below, unlabeled.
  o.layout = FolderLayout::kFlat;
  l = ListFolder(root, o);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"Testing/ant/3.png", "Training/ant/1.png", "Training/bee/2.png"}));
  EXPECT_EQ(l->samples[0].label, -1);
  EXPECT_EQ(l->layout, "flat");
  // --layout split/class: any top-level name is a split.
  WriteTreeFile(root, "extra/ant/4.png", png);
  o.layout = FolderLayout::kSplitClass;
  l = ListFolder(root, o);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->splits, (std::vector<std::string>{"extra", "test", "train"}));
  // Auto: a class that looks like a split (COCO's train2017) is warned about.
  const std::string coco = base + "/coco";
  WriteTreeFile(coco, "train2017/1.png", png);
  WriteTreeFile(coco, "val2017/2.png", png);
  l = ListFolder(coco, ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->layout, "class");
  ASSERT_EQ(l->warnings.size(), 2u);
  EXPECT_EQ(l->warnings[0],
            "top-level folder 'train2017' looks like a split but was taken as a class; --layout "
            "split/class makes the top-level folders splits");
  // Two folders naming one split are refused.
  WriteTreeFile(root, "train/ant/5.png", png);
  l = ListFolder(root, ListOptions{});
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().message(), "folders Training and train of " + root +
                                      " both name split 'train'; merge or rename one (or --layout class: the "
                                      "top-level folders are classes)");
}

TEST(SourceListingTest, FlatFoldersAreUnlabeled) {
  const std::string root = MakeTempDir();
  WriteTreeFile(root, "b.png", PngBytes(3, 3, 3, 1));
  WriteTreeFile(root, "a.jpg", JpegBytes(8, 8, 1, 1));
  StatusOr<Listing> l = ListFolder(root, ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"a.jpg", "b.png"}));
  EXPECT_TRUE(l->class_names.empty());
  for (const SourceSample& s : l->samples) EXPECT_EQ(s.label, -1);

  // Flat split folders: unlabeled samples per split.
  const std::string root2 = MakeTempDir() + "_splits";
  WriteTreeFile(root2, "train/x.png", PngBytes(3, 3, 3, 1));
  WriteTreeFile(root2, "val/y.png", PngBytes(3, 3, 3, 2));
  StatusOr<Listing> l2 = ListFolder(root2, ListOptions{});
  ASSERT_TRUE(l2.ok()) << l2.status();
  EXPECT_EQ(Paths(*l2), (std::vector<std::string>{"train/x.png", "val/y.png"}));
  EXPECT_EQ(l2->samples[1].split, "val");
  EXPECT_EQ(l2->samples[1].label, -1);
  fs::remove_all(root2);
}

TEST(SourceListingTest, FileBesideClassFoldersIsRejected) {
  const std::string root = MakeTempDir();
  WriteTreeFile(root, "cat/1.png", PngBytes(3, 3, 3, 1));
  WriteTreeFile(root, "stray.png", PngBytes(3, 3, 3, 2));
  StatusOr<Listing> l = ListFolder(root, ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"cat/1.png"}));
  const ListingReject* r = FindReject(*l, "stray.png");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(Contains(r->reason, "outside any class")) << r->reason;
}

TEST(SourceListingTest, HiddenFilesAndFoldersAreSkipped) {
  const std::string root = MakeTempDir();
  const std::string png = PngBytes(3, 3, 3, 1);
  WriteTreeFile(root, "cat/1.png", png);
  WriteTreeFile(root, "cat/.DS_Store", "junk");
  WriteTreeFile(root, "cat/.thumbs/2.png", png);
  WriteTreeFile(root, ".git/objects/x.png", png);
  WriteTreeFile(root, ".hiddenclass/3.png", png);
  StatusOr<Listing> l = ListFolder(root, ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"cat/1.png"}));
  EXPECT_EQ(l->class_names, (std::vector<std::string>{"cat"}));
  EXPECT_TRUE(l->rejects.empty());
}

TEST(SourceListingTest, NestedFoldersInsideAClassKeepItsLabel) {
  const std::string root = MakeTempDir();
  const std::string png = PngBytes(3, 3, 3, 1);
  WriteTreeFile(root, "a/x/y/deep.png", png);
  WriteTreeFile(root, "a/top.png", png);
  WriteTreeFile(root, "b/z/1.png", png);
  StatusOr<Listing> l = ListFolder(root, ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"a/top.png", "a/x/y/deep.png", "b/z/1.png"}));
  EXPECT_EQ(FindSample(*l, "a/x/y/deep.png")->label, 0);
  EXPECT_EQ(FindSample(*l, "b/z/1.png")->label, 1);
  EXPECT_EQ(l->class_names, (std::vector<std::string>{"a", "b"}));
}

TEST(SourceListingTest, SymlinkLoopIsWalkedOnce) {
  const std::string root = MakeTempDir();
  const std::string png = PngBytes(3, 3, 3, 1);
  WriteTreeFile(root, "cat/sub/1.png", png);
  WriteTreeFile(root, "dog/2.png", png);
  // Links to ancestors: the class folder itself and the root.
  ASSERT_EQ(::symlink("..", (root + "/cat/sub/up").c_str()), 0);
  ASSERT_EQ(::symlink(root.c_str(), (root + "/dog/root").c_str()), 0);
  StatusOr<Listing> l = ListFolder(root, ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"cat/sub/1.png", "dog/2.png"}));
  // A link to a sibling file is followed like a file.
  ASSERT_EQ(::symlink((root + "/dog/2.png").c_str(), (root + "/cat/alias.png").c_str()), 0);
  l = ListFolder(root, ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_NE(FindSample(*l, "cat/alias.png"), nullptr);
  EXPECT_EQ(FindSample(*l, "cat/alias.png")->size, png.size());
}

// Issue 23 item 3: folder links are de-duplicated on loops only. Three
// links to one folder, in two classes, give three listed copies (the old
// walker kept the first and left bravo empty, alpha/b dropped).
TEST(SourceListingTest, FolderReachedByTwoLinksIsListedAtEachPlace) {
  const std::string base = MakeTempDir();
  const std::string root = base + "/dup";
  WriteTreeFile(base, "real/x.png", PngBytes(3, 3, 3, 1));
  fs::create_directories(root + "/alpha");
  fs::create_directories(root + "/bravo");
  for (const char* link : {"alpha/a", "alpha/b", "bravo/c"}) {
    ASSERT_EQ(::symlink((base + "/real").c_str(), (root + "/" + link).c_str()), 0);
  }
  StatusOr<Listing> l = ListFolder(root, ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"alpha/a/x.png", "alpha/b/x.png", "bravo/c/x.png"}));
  EXPECT_EQ(l->samples[2].label, 1);
  EXPECT_TRUE(l->warnings.empty()) << l->warnings[0];
  // A loop is still cut, and said.
  ASSERT_EQ(::symlink(root.c_str(), (base + "/real/up").c_str()), 0);
  l = ListFolder(root, ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"alpha/a/x.png", "alpha/b/x.png", "bravo/c/x.png"}));
  ASSERT_EQ(l->warnings.size(), 3u);
  EXPECT_EQ(l->warnings[0], "folder alpha/a/up is a link back to the input folder (a loop): not followed");
}

TEST(SourceListingTest, BrokenSymlinkIsRejected) {
  const std::string root = MakeTempDir();
  WriteTreeFile(root, "cat/1.png", PngBytes(3, 3, 3, 1));
  ASSERT_EQ(::symlink((root + "/nowhere.png").c_str(), (root + "/cat/broken.png").c_str()), 0);
  StatusOr<Listing> l = ListFolder(root, ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"cat/1.png"}));
  const ListingReject* r = FindReject(*l, "cat/broken.png");
  ASSERT_NE(r, nullptr);
  // Issue 32: the reason says it is a link, where it points and that it dangles.
  EXPECT_EQ(r->reason, "symbolic link to " + root +
                           "/nowhere.png, which cannot be followed: No such file or directory (a dangling link)");
}

// Issue 32: the folder of resource forks macOS's zip adds is skipped, not
// rejected (nor a class).
TEST(SourceListingTest, MacZipResourceForksAreSkipped) {
  const std::string root = MakeTempDir();
  WriteTreeFile(root, "cat/1.png", PngBytes(3, 3, 3, 1));
  WriteTreeFile(root, "__MACOSX/cat/._1.png", "\x00\x05\x16\x07 AppleDouble");
  WriteTreeFile(root, "cat/__MACOSX/._1.png", "\x00\x05\x16\x07 AppleDouble");
  StatusOr<Listing> l = ListFolder(root, ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"cat/1.png"}));
  EXPECT_TRUE(l->rejects.empty()) << l->rejects[0].path << ": " << l->rejects[0].reason;
  EXPECT_EQ(l->class_names, (std::vector<std::string>{"cat"}));
}

TEST(SourceListingTest, MissingRootIsNotFound) {
  StatusOr<Listing> l = ListFolder(MakeTempDir() + "/nope", ListOptions{});
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(l.status().message(), "nope"));
}

TEST(SourceListingTest, LabelsFileSetsOrderAndRejectsUnknownClasses) {
  const std::string root = MakeTempDir() + "/data";
  const std::string png = PngBytes(3, 3, 3, 1);
  WriteTreeFile(root, "apple/1.png", png);
  WriteTreeFile(root, "pear/2.png", png);
  WriteTreeFile(root, "kiwi/3.png", png);
  const std::string labels = root + "/../labels.txt";
  WriteFileOrDie(labels, "pear\r\n\napple\nbanana\n");
  ListOptions o;
  o.labels_file = labels;
  StatusOr<Listing> l = ListFolder(root, o);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->class_names, (std::vector<std::string>{"pear", "apple", "banana"}));
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"apple/1.png", "pear/2.png"}));
  EXPECT_EQ(FindSample(*l, "pear/2.png")->label, 0);
  EXPECT_EQ(FindSample(*l, "apple/1.png")->label, 1);
  const ListingReject* r = FindReject(*l, "kiwi/3.png");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(Contains(r->reason, "'kiwi'")) << r->reason;
  EXPECT_TRUE(Contains(r->reason, labels)) << r->reason;

  WriteFileOrDie(labels, "pear\napple\npear\n");
  l = ListFolder(root, o);
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(Contains(l.status().message(), labels + ":3")) << l.status();
  o.labels_file = root + "/missing.txt";
  EXPECT_FALSE(ListFolder(root, o).ok());
}

// Issue 23 item 7: a labels file with a byte order mark (and CRLF) names
// its first class without the mark (it was "\xEF\xBB\xBFapple", and every
// apple image a reject).
TEST(SourceListingTest, LabelsFileByteOrderMarkIsSkipped) {
  const std::string base = MakeTempDir();
  WriteTreeFile(base, "data/apple/1.png", PngBytes(3, 3, 3, 1));
  WriteTreeFile(base, "data/pear/2.png", PngBytes(3, 3, 3, 2));
  WriteFileOrDie(base + "/labels.txt",
                 "\xEF\xBB\xBF"
                 "apple\r\npear\r\n");
  ListOptions o;
  o.labels_file = base + "/labels.txt";
  StatusOr<Listing> l = ListFolder(base + "/data", o);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->class_names, (std::vector<std::string>{"apple", "pear"}));
  EXPECT_TRUE(l->rejects.empty()) << l->rejects[0].reason;
  ASSERT_EQ(l->samples.size(), 2u);
  EXPECT_EQ(l->samples[0].label, 0);
}

TEST(SourceListingTest, ValFractionIsDeterministicAndRoughlyTheFraction) {
  const std::string root = MakeTempDir();
  for (int i = 0; i < 400; ++i)
    WriteTreeFile(root, "c" + std::to_string(i % 2) + "/" + std::to_string(i) + ".png", "x");
  ListOptions o;
  o.val_fraction = 0.25;
  StatusOr<Listing> a = ListFolder(root, o);
  StatusOr<Listing> b = ListFolder(root, o);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status();
  ASSERT_EQ(a->samples.size(), 400u);
  EXPECT_EQ(a->splits, (std::vector<std::string>{"train", "val"}));
  int val = 0;
  for (size_t i = 0; i < a->samples.size(); ++i) {
    const SourceSample& s = a->samples[i];
    EXPECT_EQ(s.path, b->samples[i].path);
    EXPECT_EQ(s.split, b->samples[i].split);
    // The documented rule: Fnv1a64(path) / 2^64 < fraction.
    const bool expect_val = static_cast<long double>(Fnv1a64(s.path)) < 0.25L * 18446744073709551616.0L;
    EXPECT_EQ(s.split == "val", expect_val) << s.path;
    val += s.split == "val";
  }
  EXPECT_GT(val, 60);  // 100 expected; a binomial sd is ~8.7
  EXPECT_LT(val, 140);
  // The canonical order: all train, then all val.
  EXPECT_EQ(a->samples.front().split, "train");
  EXPECT_EQ(a->samples.back().split, "val");

  o.val_fraction = 1.0;
  EXPECT_EQ(ListFolder(root, o).status().code(), StatusCode::kInvalidArgument);
  o.val_fraction = -0.1;
  EXPECT_EQ(ListFolder(root, o).status().code(), StatusCode::kInvalidArgument);
}

TEST(SourceListingTest, Fnv1a64KnownAnswers) {
  // Published FNV-1a 64 test vectors.
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(SourceListingTest, ValFractionRefusedWithSplitFolders) {
  const std::string root = MakeTempDir();
  WriteTreeFile(root, "train/cat/1.png", "x");
  ListOptions o;
  o.val_fraction = 0.1;
  StatusOr<Listing> l = ListFolder(root, o);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(l.status().message(), "split folders")) << l.status();
}

class CsvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    WriteTreeFile(dir_, "img/a.png", PngBytes(3, 3, 3, 1));
    WriteTreeFile(dir_, "img/b.jpg", JpegBytes(8, 8, 3, 1));
    WriteTreeFile(dir_, "img/c d.png", PngBytes(3, 3, 3, 2));
  }
  StatusOr<Listing> Read(const std::string& name, const std::string& text, ListOptions o = {}) {
    WriteFileOrDie(dir_ + "/" + name, text);
    return ReadSourceCsv(dir_ + "/" + name, o);
  }
  std::string dir_;
};

TEST_F(CsvTest, IntegerLabels) {
  StatusOr<Listing> l = Read("m.csv", "path,label\r\nimg/b.jpg,7\nimg/a.png,0\n\nimg/c d.png,\n");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->root, dir_);
  EXPECT_TRUE(l->class_names.empty());
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"img/a.png", "img/b.jpg", "img/c d.png"}));
  EXPECT_EQ(l->samples[0].label, 0);
  EXPECT_EQ(l->samples[1].label, 7);
  EXPECT_EQ(l->samples[2].label, -1);  // empty label: unlabeled
  EXPECT_EQ(l->samples[0].split, "train");
}

TEST_F(CsvTest, ClassNameLabelsAndSplitColumn) {
  StatusOr<Listing> l =
      Read("m.csv", "split,label,path\ntrain,zebra,img/a.png\nval,ant,img/b.jpg\ntrain,ant,img/c d.png\n");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->class_names, (std::vector<std::string>{"ant", "zebra"}));
  EXPECT_EQ(l->splits, (std::vector<std::string>{"train", "val"}));
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"img/a.png", "img/c d.png", "img/b.jpg"}));
  EXPECT_EQ(l->samples[0].label, 1);
  EXPECT_EQ(l->samples[1].label, 0);
  EXPECT_EQ(l->samples[2].split, "val");
  ListOptions o;
  o.val_fraction = 0.5;
  EXPECT_EQ(Read("m2.csv", "path,label,split\nimg/a.png,0,train\n", o).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(CsvTest, TsvAndQuotedFields) {
  StatusOr<Listing> l = Read("m.tsv", "path\tlabel\nimg/a.png\t1\n\"img/c d.png\"\t2\n");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"img/a.png", "img/c d.png"}));
  EXPECT_EQ(l->samples[1].label, 2);
  // A header with a tab makes a .txt file TSV too.
  l = Read("m.txt", "path\tlabel\nimg/a.png\t3\n");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->samples[0].label, 3);
  // Quotes around a field with the separator and a doubled quote inside.
  WriteTreeFile(dir_, "img/x,\"y\".png", PngBytes(3, 3, 3, 3));
  l = Read("q.csv", "path,label\n\"img/x,\"\"y\"\".png\",\"a,b\"\n");
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(l->samples.size(), 1u);
  EXPECT_EQ(l->samples[0].path, "img/x,\"y\".png");
  EXPECT_EQ(l->class_names, (std::vector<std::string>{"a,b"}));
}

TEST_F(CsvTest, MissingFileIsRejectedWithLineNumber) {
  StatusOr<Listing> l = Read("m.csv", "path,label\nimg/a.png,0\nimg/gone.png,1\n");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"img/a.png"}));
  const ListingReject* r = FindReject(*l, "img/gone.png");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(Contains(r->reason, "m.csv:3")) << r->reason;
  EXPECT_TRUE(Contains(r->reason, "no such file")) << r->reason;
}

TEST_F(CsvTest, BadHeaderNamesLineOne) {
  StatusOr<Listing> l = Read("m.csv", "file,label\nimg/a.png,0\n");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(l.status().message(), "m.csv:1:")) << l.status();
  EXPECT_TRUE(Contains(l.status().message(), "'file'")) << l.status();
  l = Read("n.csv", "label,mask\n0,x.png\n");
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(Contains(l.status().message(), "n.csv:1:")) << l.status();
  l = Read("e.csv", "");
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(Contains(l.status().message(), "e.csv:1:")) << l.status();
}

TEST_F(CsvTest, WrongFieldCountNamesTheLine) {
  StatusOr<Listing> l = Read("m.csv", "path,label\nimg/a.png,0\nimg/b.jpg,1,extra\n");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(l.status().message(), "m.csv:3:")) << l.status();
  EXPECT_TRUE(Contains(l.status().message(), "3 fields")) << l.status();
}

TEST_F(CsvTest, NegativeLabelIsAnError) {
  StatusOr<Listing> l = Read("m.csv", "path,label\nimg/a.png,-2\n");
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(Contains(l.status().message(), "m.csv:2")) << l.status();
}

// Integer labels are kept as given; one odd value used to renumber them all
// (0,1,10,cat -> 0,1,2,3; 1.0,2 -> 0,1; an int64 overflow likewise).
TEST_F(CsvTest, IntegerLabelsKeptAndMixedColumnRefusedNamingTheLine) {
  WriteTreeFile(dir_, "img/e.png", PngBytes(3, 3, 3, 4));
  StatusOr<Listing> l = Read("m.csv", "path,label\nimg/a.png,0\nimg/b.jpg,1\nimg/c d.png,10\nimg/e.png,cat\n");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(l.status().message(),
            dir_ +
                "/m.csv:5: label 'cat' is a class name but line 2's '0' is an integer: a label column is all "
                "integers or all class names (--labels FILE reads them all as names)");
  l = Read("f.csv", "path,label\nimg/a.png,1.0\nimg/b.jpg,2\n");
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(Contains(l.status().message(), "f.csv:3: label '2' is an integer but line 2's '1.0' is a class name"))
      << l.status();
  l = Read("o.csv", "path,label\nimg/a.png,1\nimg/b.jpg,9223372036854775808\n");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().message(), dir_ + "/o.csv:3: label 9223372036854775808 does not fit in 64 bits");
  l = Read("i.csv", "path,label\nimg/a.png,0\nimg/b.jpg,10\nimg/c d.png,9223372036854775807\n");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->samples[1].label, 10);
  EXPECT_EQ(l->samples[2].label, 9223372036854775807);
  EXPECT_TRUE(l->class_names.empty());
  // With --labels every value is a class name, digits included.
  WriteFileOrDie(dir_ + "/labels.txt", "cat\n10\n0\n");
  ListOptions o;
  o.labels_file = dir_ + "/labels.txt";
  l = Read("n.csv", "path,label\nimg/a.png,0\nimg/b.jpg,10\nimg/e.png,cat\n", o);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->samples[0].label, 2);
  EXPECT_EQ(l->samples[1].label, 1);
  EXPECT_EQ(l->samples[2].label, 0);
}

TEST_F(CsvTest, LabelOffsetAppliesToIntegersAndNames) {
  ListOptions o;
  o.label_offset = 1;
  StatusOr<Listing> l = Read("m.csv", "path,label\nimg/a.png,0\nimg/b.jpg,7\nimg/c d.png,\n", o);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->samples[0].label, 1);
  EXPECT_EQ(l->samples[1].label, 8);
  EXPECT_EQ(l->samples[2].label, -1);  // unlabeled stays unlabeled
  l = Read("n.csv", "path,label\nimg/a.png,zebra\nimg/b.jpg,ant\n", o);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->samples[0].label, 2);
  EXPECT_EQ(ClassName(*l, 2), "zebra");
  EXPECT_EQ(ClassName(*l, 1), "ant");
  EXPECT_EQ(ClassName(*l, 0), "");
  EXPECT_EQ(ClassName(*l, -1), "");
  o.label_offset = 10;
  l = Read("o.csv", "path,label\nimg/a.png,9223372036854775800\n", o);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().message(), dir_ + "/o.csv:2: label 9223372036854775800 + offset 10 does not fit in 64 bits");
  o.label_offset = -1;
  EXPECT_EQ(Read("p.csv", "path,label\nimg/a.png,1\n", o).status().message(), "label offset -1 is not in 0..1000000");
}

TEST_F(CsvTest, ByteOrderMarkAbsolutePathsAndDirectories) {
  const std::string abs = dir_ + "/img/b.jpg";
  StatusOr<Listing> l = Read("m.csv", "\xEF\xBB\xBFpath,label\nimg/a.png,0\n" + abs + ",1\nimg,2\n");
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(Paths(*l), (std::vector<std::string>{abs, "img/a.png"}));
  EXPECT_EQ(SourceFilePath(l->root, l->samples[0].path), abs);  // used as given
  EXPECT_EQ(SourceFilePath(l->root, l->samples[1].path), dir_ + "/img/a.png");
  EXPECT_EQ(l->samples[0].size, fs::file_size(abs));
  const ListingReject* r = FindReject(*l, "img");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->reason, dir_ + "/m.csv:4: is a directory");
  EXPECT_EQ(l->samples[1].origin, dir_ + "/m.csv:2");
}

TEST_F(CsvTest, BadSplitNamesDuplicatesAndHeaderOnlyAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"path,split\nimg/a.png,../../x\n", "m.csv:2: split name '../../x' contains '/'"},
      {"path,split\nimg/a.png,..\n", "m.csv:2: split name '..' is not a name"},
      {"path,split\nimg/a.png,tr\x01"
       "ain\n",
       "m.csv:2: split name contains the control character 0x01"},
      {"path\tsplit\nimg/a.png\t\"a\tb\"\n", "m.tsv:2: split name contains the control character 0x09"},
      {"path,label\nimg/a.png,0\nimg/b.jpg,1\nimg/a.png,0\n", "m.csv:4: img/a.png is listed again (first at line 2)"},
      {"path,label,path\nimg/a.png,0,img/b.jpg\n", "m.csv:1: column 'path' appears twice"},
      {"path,label\n", "m.csv: no samples (only a header)"},
      {"path,label\n\n\n", "m.csv: no samples (only a header)"},
      {"path,label\n,0\n", "m.csv:2: empty path"},
  };
  for (const auto& [text, message] : cases) {
    const std::string name = Contains(message, "m.tsv") ? "m.tsv" : "m.csv";
    StatusOr<Listing> l = Read(name, text);
    ASSERT_FALSE(l.ok()) << text;
    EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_TRUE(Contains(l.status().message(), dir_ + "/" + message)) << text << "\n" << l.status();
  }
}

// Issue 23 item 6: rows naming one file in other spellings (./, //, ..,
// absolute) or through a link are the same path listed again, not five
// records with five labels.
TEST_F(CsvTest, OneFileNamedSeveralWaysIsAnError) {
  const std::string abs = dir_ + "/img/a.png";
  for (const std::string& other :
       {std::string("./img/a.png"), std::string("img//a.png"), abs, std::string("img/../img/a.png")}) {
    StatusOr<Listing> l = Read("m.csv", "path,label\nimg/a.png,0\nimg/b.jpg,1\n" + other + ",2\n");
    ASSERT_FALSE(l.ok()) << other;
    EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(l.status().message(), dir_ + "/m.csv:4: " + other + " is listed again (first at line 2 as img/a.png)");
  }
  ASSERT_EQ(::symlink("a.png", (dir_ + "/img/link.png").c_str()), 0);
  StatusOr<Listing> l = Read("m.csv", "path,label\nimg/a.png,0\nimg/link.png,1\n");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().message(), dir_ +
                                      "/m.csv:3: img/link.png is the same file as img/a.png (line 2; a link or "
                                      "another spelling): each file is listed once");
}

// Issue 23 item 12: a quoted field holding a line break is refused saying
// so, not reported as "1 fields, header has 2".
TEST_F(CsvTest, QuotedFieldWithALineBreakIsRefusedSayingSo) {
  StatusOr<Listing> l = Read("m.csv", "path,label\nimg/a.png,0\n\"img/b\n.jpg\",1\n");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().message(), dir_ +
                                      "/m.csv:3: a quoted field holds a line break (RFC 4180 allows it; this "
                                      "reader takes one row per line): put the field on one line");
}

TEST_F(CsvTest, ColumnNamesFromOptions) {
  ListOptions o;
  o.path_column = "filename";
  o.label_column = "class";
  o.split_column = "subset";
  StatusOr<Listing> l = Read("m.csv", "filename,class,subset\nimg/a.png,cat,val\nimg/b.jpg,dog,\n", o);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->class_names, (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(l->splits, (std::vector<std::string>{"train", "val"}));
  // The default names are then unknown columns, and a named column must exist.
  l = Read("d.csv", "path,label\nimg/a.png,0\n", o);
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(Contains(l.status().message(), "d.csv:1: unknown column 'path' (expected filename, class, mask, subset"))
      << l.status();
  l = Read("e.csv", "filename\nimg/a.png\n", o);
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(Contains(l.status().message(), "e.csv:1: no 'class' column")) << l.status();
  // A row without a split gets default_split.
  ListOptions d;
  d.default_split = "test";
  l = Read("s.csv", "path\nimg/a.png\n", d);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->splits, (std::vector<std::string>{"test"}));
}

// An empty class folder used to be dropped, shifting every later label.
TEST(SourceListingTest, EmptyClassFolderKeepsItsLabelWithAWarning) {
  const std::string root = MakeTempDir();
  WriteTreeFile(root, "a/1.png", PngBytes(3, 3, 3, 1));
  fs::create_directories(root + "/b");
  WriteTreeFile(root, "c/2.png", PngBytes(3, 3, 3, 2));
  StatusOr<Listing> l = ListFolder(root, ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->class_names, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(l->samples.size(), 2u);
  EXPECT_EQ(l->samples[1].label, 2);
  ASSERT_EQ(l->warnings.size(), 1u);
  EXPECT_EQ(l->warnings[0], "class folder b has no files; class 'b' keeps its label");
}

// A class folder "cl\xe4ss" used to become "cls" in manifest.json (bytes
// dropped by the JSON printer), colliding with a real "cls".
TEST(SourceListingTest, ClassNameThatIsNotUtf8IsRefusedNamingItEscaped) {
  const std::string root = MakeTempDir();
  WriteTreeFile(root, "cl\xe4ss/1.png", PngBytes(3, 3, 3, 1));
  WriteTreeFile(root, "cls/2.png", PngBytes(3, 3, 3, 2));
  StatusOr<Listing> l = ListFolder(root, ListOptions{});
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(l.status().message(), "class name 'cl\\xe4ss' is not valid UTF-8")) << l.status();
  // Valid UTF-8 names are kept exactly.
  fs::remove_all(root + "/cl\xe4ss");
  WriteTreeFile(root, "cl\xc3\xa4ss/1.png", PngBytes(3, 3, 3, 1));
  l = ListFolder(root, ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->class_names, (std::vector<std::string>{"cls", "cl\xc3\xa4ss"}));  // byte order
}

TEST(SourceListingTest, SplitOptionNamesTheSplitOfAFolderWithoutSplitFolders) {
  const std::string root = MakeTempDir();
  WriteTreeFile(root, "1.png", PngBytes(3, 3, 3, 1));
  ListOptions o;
  o.default_split = "test";
  StatusOr<Listing> l = ListFolder(root, o);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->splits, (std::vector<std::string>{"test"}));
  o.default_split = "a/b";
  EXPECT_EQ(ListFolder(root, o).status().message(), "split name 'a/b' contains '/'");
  // Not silently ignored beside split folders.
  WriteTreeFile(root, "val/2.png", PngBytes(3, 3, 3, 2));
  o.default_split = "test";
  StatusOr<Listing> s = ListFolder(root, o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "split 'test' given for " + root + ", which has split folders (train, val, ...): they name the splits");
}

TEST(SourceListingMaskTest, MasksMatchedByPathAndByStemWithSuffix) {
  const std::string base = MakeTempDir();
  const std::string root = base + "/images", masks = base + "/masks";
  WriteTreeFile(root, "road/a.jpg", JpegBytes(8, 8, 3, 1));
  WriteTreeFile(root, "road/b.png", PngBytes(4, 4, 3, 1));
  WriteTreeFile(root, "sky/c.png", PngBytes(4, 4, 3, 2));
  WriteTreeFile(masks, "road/a_L.png", PngBytes(8, 8, 1, 1));  // by relative path
  WriteTreeFile(masks, "b_L.PNG", PngBytes(4, 4, 1, 2));       // by stem, upper-case extension
  WriteTreeFile(masks, "c.png", PngBytes(4, 4, 1, 3));         // no suffix: not a match
  ListOptions o;
  o.masks = masks;
  o.mask_suffix = "_L";
  StatusOr<Listing> l = ListFolder(root, o);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"road/a.jpg", "road/b.png"}));
  EXPECT_EQ(l->samples[0].mask_path, masks + "/road/a_L.png");
  EXPECT_EQ(l->samples[1].mask_path, masks + "/b_L.PNG");
  const ListingReject* r = FindReject(*l, "sky/c.png");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(Contains(r->reason, "no mask c_L.png")) << r->reason;
  // The path match wins over the stem match.
  WriteTreeFile(masks, "a_L.png", PngBytes(8, 8, 1, 9));
  l = ListFolder(root, o);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->samples[0].mask_path, masks + "/road/a_L.png");
}

// CamVid's own layout: train/ train_labels/ val/ val_labels/ class_dict.csv.
TEST(SourceListingMaskTest, PerSplitMaskFolderAndIgnoredFiles) {
  const std::string root = MakeTempDir();
  WriteTreeFile(root, "train/a.png", PngBytes(4, 4, 3, 1));
  WriteTreeFile(root, "train_labels/a_L.png", PngBytes(4, 4, 1, 1));
  WriteTreeFile(root, "val/b.png", PngBytes(4, 4, 3, 2));
  WriteTreeFile(root, "val_labels/b_L.png", PngBytes(4, 4, 1, 2));
  WriteTreeFile(root, "val_labels/a_L.png", PngBytes(4, 4, 1, 3));  // another split's name: not used
  WriteFileOrDie(root + "/class_dict.csv", "name,r,g,b\nsky,0,0,255\n");
  ListOptions o;
  o.masks = root + "/{split}_labels";
  o.mask_suffix = "_L";
  o.ignore = {root + "/class_dict.csv"};
  StatusOr<Listing> l = ListFolder(root, o);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(Paths(*l), (std::vector<std::string>{"train/a.png", "val/b.png"}));
  EXPECT_EQ(l->splits, (std::vector<std::string>{"train", "val"}));
  EXPECT_EQ(l->samples[0].mask_path, root + "/train_labels/a_L.png");
  EXPECT_EQ(l->samples[1].mask_path, root + "/val_labels/b_L.png");
  EXPECT_TRUE(l->rejects.empty()) << l->rejects[0].path << ": " << l->rejects[0].reason;
  // Without `ignore`, the stray CSV is skipped as a non-image file (issue
  // 23 item 8; it was a reject); the mask folders are never rejects.
  o.ignore.clear();
  l = ListFolder(root, o);
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->rejects.empty());
  EXPECT_EQ(l->skipped.non_image, (std::map<std::string, uint64_t>{{".csv", 1}}));
  // A missing per-split mask names the split's folder.
  ::unlink((root + "/val_labels/b_L.png").c_str());
  l = ListFolder(root, o);
  ASSERT_TRUE(l.ok());
  const ListingReject* r = FindReject(*l, "val/b.png");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->reason, "no mask b_L.png under " + root + "/val_labels");
}

TEST(SourceListingMaskTest, CsvMaskColumn) {
  const std::string dir = MakeTempDir();
  WriteTreeFile(dir, "a.png", PngBytes(4, 4, 3, 1));
  WriteTreeFile(dir, "m/a.png", PngBytes(4, 4, 1, 1));
  WriteFileOrDie(dir + "/list.csv", "path,mask\na.png,m/a.png\n");
  StatusOr<Listing> l = ReadSourceCsv(dir + "/list.csv", ListOptions{});
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(l->samples.size(), 1u);
  EXPECT_EQ(l->samples[0].mask_path, dir + "/m/a.png");
  EXPECT_EQ(l->samples[0].label, -1);
}

}  // namespace
}  // namespace libshard::convert
