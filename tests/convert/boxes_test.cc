// Detection boxes through `Convert`: golden rectangles found again in the
// stored images after every resize mode and EXIF orientation (+-1 px), the
// records parsed with TensorFlow's example.proto (every image/object/* key's
// type and length), label_map.pbtxt, per-class counts and annotation rejects.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <tuple>

#include "fixtures.h"
#include "libshard/convert/converter.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/decode.h"
#include "libshard/image/encode.h"
#include "libshard/image/transform.h"
#include "tensorflow/core/example/example.pb.h"
#include "testutil.h"

namespace libshard::convert {
namespace {

namespace fs = std::filesystem;
using testing::MakeTempDir;
using testing::ReadFileOrDie;
using testing::ReadRecords;
using testing::WriteTreeFile;

struct Rect {
  int x0, y0, x1, y1;
};
constexpr uint8_t kColours[3][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}};

image::Image Canvas(int w, int h, const std::vector<Rect>& rects) {
  image::Image img(w, h, 3, 8);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int k = 0; k < 3; ++k) img.row(y)[3 * x + k] = 0;
  for (size_t i = 0; i < rects.size(); ++i)
    for (int y = rects[i].y0; y < rects[i].y1; ++y)
      for (int x = rects[i].x0; x < rects[i].x1; ++x)
        for (int k = 0; k < 3; ++k) img.row(y)[3 * x + k] = kColours[i][k];
  return img;
}

std::optional<Rect> Find(const image::Image& img, int colour) {
  Rect r{img.width(), img.height(), -1, -1};
  for (int y = 0; y < img.height(); ++y) {
    for (int x = 0; x < img.width(); ++x) {
      const uint8_t* p = img.row(y) + img.channels() * x;
      bool match = true;
      for (int k = 0; k < 3; ++k) match = match && ((kColours[colour][k] > 127) == (p[k] > 127));
      if (!match || (p[0] <= 127 && p[1] <= 127 && p[2] <= 127)) continue;
      r = {std::min(r.x0, x), std::min(r.y0, y), std::max(r.x1, x + 1), std::max(r.y1, y + 1)};
    }
  }
  if (r.x1 < 0) return std::nullopt;
  return r;
}

// A COCO file for images named a.png.. with the given rectangles (category
// i + 1 for rectangle i), all `w` x `h`.
std::string CocoJson(const std::vector<std::string>& files, int w, int h, const std::vector<Rect>& rects) {
  std::string j =
      "{\"categories\": [{\"id\": 1, \"name\": \"red\"}, {\"id\": 2, \"name\": \"green\"}, "
      "{\"id\": 3, \"name\": \"blue\"}], \"images\": [";
  for (size_t i = 0; i < files.size(); ++i) {
    j += (i ? ", " : "") + std::string("{\"id\": ") + std::to_string(i + 1) + ", \"file_name\": \"" + files[i] +
         "\", \"width\": " + std::to_string(w) + ", \"height\": " + std::to_string(h) + "}";
  }
  j += "], \"annotations\": [";
  int id = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    for (size_t r = 0; r < rects.size(); ++r) {
      const Rect& q = rects[r];
      j += (id ? ", " : "");
      j += std::string("{\"id\": ") + std::to_string(++id) + ", \"image_id\": " + std::to_string(i + 1) +
           ", \"category_id\": " + std::to_string(r + 1) +
           ", \"iscrowd\": 0, \"area\": " + std::to_string((q.x1 - q.x0) * (q.y1 - q.y0)) + ", \"bbox\": [" +
           std::to_string(q.x0) + ", " + std::to_string(q.y0) + ", " + std::to_string(q.x1 - q.x0) + ", " +
           std::to_string(q.y1 - q.y0) + "], \"segmentation\": [[1, 2, 3, 4]]}";
    }
  }
  return j + "]}";
}

ConvertOptions Options(const std::string& in, const std::string& out, const std::string& coco) {
  ConvertOptions o;
  o.input = in;
  o.output = out;
  o.sync = false;
  o.threads = 2;
  o.leaks = LeakMode::kOff;
  o.encode.format = image::OutputFormat::kPng;
  o.annotations.format = AnnotationFormat::kCoco;
  o.annotations.source = coco;
  return o;
}

// Every record of every shard of `dir`.
std::vector<tensorflow::Example> Records(const std::string& dir) {
  std::vector<tensorflow::Example> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".tfrecord") continue;
    for (const std::string& rec : ReadRecords(e.path().string())) {
      tensorflow::Example ex;
      EXPECT_TRUE(ex.ParseFromString(rec));
      out.push_back(ex);
    }
  }
  return out;
}

