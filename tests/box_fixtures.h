// Detection records for the loader, verify and report tests: PNG images (so
// colours survive) with filled rectangles drawn where their boxes say, under
// the Object Detection API's keys (example/box_record.h).
#ifndef LIBSHARD_TESTS_BOX_FIXTURES_H_
#define LIBSHARD_TESTS_BOX_FIXTURES_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "libshard/example/box_record.h"
#include "libshard/example/example_builder.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/encode.h"
#include "libshard/image/image.h"
#include "libshard/record/record_writer.h"

namespace libshard::testing {

// A rectangle in pixels, [x0, x1) x [y0, y1), of class `label` (1 red, 2
// green, 3 blue: the colour is the label's channel at 255).
struct PixelBox {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  int64_t label = 1;
};

struct BoxSample {
  int width = 96;
  int height = 72;
  std::vector<PixelBox> boxes;
  bool box_keys = true;  // false: a record without any box key
  // Raw key lists written instead of `boxes` when set (malformed records).
  std::vector<float> xmin, ymin, xmax, ymax;
  std::vector<int64_t> labels;
  bool raw_lists = false;
};

// A black image with each box filled in its class colour.
inline image::Image DrawBoxes(const BoxSample& s) {
  image::Image img(s.width, s.height, 3);
  for (int y = 0; y < s.height; ++y)
    for (int x = 0; x < s.width * 3; ++x) img.row(y)[x] = 0;
  for (const PixelBox& b : s.boxes)
    for (int y = b.y0; y < b.y1; ++y)
      for (int x = b.x0; x < b.x1; ++x) img.row(y)[x * 3 + (b.label - 1) % 3] = 255;
  return img;
}

inline std::string BoxRecordBytes(const BoxSample& s, int64_t image_label) {
  example::ExampleBuilder b;
  b.AddBytes(keys::kEncoded, *image::EncodePng(DrawBoxes(s)));
  b.AddBytes(keys::kFormat, "png");
  b.AddInt64(keys::kHeight, s.height);
  b.AddInt64(keys::kWidth, s.width);
  b.AddInt64(keys::kLabel, image_label);
  if (s.box_keys) {
    std::vector<float> x0 = s.xmin, y0 = s.ymin, x1 = s.xmax, y1 = s.ymax;
    std::vector<int64_t> l = s.labels;
    std::vector<std::string> text;
    if (!s.raw_lists) {
      for (const PixelBox& p : s.boxes) {
        x0.push_back(static_cast<float>(p.x0) / s.width);
        x1.push_back(static_cast<float>(p.x1) / s.width);
        y0.push_back(static_cast<float>(p.y0) / s.height);
        y1.push_back(static_cast<float>(p.y1) / s.height);
        l.push_back(p.label);
        text.push_back(p.label == 1 ? "red" : p.label == 2 ? "green" : "blue");
      }
    }
    b.AddFloatList(keys::kObjectXmin, x0.data(), x0.size());
    b.AddFloatList(keys::kObjectYmin, y0.data(), y0.size());
    b.AddFloatList(keys::kObjectXmax, x1.data(), x1.size());
    b.AddFloatList(keys::kObjectYmax, y1.data(), y1.size());
    b.AddInt64List(keys::kObjectLabel, l.data(), l.size());
    if (!s.raw_lists) b.AddBytesList(keys::kObjectText, std::vector<std::string_view>(text.begin(), text.end()));
  }
  return b.Serialize();
}

// Writes one shard of `samples` (image label = the sample's index).
inline void WriteBoxShard(const std::string& path, const std::vector<BoxSample>& samples) {
  auto w = record::RecordWriter::Create(path, {});
  ASSERT_TRUE(w.ok()) << w.status();
  for (size_t i = 0; i < samples.size(); ++i) {
    ASSERT_TRUE((*w)->Write(BoxRecordBytes(samples[i], static_cast<int64_t>(i))).ok());
  }
  ASSERT_TRUE((*w)->Close().ok());
}

}  // namespace libshard::testing

#endif  // LIBSHARD_TESTS_BOX_FIXTURES_H_
