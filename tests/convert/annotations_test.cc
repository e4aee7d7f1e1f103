// The annotation readers (annotations.h) on small files made here: YOLO's
// data.yaml forms and label lines, VOC XML, COCO matching, and what each
// rejects (naming the file and the line or object).
#include "libshard/convert/annotations.h"

#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "annotation_fixtures.h"
#include "fixtures.h"
#include "libshard/convert/manifest_io.h"
#include "libshard/convert/source_listing.h"
#include "libshard/text_escape.h"
#include "testutil.h"

namespace libshard::convert {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::MakeTempDir;
using testing::WriteTreeFile;

using AnnotationsTest = AnnotationFolderTest;

AnnotationOptions Opt(AnnotationFormat f, const std::string& source) {
  AnnotationOptions o;
  o.format = f;
  o.source = source;
  return o;
}

TEST_F(AnnotationsTest, YoloNamesInEveryDataYamlForm) {
  for (const char* yaml :
       {"names: [cat, 'dog', \"bird\"]\n", "nc: 3\nnames:\n  - cat\n  - dog\n  - bird\n",
        "names:\n  0: cat\n  2: bird\n  1: dog  # a comment\ntrain: x\n", "names: {0: cat, 1: dog, 2: bird}\n"}) {
    SCOPED_TRACE(yaml);
    WriteTreeFile(base_, "data.yaml", yaml);
    AnnotationOptions o = Opt(AnnotationFormat::kYolo, base_ + "/data.yaml");
    AnnotationSummary s;
    StatusOr<Listing> l = Attach({"train/a.png"}, o, &s);
    ASSERT_TRUE(l.ok()) << l.status();
    ASSERT_EQ(s.classes.size(), 3u);
    EXPECT_EQ(s.classes[0].name, "cat");
    EXPECT_EQ(s.classes[2].name, "bird");
    EXPECT_EQ(s.classes[2].label, 3);
  }
  WriteTreeFile(base_, "bad.yaml", "names:\n  0: cat\n  2: bird\n");
  StatusOr<Listing> l = Attach({"train/a.png"}, Opt(AnnotationFormat::kYolo, base_ + "/bad.yaml"));
  EXPECT_TRUE(Contains(l.status().message(), "bad.yaml:1: class 1 has no name")) << l.status();
}

// Label files no image of the folder has (the reverse of a missing image)
// are counted, not rejected; classes.txt and other files are not labels.
TEST_F(AnnotationsTest, YoloLabelsWithoutImagesAreCounted) {
  WriteTreeFile(base_, "labels/classes.txt", "cat\n");
  WriteTreeFile(base_, "labels/train/a.txt", "0 0.5 0.5 0.2 0.4\n");
  WriteTreeFile(base_, "labels/train/gone.txt", "0 0.5 0.5 0.2 0.4\n");
  WriteTreeFile(base_, "labels/train/gone2.txt", "");
  WriteTreeFile(base_, "labels/train/notes.md", "not a label");
  WriteTreeFile(base_, "labels/val/b.txt", "0 0.5 0.5 0.2 0.4\n");
  WriteTreeFile(base_, "labels/val/gone3.txt", "0 0.5 0.5 0.2 0.4\n");
  AnnotationSummary s;
  StatusOr<Listing> l = Attach({"train/a.png", "val/b.png", "val/c.png"},
                               Opt(AnnotationFormat::kYolo, base_ + "/labels/classes.txt"), &s);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(s.unmatched_annotations, 3u);
  EXPECT_EQ(s.annotated_images, 2u);
  EXPECT_EQ(s.unannotated_images, 1u);
  EXPECT_TRUE(l->rejects.empty());
}

TEST_F(AnnotationsTest, YoloLabelsBesideImagesFolder) {
  WriteTreeFile(base_, "classes.txt", "cat\ndog\n");
  WriteTreeFile(base_, "labels/train/a.txt", "1 0.5 0.5 0.2 0.4\n\n0 0.1 0.1 0.2 0.2\n");
  WriteTreeFile(base_, "labels/train/bad.txt", "0 0.5 0.5 0.2 0.2\n2 0.5 0.5 0.1 0.1\n");
  WriteTreeFile(base_, "labels/train/out.txt", "0 0.95 0.5 0.2 0.2\n");
  WriteTreeFile(base_, "labels/train/poly.txt", "0 0.1 0.2 0.3 0.2 0.2 0.6\n");
  AnnotationSummary s;
  StatusOr<Listing> l = Attach({"train/a.png", "train/bad.png", "train/out.png", "train/poly.png", "train/none.png"},
                               Opt(AnnotationFormat::kYolo, base_ + "/classes.txt"), &s);
  ASSERT_TRUE(l.ok()) << l.status();
  const SourceSample* a = Sample(*l, "train/a.png");
  ASSERT_TRUE(a && a->objects);
  ASSERT_EQ(a->objects->objects.size(), 2u);
  EXPECT_TRUE(a->objects->normalised);
  EXPECT_EQ(a->objects->objects[0].label, 2);  // class 1 is label 2
  EXPECT_NEAR(a->objects->objects[0].xmin, 0.4, 1e-9);
  EXPECT_NEAR(a->objects->objects[0].ymax, 0.7, 1e-9);
  const SourceSample* poly = Sample(*l, "train/poly.png");
  ASSERT_TRUE(poly && poly->objects && poly->objects->objects.size() == 1);
  EXPECT_NEAR(poly->objects->objects[0].xmax, 0.3, 1e-9);
  EXPECT_NEAR(poly->objects->objects[0].ymax, 0.6, 1e-9);
  const SourceSample* none = Sample(*l, "train/none.png");
  ASSERT_TRUE(none && none->objects);
  EXPECT_TRUE(none->objects->objects.empty());
  EXPECT_TRUE(Contains(Reject(*l, "train/bad.png"), "labels/train/bad.txt:2: unknown class 2 (2 classes)"))
      << Reject(*l, "train/bad.png");
  EXPECT_TRUE(Contains(Reject(*l, "train/out.png"), "labels/train/out.txt:1: box")) << Reject(*l, "train/out.png");
  EXPECT_TRUE(Contains(Reject(*l, "train/out.png"), "lies outside"));
  EXPECT_EQ(s.unannotated_images, 1u);
  EXPECT_EQ(s.annotated_images, 2u);
  EXPECT_EQ(l->samples.size(), 3u);
  EXPECT_EQ(l->class_names.size(), 0u);  // images with boxes have no class
}

TEST_F(AnnotationsTest, VocXmlObjectsAndRejects) {
  const std::string good =
      "<annotation><filename>a.jpg</filename><size><width>100</width><height>50</height><depth>3</depth></size>"
      "<object><name>dog</name><truncated>1</truncated><difficult>0</difficult>"
      "<bndbox><xmin>11</xmin><ymin>6</ymin><xmax>40</xmax><ymax>50</ymax></bndbox></object>"
      "<object><name>cat</name><difficult>1</difficult>"
      "<bndbox><xmin>1</xmin><ymin>1</ymin><xmax>100</xmax><ymax>20</ymax></bndbox></object></annotation>";
  WriteTreeFile(base_, "Annotations/a.xml", good);
  WriteTreeFile(base_, "Annotations/broken.xml", "<annotation><object><name>dog</name>");
  WriteTreeFile(base_, "Annotations/far.xml",
                "<annotation><size><width>100</width><height>50</height></size><object><name>dog</name>"
                "<bndbox><xmin>1</xmin><ymin>1</ymin><xmax>140</xmax><ymax>20</ymax></bndbox></object></annotation>");
  AnnotationSummary s;
  StatusOr<Listing> l =
      Attach({"a.jpg", "broken.jpg", "far.jpg"}, Opt(AnnotationFormat::kVoc, base_ + "/Annotations"), &s);
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(s.classes.size(), 2u);  // sorted names met
  EXPECT_EQ(s.classes[0].name, "cat");
  const SourceSample* a = Sample(*l, "a.jpg");
  ASSERT_TRUE(a && a->objects && a->objects->objects.size() == 2);
  EXPECT_EQ(a->objects->width, 100);
  const ObjectBox& dog = a->objects->objects[0];
  EXPECT_EQ(dog.label, 2);
  EXPECT_TRUE(dog.truncated);
  EXPECT_FALSE(dog.difficult);
  EXPECT_DOUBLE_EQ(dog.xmin, 10);  // 1-based corners -> pixel edges
  EXPECT_DOUBLE_EQ(dog.xmax, 40);
  EXPECT_TRUE(a->objects->objects[1].difficult);
  EXPECT_TRUE(Contains(Reject(*l, "broken.jpg"), "broken.xml: not XML")) << Reject(*l, "broken.jpg");
  EXPECT_TRUE(Contains(Reject(*l, "far.jpg"), "far.xml object 1: box")) << Reject(*l, "far.jpg");

  // With a class list, a name outside it is unknown.
  WriteTreeFile(base_, "classes.txt", "dog\n");
  AnnotationOptions o = Opt(AnnotationFormat::kVoc, base_ + "/Annotations");
  o.class_names_file = base_ + "/classes.txt";
  StatusOr<Listing> l2 = Attach({}, o);
  ASSERT_TRUE(l2.ok());
  EXPECT_TRUE(Contains(Reject(*l2, "a.jpg"), "a.xml object 2: unknown class 'cat'")) << Reject(*l2, "a.jpg");
}

TEST_F(AnnotationsTest, CocoMatchesSplitFoldersAndNamesMissingImages) {
  WriteTreeFile(base_, "i.json",
                "{\"categories\": [{\"id\": 5, \"name\": \"cat\"}], \"images\": ["
                "{\"id\": 1, \"file_name\": \"a.png\", \"width\": 10, \"height\": 10},"
                "{\"id\": 2, \"file_name\": \"val/b.png\", \"width\": 10, \"height\": 10},"
                "{\"id\": 3, \"file_name\": \"c.png\", \"width\": 10, \"height\": 10}],"
                "\"annotations\": [{\"id\": 1, \"image_id\": 2, \"category_id\": 5, \"bbox\": [1, 2, 3, 4], "
                "\"area\": 7.5, \"iscrowd\": 1}]}");
  AnnotationSummary s;
  StatusOr<Listing> l =
      Attach({"train/a.png", "val/b.png", "val/d.png"}, Opt(AnnotationFormat::kCoco, base_ + "/i.json"), &s);
  ASSERT_TRUE(l.ok()) << l.status();
  const SourceSample* b = Sample(*l, "val/b.png");
  ASSERT_TRUE(b && b->objects && b->objects->objects.size() == 1);
  EXPECT_EQ(b->objects->objects[0].label, 5);  // COCO ids are the labels
  EXPECT_TRUE(b->objects->objects[0].is_crowd);
  EXPECT_DOUBLE_EQ(b->objects->objects[0].area, 7.5);
  EXPECT_DOUBLE_EQ(b->objects->objects[0].xmax, 4);
  EXPECT_TRUE(Sample(*l, "train/a.png")->objects);  // matched in its split folder, no boxes
  EXPECT_TRUE(Contains(Reject(*l, "c.png"), "image id 3 but not in the folder")) << Reject(*l, "c.png");
  EXPECT_EQ(s.annotated_images, 2u);
  EXPECT_EQ(s.unannotated_images, 1u);
  EXPECT_EQ(s.missing_images, 1u);
  ASSERT_EQ(s.classes.size(), 1u);
  EXPECT_EQ(LabelMapPbtxt(s.classes), "item {\n  id: 5\n  name: 'cat'\n}\n");

  WriteTreeFile(base_, "bad.json", "{\"images\": [}");
  StatusOr<Listing> bad = Attach({}, Opt(AnnotationFormat::kCoco, base_ + "/bad.json"));
  EXPECT_TRUE(Contains(bad.status().message(), "bad.json: not a COCO instances file")) << bad.status();
}

// Label numbers are decimal and the whole field, as ultralytics and
// detectron2 read them: hex, inf and a NUL inside a number are refused (the
// NUL ended the number silently before, and hex was taken); a '+' sign and
// ".5" are numbers.
TEST_F(AnnotationsTest, YoloNumbersAreWholeDecimalFields) {
  WriteTreeFile(base_, "classes.txt", "cat\n");
  WriteTreeFile(base_, "labels/ok.txt", "+0 0.5 .5 2e-1 +0.2\n");
  WriteTreeFile(base_, "labels/hex.txt", "0 0x1p-1 0.5 0.2 0.2\n");
  const char nul[] = "0 0.5\0" "7 0.5 0.2 0.2\n";
  WriteTreeFile(base_, "labels/nul.txt", std::string(nul, sizeof(nul) - 1));
  WriteTreeFile(base_, "labels/inf.txt", "0 0.5 0.5 inf 0.2\n");
  WriteTreeFile(base_, "labels/minus.txt", "0 +-0.5 0.5 0.2 0.2\n");
  StatusOr<Listing> l = Attach({"ok.png", "hex.png", "nul.png", "inf.png", "minus.png"},
                               Opt(AnnotationFormat::kYolo, base_ + "/classes.txt"));
  ASSERT_TRUE(l.ok()) << l.status();
  const SourceSample* ok = Sample(*l, "ok.png");
  ASSERT_TRUE(ok && ok->objects && ok->objects->objects.size() == 1) << Reject(*l, "ok.png");
  EXPECT_NEAR(ok->objects->objects[0].xmin, 0.4, 1e-9);
  EXPECT_TRUE(Contains(Reject(*l, "hex.png"), "labels/hex.txt:1: '0x1p-1' is not a number")) << Reject(*l, "hex.png");
  EXPECT_TRUE(Contains(Reject(*l, "nul.png"), "labels/nul.txt:1: '0.5")) << Reject(*l, "nul.png");
  EXPECT_TRUE(Contains(Reject(*l, "nul.png"), "' is not a number")) << Reject(*l, "nul.png");
  EXPECT_TRUE(Contains(Reject(*l, "inf.png"), "'inf' is not a number")) << Reject(*l, "inf.png");
  EXPECT_TRUE(Contains(Reject(*l, "minus.png"), "'+-0.5' is not a number")) << Reject(*l, "minus.png");
}

// instances.json with a UTF-8 byte order mark is read (it said "Expected a
// value"); a box of width or height 0 is a reject naming the annotation (it
// was stored; create_coco_tf_record.py drops such boxes).
TEST_F(AnnotationsTest, CocoByteOrderMarkIsSkippedAndZeroSizeBoxesRefused) {
  WriteTreeFile(base_, "i.json",
                "\xEF\xBB\xBF{\"categories\": [{\"id\": 1, \"name\": \"cat\"}], \"images\": ["
                "{\"id\": 1, \"file_name\": \"a.png\", \"width\": 10, \"height\": 10},"
                "{\"id\": 2, \"file_name\": \"b.png\", \"width\": 10, \"height\": 10},"
                "{\"id\": 3, \"file_name\": \"c.png\", \"width\": 10, \"height\": 10}], \"annotations\": ["
                "{\"id\": 4, \"image_id\": 1, \"category_id\": 1, \"bbox\": [1, 1, 2, 2]},"
                "{\"id\": 5, \"image_id\": 2, \"category_id\": 1, \"bbox\": [3, 1, 0, 2]},"
                "{\"id\": 6, \"image_id\": 3, \"category_id\": 1, \"bbox\": [3, 1, 2.5, 0]}]}");
  StatusOr<Listing> l = Attach({"a.png", "b.png", "c.png"}, Opt(AnnotationFormat::kCoco, base_ + "/i.json"));
  ASSERT_TRUE(l.ok()) << l.status();
  const SourceSample* a = Sample(*l, "a.png");
  ASSERT_TRUE(a && a->objects && a->objects->objects.size() == 1);
  EXPECT_DOUBLE_EQ(a->objects->objects[0].xmax, 3);
  EXPECT_TRUE(Contains(Reject(*l, "b.png"), "annotation id 5 (image id 2): bbox [3, 1, 0, 2] has a zero size"))
      << Reject(*l, "b.png");
  EXPECT_TRUE(Contains(Reject(*l, "c.png"), "annotation id 6 (image id 3): bbox [3, 1, 2.5, 0] has a zero size"))
      << Reject(*l, "c.png");
}

// data.yaml's double-quoted names are decoded as YAML says: an escaped
// quote is part of the name (not the end of it), \\ is one backslash, \t a
// tab, \u00e9 an e-acute; an unknown escape is refused.
TEST_F(AnnotationsTest, YoloDoubleQuotedEscapesAreDecoded) {
  WriteTreeFile(base_, "data.yaml", "names: [\"say \\\"hi\\\", ok\", \"back\\\\slash\", \"t\\tab\", \"caf\\u00e9\"]\n");
  AnnotationSummary s;
  StatusOr<Listing> l = Attach({"a.png"}, Opt(AnnotationFormat::kYolo, base_ + "/data.yaml"), &s);
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(s.classes.size(), 4u);
  EXPECT_EQ(s.classes[0].name, "say \"hi\", ok");
  EXPECT_EQ(s.classes[1].name, "back\\slash");
  EXPECT_EQ(s.classes[2].name, "t\tab");
  EXPECT_EQ(s.classes[3].name, "caf\xC3\xA9");
  WriteTreeFile(base_, "block.yaml", "names:\n  0: \"a\\\"b\"\n  1: 'it''s'\n");
  StatusOr<Listing> b = Attach({}, Opt(AnnotationFormat::kYolo, base_ + "/block.yaml"), &s);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(s.classes[0].name, "a\"b");
  EXPECT_EQ(s.classes[1].name, "it's");
  WriteTreeFile(base_, "bad.yaml", "names:\n  - \"a\\qb\"\n");
  StatusOr<Listing> bad = Attach({}, Opt(AnnotationFormat::kYolo, base_ + "/bad.yaml"));
  EXPECT_TRUE(Contains(bad.status().message(), "bad.yaml:2: unknown escape \\q")) << bad.status();
}

// Two classes of one name: the TF Object Detection API's label map by name
// (get_label_map_dict) would keep one of them.
TEST_F(AnnotationsTest, DuplicateClassNamesAreRefused) {
  WriteTreeFile(base_, "data.yaml", "names: [cat, dog, 'cat']\n");
  StatusOr<Listing> y = Attach({"a.png"}, Opt(AnnotationFormat::kYolo, base_ + "/data.yaml"));
  EXPECT_TRUE(Contains(y.status().message(), "data.yaml:1: classes 0 and 2 are both named 'cat'")) << y.status();
  WriteTreeFile(base_, "i.json",
                "{\"categories\": [{\"id\": 1, \"name\": \"cat\"}, {\"id\": 3, \"name\": \"cat\"}], \"images\": []}");
  StatusOr<Listing> c = Attach({}, Opt(AnnotationFormat::kCoco, base_ + "/i.json"));
  EXPECT_TRUE(Contains(c.status().message(), "i.json: categories 1 and 3 are both named 'cat'")) << c.status();
}

// COCO numbers TF cannot hold: an area past float (stored as inf), a
// category id past the label map's int32.
TEST_F(AnnotationsTest, CocoNumbersPastTheRecordTypesAreRefused) {
  WriteTreeFile(base_, "big_id.json", "{\"categories\": [{\"id\": 2147483648, \"name\": \"cat\"}], \"images\": []}");
  StatusOr<Listing> id = Attach({"a.png"}, Opt(AnnotationFormat::kCoco, base_ + "/big_id.json"));
  EXPECT_TRUE(Contains(id.status().message(), "category 'cat' has id 2147483648; the label map's ids are int32"))
      << id.status();
  WriteTreeFile(base_, "area.json",
                "{\"categories\": [{\"id\": 1, \"name\": \"cat\"}], \"images\": [{\"id\": 1, \"file_name\": "
                "\"a.png\", \"width\": 10, \"height\": 10}], \"annotations\": [{\"id\": 4, \"image_id\": 1, "
                "\"category_id\": 1, \"bbox\": [1, 1, 2, 2], \"area\": 1e39}]}");
  StatusOr<Listing> area = Attach({}, Opt(AnnotationFormat::kCoco, base_ + "/area.json"));
  ASSERT_TRUE(area.ok()) << area.status();
  EXPECT_TRUE(Contains(Reject(*area, "a.png"), "annotation id 4 (image id 1): area 1e+39 is past the float range"))
      << Reject(*area, "a.png");
}

// A label file that links out of the label folder is never read (its bytes
// would land in rejects.tsv); a link inside it is read; a dangling link is a
// reject, not an image without labels.
TEST_F(AnnotationsTest, YoloLabelLinksOutOfTheFolderAreRefused) {
  WriteTreeFile(base_, "classes.txt", "cat\n");
  WriteTreeFile(base_, "secret.txt", "top secret words\n");
  WriteTreeFile(base_, "labels/train/real.txt", "0 0.5 0.5 0.2 0.2\n");
  fs::create_directories(base_ + "/labels/train");
  ASSERT_EQ(::symlink((base_ + "/secret.txt").c_str(), (base_ + "/labels/train/out.txt").c_str()), 0);
  ASSERT_EQ(::symlink("real.txt", (base_ + "/labels/train/in.txt").c_str()), 0);
  ASSERT_EQ(::symlink((base_ + "/gone.txt").c_str(), (base_ + "/labels/train/dangling.txt").c_str()), 0);
  StatusOr<Listing> l = Attach({"train/out.png", "train/in.png", "train/dangling.png"},
                               Opt(AnnotationFormat::kYolo, base_ + "/classes.txt"));
  ASSERT_TRUE(l.ok()) << l.status();
  const std::string out = Reject(*l, "train/out.png");
  EXPECT_TRUE(Contains(out, "labels/train/out.txt: a symbolic link out of")) << out;
  EXPECT_FALSE(Contains(out, "secret")) << out;
  const SourceSample* in = Sample(*l, "train/in.png");
  ASSERT_TRUE(in && in->objects);
  EXPECT_EQ(in->objects->objects.size(), 1u);
  EXPECT_TRUE(Contains(Reject(*l, "train/dangling.png"), "labels/train/dangling.txt: a symbolic link to nothing"))
      << Reject(*l, "train/dangling.png");
}

TEST_F(AnnotationsTest, LabelMapEscapesQuotes) {
  EXPECT_EQ(LabelMapPbtxt({{1, "it's"}, {2, "a\\b"}}),
            "item {\n  id: 1\n  name: 'it\\'s'\n}\nitem {\n  id: 2\n  name: 'a\\\\b'\n}\n");
}

// The items of label_map.pbtxt text as protobuf's text parser reads it into
// the Object Detection API's StringIntLabelMap (string_int_label_map.proto:
// item { name = 1 (string), id = 2 (int32), display_name = 3 }), as
// label_map_util.load_labelmap does; {} when it does not parse.
std::vector<std::pair<int64_t, std::string>> ParseLabelMap(const std::string& text) {
  namespace pb = google::protobuf;
  pb::FileDescriptorProto file;
  file.set_name("string_int_label_map.proto");
  file.set_package("object_detection.protos");
  pb::DescriptorProto* item = file.add_message_type();
  item->set_name("StringIntLabelMapItem");
  const std::pair<const char*, pb::FieldDescriptorProto::Type> fields[] = {
      {"name", pb::FieldDescriptorProto::TYPE_STRING},
      {"id", pb::FieldDescriptorProto::TYPE_INT32},
      {"display_name", pb::FieldDescriptorProto::TYPE_STRING}};
  for (int i = 0; i < 3; ++i) {
    pb::FieldDescriptorProto* f = item->add_field();
    f->set_name(fields[i].first);
    f->set_number(i + 1);
    f->set_label(pb::FieldDescriptorProto::LABEL_OPTIONAL);
    f->set_type(fields[i].second);
  }
  pb::DescriptorProto* map = file.add_message_type();
  map->set_name("StringIntLabelMap");
  pb::FieldDescriptorProto* f = map->add_field();
  f->set_name("item");
  f->set_number(1);
  f->set_label(pb::FieldDescriptorProto::LABEL_REPEATED);
  f->set_type(pb::FieldDescriptorProto::TYPE_MESSAGE);
  f->set_type_name(".object_detection.protos.StringIntLabelMapItem");
  pb::DescriptorPool pool;
  EXPECT_NE(pool.BuildFile(file), nullptr);
  pb::DynamicMessageFactory factory(&pool);
  std::unique_ptr<pb::Message> msg(
      factory.GetPrototype(pool.FindMessageTypeByName("object_detection.protos.StringIntLabelMap"))->New());
  if (!pb::TextFormat::ParseFromString(text, msg.get())) return {};
  std::vector<std::pair<int64_t, std::string>> out;
  const pb::Reflection* r = msg->GetReflection();
  const pb::FieldDescriptor* items = msg->GetDescriptor()->FindFieldByName("item");
  for (int i = 0; i < r->FieldSize(*msg, items); ++i) {
    const pb::Message& m = r->GetRepeatedMessage(*msg, items, i);
    const pb::Descriptor* d = m.GetDescriptor();
    out.emplace_back(m.GetReflection()->GetInt32(m, d->FindFieldByName("id")),
                     m.GetReflection()->GetString(m, d->FindFieldByName("name")));
  }
  return out;
}

// label_map.pbtxt is written from manifest.json's object_labels (whose
// names are EscapeText'd): each name is escaped once, for the text format,
// so protobuf reads back the name itself.
TEST_F(AnnotationsTest, LabelMapNamesReadBackByProtobufTextFormat) {
  const std::vector<std::string> names = {"back\\slash", "it's", "say \"hi\"", "new\nline", "tab\there",
                                          "caf\xC3\xA9", "bell\x07"};
  Manifest m;
  for (size_t i = 0; i < names.size(); ++i) {
    LabelEntry* l = m.add_object_labels();
    l->set_label(static_cast<int64_t>(i) + 1);
    l->set_name(EscapeText(names[i]));  // as the converter stores them
  }
  ASSERT_TRUE(WriteLabelMap(base_, m, false).ok());
  const std::string text = testing::ReadFileOrDie(base_ + "/label_map.pbtxt");
  const std::vector<std::pair<int64_t, std::string>> items = ParseLabelMap(text);
  ASSERT_EQ(items.size(), names.size()) << text;
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(items[i].first, static_cast<int64_t>(i) + 1);
    EXPECT_EQ(items[i].second, names[i]) << text;
  }
}

}  // namespace
}  // namespace libshard::convert