const tensorflow::Feature& F(const tensorflow::Example& ex, const char* key) {
  static const tensorflow::Feature kNone;
  auto it = ex.features().feature().find(key);
  EXPECT_NE(it, ex.features().feature().end()) << key;
  return it == ex.features().feature().end() ? kNone : it->second;
}

const std::vector<Rect> kRects = {{50, 30, 70, 50}, {2, 10, 22, 70}, {96, 4, 116, 20}};

class BoxesGoldenTest : public ::testing::TestWithParam<std::tuple<image::ResizeMode, int, int>> {
 protected:
  void SetUp() override { base_ = MakeTempDir(); }
  void TearDown() override { fs::remove_all(base_); }
  std::string base_;
};

TEST_P(BoxesGoldenTest, StoredBoxesAreWhereThePixelsAre) {
  const auto [mode, W, H] = GetParam();
  StatusOr<std::string> png = image::EncodePng(Canvas(120, 80, kRects), {});
  ASSERT_TRUE(png.ok());
  WriteTreeFile(base_, "in/a.png", *png);
  WriteTreeFile(base_, "coco.json", CocoJson({"a.png"}, 120, 80, kRects));
  ConvertOptions o = Options(base_ + "/in", base_ + "/out", base_ + "/coco.json");
  o.encode.transform.mode = mode;
  o.encode.transform.width = W;
  o.encode.transform.height = H;
  o.annotations.min_visible = 0;  // a box with any pixel left stays
  StatusOr<ConvertResult> r = Convert(o);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<tensorflow::Example> recs = Records(base_ + "/out");
  ASSERT_EQ(recs.size(), 1u);
  const tensorflow::Example& ex = recs[0];
  StatusOr<image::Image> img = image::DecodeImage(F(ex, keys::kEncoded).bytes_list().value(0), {});
  ASSERT_TRUE(img.ok()) << img.status();
  const auto& xmin = F(ex, keys::kObjectXmin).float_list().value();
  const auto& xmax = F(ex, keys::kObjectXmax).float_list().value();
  const auto& ymin = F(ex, keys::kObjectYmin).float_list().value();
  const auto& ymax = F(ex, keys::kObjectYmax).float_list().value();
  const auto& label = F(ex, keys::kObjectLabel).int64_list().value();
  int k = 0;
  uint64_t dropped = 0;
  for (int c = 0; c < 3; ++c) {
    SCOPED_TRACE(std::string("colour ") + std::to_string(c) + " mode " + image::ResizeModeName(mode));
    const std::optional<Rect> found = Find(*img, c);
    if (!found) {
      ++dropped;
      continue;
    }
    ASSERT_LT(k, label.size());
    EXPECT_EQ(label[k], c + 1);
    EXPECT_NEAR(xmin[k] * img->width(), found->x0, 1.0);
    EXPECT_NEAR(xmax[k] * img->width(), found->x1, 1.0);
    EXPECT_NEAR(ymin[k] * img->height(), found->y0, 1.0);
    EXPECT_NEAR(ymax[k] * img->height(), found->y1, 1.0);
    ++k;
  }
  EXPECT_EQ(k, label.size());
  uint64_t stored = 0, counted_dropped = 0;
  for (const BoxCount& b : r->manifest.stats().boxes()) {
    stored += b.stored();
    counted_dropped += b.dropped();
  }
  EXPECT_EQ(stored, static_cast<uint64_t>(k));
  EXPECT_EQ(counted_dropped, dropped);
}

INSTANTIATE_TEST_SUITE_P(Modes, BoxesGoldenTest,
                         ::testing::Values(std::make_tuple(image::ResizeMode::kNone, 0, 0),
                                           std::make_tuple(image::ResizeMode::kStretch, 64, 48),
                                           std::make_tuple(image::ResizeMode::kCenterCrop, 64, 64),
                                           std::make_tuple(image::ResizeMode::kCenterCrop, 60, 20),
                                           std::make_tuple(image::ResizeMode::kLetterbox, 64, 64),
                                           std::make_tuple(image::ResizeMode::kShorterSide, 40, 40),
                                           std::make_tuple(image::ResizeMode::kCropOrPad, 64, 64),
                                           std::make_tuple(image::ResizeMode::kCropOrPad, 100, 140)));

