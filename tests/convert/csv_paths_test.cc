// Where a CSV manifest's paths lead: the path tried is named in a missing
// file's reject, a case mismatch gets "did you mean", and --image-root
// (ListOptions::image_root) resolves the paths from another folder without
// letting any of them leave it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "fixtures.h"
#include "libshard/convert/source_listing.h"
#include "testutil.h"

namespace libshard::convert {
namespace {

using testing::Contains;
using testing::MakeTempDir;
using testing::PngBytes;
using testing::WriteFileOrDie;
using testing::WriteTreeFile;

const ListingReject* FindReject(const Listing& l, const std::string& path) {
  for (const ListingReject& r : l.rejects) {
    if (r.path == path) return &r;
  }
  return nullptr;
}

class CsvPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::canonical(MakeTempDir()).string();
    WriteTreeFile(dir_, "photos/Cat/00000.JPG", PngBytes(3, 3, 3, 1));
    WriteTreeFile(dir_, "photos/dog/1.png", PngBytes(3, 3, 3, 2));
    WriteFileOrDie(dir_ + "/outside.png", PngBytes(3, 3, 3, 3));
    WriteFileOrDie(dir_ + "/outside2.png", PngBytes(3, 3, 3, 4));
  }
  StatusOr<Listing> Read(const std::string& text, ListOptions o = {}) {
    WriteTreeFile(dir_, "meta/labels.csv", text);
    return ReadSourceCsv(dir_ + "/meta/labels.csv", o);
  }
  std::string dir_;
};

TEST_F(CsvPathsTest, MissingFileNamesThePathTried) {
  StatusOr<Listing> l = Read("path,label\nphotos/dog/1.png,0\nphotos/dog/2.png,1\n");
  ASSERT_TRUE(l.ok()) << l.status();
  const ListingReject* r = FindReject(*l, "photos/dog/2.png");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->reason, dir_ + "/meta/labels.csv:3: no such file " + dir_ + "/meta/photos/dog/2.png");
}

TEST_F(CsvPathsTest, ImageRootResolvesThePaths) {
  ListOptions o;
  o.image_root = dir_ + "/photos";
  StatusOr<Listing> l = Read("path,label\ndog/1.png,0\nCat/00000.JPG,1\n", o);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->root, dir_ + "/photos");
  ASSERT_EQ(l->samples.size(), 2u) << (l->rejects.empty() ? "" : l->rejects[0].reason);
  EXPECT_TRUE(l->rejects.empty());
  EXPECT_EQ(SourceFilePath(l->root, l->samples[1].path), dir_ + "/photos/dog/1.png");
}

TEST_F(CsvPathsTest, ImageRootKeepsEveryPathInside) {
  ListOptions o;
  o.image_root = dir_ + "/photos";
  StatusOr<Listing> l = Read("path,label\ndog/1.png,0\n../outside.png,1\n" + dir_ + "/outside2.png,1\n", o);
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(l->samples.size(), 1u);
  for (const std::string& bad : {std::string("../outside.png"), dir_ + "/outside2.png"}) {
    const ListingReject* r = FindReject(*l, bad);
    ASSERT_NE(r, nullptr) << bad;
    EXPECT_TRUE(Contains(r->reason, "is not a path inside --image-root " + dir_ + "/photos")) << r->reason;
  }
  o.image_root = dir_ + "/nowhere";
  l = Read("path,label\ndog/1.png,0\n", o);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(l.status().message(), "--image-root " + dir_ + "/nowhere")) << l.status();
}

TEST_F(CsvPathsTest, CaseMismatchGetsDidYouMean) {
  ListOptions o;
  o.image_root = dir_ + "/photos";
  StatusOr<Listing> l = Read("path,label\ncat/00000.jpg,0\ndog/1.PNG,1\nbird/x.png,2\n", o);
  ASSERT_TRUE(l.ok()) << l.status();
  const ListingReject* r = FindReject(*l, "cat/00000.jpg");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->reason,
            dir_ + "/meta/labels.csv:2: no such file " + dir_ + "/photos/cat/00000.jpg (did you mean Cat/00000.JPG?)");
  r = FindReject(*l, "dog/1.PNG");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(Contains(r->reason, "(did you mean dog/1.png?)")) << r->reason;
  r = FindReject(*l, "bird/x.png");
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE(Contains(r->reason, "did you mean")) << r->reason;
}

}  // namespace
}  // namespace libshard::convert
