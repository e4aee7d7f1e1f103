// The Pascal VOC reader (convert/annotations_voc.cc) on XML made here: which
// file an image's annotation is (split folders, a flat folder two images
// share), what is not a file, and hostile XML (deep nesting, a DTD with
// entities), each a reject naming the file and why.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "annotation_fixtures.h"
#include "fixtures.h"
#include "libshard/convert/annotations.h"
#include "libshard/convert/source_listing.h"
#include "testutil.h"

namespace libshard::convert {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::MakeTempDir;
using testing::WriteTreeFile;

// One dog whose box ends at `xmax` (no <size>).
std::string DogXml(int xmax) {
  return "<annotation><object><name>dog</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>" + std::to_string(xmax) +
         "</xmax><ymax>5</ymax></bndbox></object></annotation>";
}

class VocTest : public AnnotationFolderTest {
 protected:
  // Lists base_/images (made of `files`, any bytes) with the XML of
  // base_/`annotations`.
  StatusOr<Listing> Attach(const std::vector<std::string>& files, const std::string& annotations,
                           AnnotationSummary* summary = nullptr) {
    AnnotationOptions o;
    o.format = AnnotationFormat::kVoc;
    o.source = base_ + "/" + annotations;
    return AnnotationFolderTest::Attach(files, o, summary);
  }
  static double Xmax(const Listing& l, const std::string& path) {
    for (const SourceSample& s : l.samples) {
      if (s.path == path && s.objects && s.objects->objects.size() == 1) return s.objects->objects[0].xmax;
    }
    return -1;
  }
};

// Annotations/SPLIT/REL/STEM.xml: each split's image gets its own file.
TEST_F(VocTest, SplitFoldersHaveTheirOwnXml) {
  WriteTreeFile(base_, "Annotations/train/img0002.xml", DogXml(3));
  WriteTreeFile(base_, "Annotations/val/img0002.xml", DogXml(4));
  AnnotationSummary s;
  StatusOr<Listing> l = Attach({"train/img0002.png", "val/img0002.png"}, "Annotations", &s);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_TRUE(l->rejects.empty()) << l->rejects[0].path << ": " << l->rejects[0].reason;
  EXPECT_EQ(Xmax(*l, "train/img0002.png"), 3);
  EXPECT_EQ(Xmax(*l, "val/img0002.png"), 4);
  EXPECT_EQ(s.annotated_images, 2u);
}

// Coordinates are decimal (detectron2's float() refuses hex; strtod took it).
TEST_F(VocTest, HexCoordinatesAreRefused) {
  WriteTreeFile(base_, "Annotations/a.xml",
                "<annotation><object><name>dog</name><bndbox><xmin>0x1</xmin><ymin>1</ymin><xmax>3</xmax>"
                "<ymax>5</ymax></bndbox></object></annotation>");
  WriteTreeFile(base_, "Annotations/b.xml", DogXml(3));
  StatusOr<Listing> l = Attach({"a.png", "b.png"}, "Annotations");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_TRUE(Contains(Reject(*l, "a.png"), "a.xml object 1: bndbox/xmin is not a number")) << Reject(*l, "a.png");
  EXPECT_EQ(Xmax(*l, "b.png"), 3);
}

// Folders inside the splits: Annotations/SPLIT/REL/STEM.xml, else
// Annotations/REL/STEM.xml (the path in the split folder) when only one
// split has that image.
TEST_F(VocTest, FoldersInsideSplitsKeepTheirPath) {
  WriteTreeFile(base_, "Annotations/train/dog/a.xml", DogXml(3));
  WriteTreeFile(base_, "Annotations/val/dog/a.xml", DogXml(4));
  WriteTreeFile(base_, "Annotations/cat/b.xml", DogXml(6));
  AnnotationSummary s;
  StatusOr<Listing> l = Attach({"train/dog/a.png", "val/dog/a.png", "val/cat/b.png"}, "Annotations", &s);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_TRUE(l->rejects.empty()) << l->rejects[0].path << ": " << l->rejects[0].reason;
  EXPECT_EQ(Xmax(*l, "train/dog/a.png"), 3);
  EXPECT_EQ(Xmax(*l, "val/dog/a.png"), 4);
  EXPECT_EQ(Xmax(*l, "val/cat/b.png"), 6);
  EXPECT_EQ(s.annotated_images, 3u);
}

// A flat Annotations/ whose STEM.xml two images of different splits would
// take: refused for both, naming both; a stem only one image has is its.
TEST_F(VocTest, FlatXmlTwoSplitsShareIsRefusedForBoth) {
  WriteTreeFile(base_, "flat/img0002.xml", DogXml(3));
  WriteTreeFile(base_, "flat/b.xml", DogXml(5));
  AnnotationSummary s;
  StatusOr<Listing> l = Attach({"train/img0002.png", "val/img0002.png", "train/b.png"}, "flat", &s);
  ASSERT_TRUE(l.ok()) << l.status();
  for (const char* image : {"train/img0002.png", "val/img0002.png"}) {
    const std::string why = Reject(*l, image);
    EXPECT_TRUE(Contains(why, "flat/img0002.xml")) << why;
    EXPECT_TRUE(Contains(why, "train/img0002.png") && Contains(why, "val/img0002.png")) << why;
  }
  EXPECT_EQ(Xmax(*l, "train/b.png"), 5);
  EXPECT_EQ(s.annotated_images, 1u);
}

// A directory, a FIFO or a dangling link where the XML would be is a reject
// naming it, not an image without annotation.
TEST_F(VocTest, XmlThatIsNoFileIsAReject) {
  fs::create_directories(base_ + "/Annotations/dir.xml");
  ASSERT_EQ(::mkfifo((base_ + "/Annotations/fifo.xml").c_str(), 0600), 0);
  ASSERT_EQ(::symlink((base_ + "/nowhere.xml").c_str(), (base_ + "/Annotations/dangling.xml").c_str()), 0);
  AnnotationSummary s;
  StatusOr<Listing> l = Attach({"dir.png", "fifo.png", "dangling.png", "none.png"}, "Annotations", &s);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_TRUE(Contains(Reject(*l, "dir.png"), "Annotations/dir.xml: is a directory")) << Reject(*l, "dir.png");
  EXPECT_TRUE(Contains(Reject(*l, "fifo.png"), "Annotations/fifo.xml: is a FIFO")) << Reject(*l, "fifo.png");
  EXPECT_TRUE(Contains(Reject(*l, "dangling.png"), "Annotations/dangling.xml: a symbolic link to nothing"))
      << Reject(*l, "dangling.png");
  EXPECT_EQ(s.unannotated_images, 1u);  // none.png
}

// 20,000 nested elements: the parser stops at the 65th (its byte offset in
// the message), so the work is bounded by the limit, not the file.
TEST_F(VocTest, DeepNestingStopsAtTheLimit) {
  std::string xml = "<annotation>";
  for (int i = 0; i < 20000; ++i) xml += "<a>";
  for (int i = 0; i < 20000; ++i) xml += "</a>";
  xml += "</annotation>";
  WriteTreeFile(base_, "Annotations/deep.xml", xml);
  StatusOr<Listing> l = Attach({"deep.png"}, "Annotations");
  ASSERT_TRUE(l.ok()) << l.status();
  const std::string why = Reject(*l, "deep.png");
  // <annotation> is 12 bytes, then 63 <a> of 3: the 65th element starts at 201.
  EXPECT_TRUE(Contains(why, "deep.xml: elements nested deeper than 64 (the limit): stopped at byte 201")) << why;
}

// Real VOC files have no DTD: a DOCTYPE (an internal subset with entities,
// or an external one) is a reject before any entity is expanded.
TEST_F(VocTest, DoctypeAndEntitiesAreRefused) {
  const std::string entity = "<!DOCTYPE annotation [<!ENTITY e \"" + std::string(1000, 'x') +
                             "\">]><annotation><object><name>&e;&e;&e;</name></object></annotation>";
  WriteTreeFile(base_, "Annotations/entity.xml", entity);
  WriteTreeFile(base_, "Annotations/external.xml",
                "<!DOCTYPE annotation SYSTEM \"voc.dtd\">" + DogXml(3));
  StatusOr<Listing> l = Attach({"entity.png", "external.png"}, "Annotations");
  ASSERT_TRUE(l.ok()) << l.status();
  for (const char* image : {"entity.png", "external.png"}) {
    const std::string why = Reject(*l, image);
    EXPECT_TRUE(Contains(why, ".xml: declares a DOCTYPE (VOC XML has no DTD; entities are not expanded)")) << why;
  }
}

}  // namespace
}  // namespace libshard::convert