class BoxesTest : public ::testing::Test {
 protected:
  void SetUp() override { base_ = MakeTempDir(); }
  void TearDown() override { fs::remove_all(base_); }
  std::string base_;
};

// A JPEG stored sideways (EXIF 6, 8, 3): the converter turns the pixels, and
// the boxes, stated on the stored image as the TF Object Detection API does,
// turn with them.
TEST_F(BoxesTest, BoxesFollowExifOrientation) {
  const std::vector<Rect> rects = {{16, 16, 56, 40}, {72, 8, 112, 72}};
  image::JpegEncodeOptions q;
  q.quality = 100;
  StatusOr<std::string> jpeg = image::EncodeJpeg(Canvas(128, 80, rects), q);
  ASSERT_TRUE(jpeg.ok());
  for (int orientation : {3, 6, 8}) {
    SCOPED_TRACE("orientation " + std::to_string(orientation));
    const std::string dir = base_ + "/o" + std::to_string(orientation);
    WriteTreeFile(dir, "in/a.jpg", testing::WithExifOrientation(*jpeg, orientation));
    WriteTreeFile(dir, "coco.json", CocoJson({"a.jpg"}, 128, 80, rects));
    StatusOr<ConvertResult> r = Convert(Options(dir + "/in", dir + "/out", dir + "/coco.json"));
    ASSERT_TRUE(r.ok()) << r.status();
    const std::vector<tensorflow::Example> recs = Records(dir + "/out");
    ASSERT_EQ(recs.size(), 1u);
    StatusOr<image::Image> img = image::DecodeImage(F(recs[0], keys::kEncoded).bytes_list().value(0), {});
    ASSERT_TRUE(img.ok());
    EXPECT_EQ(img->width(), orientation == 3 ? 128 : 80);
    for (int c = 0; c < 2; ++c) {
      const std::optional<Rect> found = Find(*img, c);
      ASSERT_TRUE(found);
      EXPECT_NEAR(F(recs[0], keys::kObjectXmin).float_list().value(c) * img->width(), found->x0, 1.0);
      EXPECT_NEAR(F(recs[0], keys::kObjectXmax).float_list().value(c) * img->width(), found->x1, 1.0);
      EXPECT_NEAR(F(recs[0], keys::kObjectYmin).float_list().value(c) * img->height(), found->y0, 1.0);
      EXPECT_NEAR(F(recs[0], keys::kObjectYmax).float_list().value(c) * img->height(), found->y1, 1.0);
    }
  }
}

// Every key of the Object Detection API parsed with TF's own example.proto:
// kind and length; label_map.pbtxt; manifest object_labels and counts.
TEST_F(BoxesTest, RecordsCarryTheObjectDetectionKeys) {
  StatusOr<std::string> png = image::EncodePng(Canvas(120, 80, kRects), {});
  ASSERT_TRUE(png.ok());
  WriteTreeFile(base_, "in/a.png", *png);
  WriteTreeFile(base_, "in/b.png", *png);
  WriteTreeFile(base_, "in/none.png", *png);  // named by no annotation: kept, zero boxes
  std::string coco = CocoJson({"a.png", "b.png", "gone.png"}, 120, 80, kRects);
  WriteTreeFile(base_, "coco.json", coco);
  StatusOr<ConvertResult> r = Convert(Options(base_ + "/in", base_ + "/out", base_ + "/coco.json"));
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<tensorflow::Example> recs = Records(base_ + "/out");
  ASSERT_EQ(recs.size(), 3u);
  for (const tensorflow::Example& ex : recs) {
    const std::string file = F(ex, keys::kFilename).bytes_list().value(0);
    SCOPED_TRACE(file);
    const int n = file == "none.png" ? 0 : 3;
    for (const char* k :
         {keys::kObjectXmin, keys::kObjectXmax, keys::kObjectYmin, keys::kObjectYmax, keys::kObjectArea}) {
      EXPECT_EQ(F(ex, k).kind_case(), n ? tensorflow::Feature::kFloatList : F(ex, k).kind_case()) << k;
      EXPECT_EQ(F(ex, k).float_list().value_size(), n) << k;
    }
    for (const char* k : {keys::kObjectLabel, keys::kObjectIsCrowd, keys::kObjectDifficult}) {
      EXPECT_EQ(F(ex, k).kind_case(), n ? tensorflow::Feature::kInt64List : F(ex, k).kind_case()) << k;
      EXPECT_EQ(F(ex, k).int64_list().value_size(), n) << k;
    }
    EXPECT_EQ(F(ex, keys::kObjectText).bytes_list().value_size(), n);
    EXPECT_EQ(ex.features().feature().count(keys::kObjectTruncated), 0u);  // VOC's only
    EXPECT_EQ(ex.features().feature().count(keys::kLabel), 0u);            // the image has no class
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(F(ex, keys::kObjectLabel).int64_list().value(i), i + 1);
      EXPECT_EQ(F(ex, keys::kObjectText).bytes_list().value(i), std::vector<std::string>({"red", "green", "blue"})[i]);
      const Rect& q = kRects[i];
      EXPECT_FLOAT_EQ(F(ex, keys::kObjectArea).float_list().value(i), float((q.x1 - q.x0) * (q.y1 - q.y0)));
      EXPECT_FLOAT_EQ(F(ex, keys::kObjectXmin).float_list().value(i), q.x0 / 120.0f);
      EXPECT_FLOAT_EQ(F(ex, keys::kObjectYmax).float_list().value(i), q.y1 / 80.0f);
    }
  }
  EXPECT_EQ(ReadFileOrDie(base_ + "/out/label_map.pbtxt"),
            "item {\n  id: 1\n  name: 'red'\n}\nitem {\n  id: 2\n  name: 'green'\n}\nitem {\n  id: 3\n  name: "
            "'blue'\n}\n");
  const Manifest& m = r->manifest;
  ASSERT_EQ(m.object_labels_size(), 3);
  EXPECT_EQ(m.object_labels(2).name(), "blue");
  EXPECT_EQ(m.annotations().format(), "coco");
  EXPECT_EQ(m.annotations().annotated_images(), 2u);
  EXPECT_EQ(m.annotations().unannotated_images(), 1u);
  EXPECT_EQ(m.annotations().missing_images(), 1u);
  ASSERT_EQ(m.rejects_size(), 1);
  EXPECT_EQ(m.rejects(0).path(), "gone.png");
  ASSERT_EQ(m.stats().boxes_size(), 3);
  EXPECT_EQ(m.stats().boxes(0).stored(), 2u);
  // The readers take the output: verify is clean, the Loader reads it.
  const testing::FolderReadBack back = testing::ReadBackFolder(base_ + "/out");
  EXPECT_TRUE(back.verify_faults.empty()) << back.verify_faults[0];
  EXPECT_EQ(back.loader_samples, 3u);
}

// Bad annotations reject their image, naming the file and the object.
TEST_F(BoxesTest, BadAnnotationsAreRejectsNamingTheObject) {
  StatusOr<std::string> png = image::EncodePng(Canvas(120, 80, kRects), {});
  ASSERT_TRUE(png.ok());
  for (const char* f : {"ok.png", "outside.png", "negative.png", "unknown.png", "size.png"}) {
    WriteTreeFile(base_, std::string("in/") + f, *png);
  }
  const std::string coco =
      "{\"categories\": [{\"id\": 1, \"name\": \"red\"}], \"images\": ["
      "{\"id\": 1, \"file_name\": \"ok.png\", \"width\": 120, \"height\": 80},"
      "{\"id\": 2, \"file_name\": \"outside.png\", \"width\": 120, \"height\": 80},"
      "{\"id\": 3, \"file_name\": \"negative.png\", \"width\": 120, \"height\": 80},"
      "{\"id\": 4, \"file_name\": \"unknown.png\", \"width\": 120, \"height\": 80},"
      "{\"id\": 5, \"file_name\": \"size.png\", \"width\": 100, \"height\": 80},"
      "{\"id\": 6, \"file_name\": \"../escape.png\", \"width\": 100, \"height\": 80}],"
      "\"annotations\": ["
      "{\"id\": 10, \"image_id\": 1, \"category_id\": 1, \"bbox\": [0, 0, 120.5, 80]},"
      "{\"id\": 11, \"image_id\": 2, \"category_id\": 1, \"bbox\": [100, 10, 30, 10]},"
      "{\"id\": 12, \"image_id\": 3, \"category_id\": 1, \"bbox\": [10, 10, -3, 10]},"
      "{\"id\": 13, \"image_id\": 4, \"category_id\": 7, \"bbox\": [10, 10, 3, 10]},"
      "{\"id\": 14, \"image_id\": 5, \"category_id\": 1, \"bbox\": [10, 10, 3, 10]}]}";
  WriteTreeFile(base_, "coco.json", coco);
  StatusOr<ConvertResult> r = Convert(Options(base_ + "/in", base_ + "/out", base_ + "/coco.json"));
  ASSERT_TRUE(r.ok()) << r.status();
  std::map<std::string, std::string> why;
  for (const Reject& j : r->manifest.rejects()) why[j.path()] = j.reason();
  const std::string json = base_ + "/coco.json";
  EXPECT_EQ(why.count("ok.png"), 0u);  // half a pixel over the edge: clamped
  EXPECT_TRUE(testing::Contains(why["outside.png"], json + " annotation id 11 (image id 2): box [100, 10, 130, 20] "
                                                           "lies outside the 120x80 image"))
      << why["outside.png"];
  EXPECT_TRUE(testing::Contains(why["negative.png"],
                                "annotation id 12 (image id 3): box [10, 10, 7, 20] has a "
                                "negative size"))
      << why["negative.png"];
  EXPECT_TRUE(testing::Contains(why["unknown.png"], "annotation id 13 (image id 4): unknown category id 7"))
      << why["unknown.png"];
  EXPECT_TRUE(testing::Contains(why["size.png"], "image id 5 says the image is 100x80, the file is 120x80"))
      << why["size.png"];
  EXPECT_TRUE(testing::Contains(why[json], "image id 6: file_name")) << why[json];
  EXPECT_EQ(r->manifest.stats().converted(), 1u);
}

// A VOC file without <size>: its boxes are checked against the decoded
// image as those with one are against the stated size: far outside is a
// reject (not clipped or dropped), within a pixel is clamped.
TEST_F(BoxesTest, VocBoxesWithoutSizeAreCheckedAgainstTheImage) {
  StatusOr<std::string> png = image::EncodePng(Canvas(120, 80, kRects), {});
  ASSERT_TRUE(png.ok());
  const auto xml = [](int xmax) {
    return "<annotation><object><name>red</name><bndbox><xmin>11</xmin><ymin>1</ymin><xmax>" + std::to_string(xmax) +
           "</xmax><ymax>20</ymax></bndbox></object></annotation>";
  };
  WriteTreeFile(base_, "in/far.png", *png);
  WriteTreeFile(base_, "in/edge.png", *png);
  WriteTreeFile(base_, "Annotations/far.xml", xml(400));
  WriteTreeFile(base_, "Annotations/edge.xml", xml(121));
  ConvertOptions o = Options(base_ + "/in", base_ + "/out", base_ + "/Annotations");
  o.annotations.format = AnnotationFormat::kVoc;
  StatusOr<ConvertResult> r = Convert(o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->manifest.rejects_size(), 1);
  EXPECT_EQ(r->manifest.rejects(0).path(), "far.png");
  EXPECT_TRUE(testing::Contains(r->manifest.rejects(0).reason(),
                                "Annotations/far.xml object 1: box [10, 0, 400, 20] lies outside the 120x80 image"))
      << r->manifest.rejects(0).reason();
  const std::vector<tensorflow::Example> recs = Records(o.output);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_FLOAT_EQ(F(recs[0], keys::kObjectXmax).float_list().value(0), 1.0f);
}

// image/source_id, the key the Object Detection API's COCO evaluation keys
// images by: COCO's image id as a decimal string; for YOLO and VOC (and an
// image COCO does not name) the path from the input root.
TEST_F(BoxesTest, RecordsCarryTheSourceId) {
  StatusOr<std::string> png = image::EncodePng(Canvas(120, 80, kRects), {});
  ASSERT_TRUE(png.ok());
  WriteTreeFile(base_, "in/a.png", *png);
  WriteTreeFile(base_, "in/b.png", *png);
  WriteTreeFile(base_, "coco.json",
                "{\"categories\": [{\"id\": 1, \"name\": \"red\"}], \"images\": [{\"id\": 397133, \"file_name\": "
                "\"a.png\", \"width\": 120, \"height\": 80}], \"annotations\": []}");
  WriteTreeFile(base_, "labels/classes.txt", "red\n");
  WriteTreeFile(base_, "in/a.txt", "0 0.5 0.5 0.2 0.2\n");
  for (AnnotationFormat f : {AnnotationFormat::kCoco, AnnotationFormat::kYolo}) {
    SCOPED_TRACE(AnnotationFormatName(f));
    const std::string out = base_ + "/out-" + AnnotationFormatName(f);
    ConvertOptions o = Options(base_ + "/in", out, base_ + "/coco.json");
    if (f == AnnotationFormat::kYolo) {
      o.annotations.format = f;
      o.annotations.source = base_ + "/labels/classes.txt";
    }
    StatusOr<ConvertResult> r = Convert(o);
    ASSERT_TRUE(r.ok()) << r.status();
    std::map<std::string, std::string> ids;
    for (const tensorflow::Example& ex : Records(out)) {
      ids[F(ex, keys::kFilename).bytes_list().value(0)] = F(ex, keys::kSourceId).bytes_list().value(0);
    }
    EXPECT_EQ(ids["a.png"], f == AnnotationFormat::kCoco ? "397133" : "a.png");
    EXPECT_EQ(ids["b.png"], "b.png");
  }
}

// A rerun keeps the shards while the annotations are the same, and redoes
// them when a box moved or the drop threshold changed (both in plan_id).
TEST_F(BoxesTest, ChangedAnnotationsRedoTheShards) {
  StatusOr<std::string> png = image::EncodePng(Canvas(120, 80, kRects), {});
  ASSERT_TRUE(png.ok());
  WriteTreeFile(base_, "in/a.png", *png);
  WriteTreeFile(base_, "coco.json", CocoJson({"a.png"}, 120, 80, kRects));
  ConvertOptions o = Options(base_ + "/in", base_ + "/out", base_ + "/coco.json");
  ASSERT_TRUE(Convert(o).ok());
  StatusOr<ConvertResult> same = Convert(o);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->shards_written, 0u);
  std::vector<Rect> moved = kRects;
  moved[0].x0 += 1;
  WriteTreeFile(base_, "coco.json", CocoJson({"a.png"}, 120, 80, moved));
  StatusOr<ConvertResult> edited = Convert(o);
  ASSERT_TRUE(edited.ok());
  EXPECT_EQ(edited->shards_written, 1u);
  EXPECT_FLOAT_EQ(F(Records(o.output)[0], keys::kObjectXmin).float_list().value(0), 51 / 120.0f);
  o.annotations.min_visible = 0.5f;
  StatusOr<ConvertResult> threshold = Convert(o);
  ASSERT_TRUE(threshold.ok());
  EXPECT_EQ(threshold->shards_written, 1u);
}

// samples/boxes holds the same boxes as COCO and as YOLO: both conversions
// store the same boxes (to float rounding of YOLO's six decimals).
TEST_F(BoxesTest, CocoAndYoloSamplesGiveTheSameBoxes) {
  const std::string root = testing::SourceDir() + "/samples/boxes";
  std::map<std::string, std::vector<float>> boxes[2];
  std::map<std::string, std::vector<int64_t>> labels[2];
  for (int i = 0; i < 2; ++i) {
    ConvertOptions o = Options(root + "/images", base_ + "/out" + std::to_string(i), root + "/instances.json");
    if (i == 1) {
      o.annotations.format = AnnotationFormat::kYolo;
      o.annotations.source = root + "/data.yaml";
    }
    o.encode.transform.mode = image::ResizeMode::kLetterbox;
    o.encode.transform.width = o.encode.transform.height = 64;
    StatusOr<ConvertResult> r = Convert(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->manifest.stats().converted(), 12u);
    EXPECT_EQ(r->manifest.object_labels_size(), 3);
    for (const tensorflow::Example& ex : Records(o.output)) {
      const std::string file = F(ex, keys::kFilename).bytes_list().value(0);
      boxes[i][file].clear();  // an image without objects counts too
      for (const char* k : {keys::kObjectXmin, keys::kObjectXmax, keys::kObjectYmin, keys::kObjectYmax}) {
        for (float v : F(ex, k).float_list().value()) boxes[i][file].push_back(v);
      }
      for (int64_t v : F(ex, keys::kObjectLabel).int64_list().value()) labels[i][file].push_back(v);
    }
  }
  ASSERT_EQ(boxes[0].size(), 12u);
  EXPECT_EQ(labels[0], labels[1]);
  uint64_t n = 0;
  for (const auto& [file, v] : boxes[0]) {
    ASSERT_EQ(v.size(), boxes[1][file].size()) << file;
    for (size_t k = 0; k < v.size(); ++k, ++n) EXPECT_NEAR(v[k], boxes[1][file][k], 1e-5) << file;
  }
  EXPECT_GT(n, 40u);
}

}  // namespace
}  // namespace libshard::convert
