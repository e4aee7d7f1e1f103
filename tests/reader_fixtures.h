// Shards for the reader tests, written with the library's own writer:
// JPEG / PNG / raw images of known pixels with the converter's keys.
#ifndef LIBSHARD_TESTS_READER_FIXTURES_H_
#define LIBSHARD_TESTS_READER_FIXTURES_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "libshard/example/example_builder.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/encode.h"
#include "libshard/image/image.h"
#include "libshard/image/raw_array.h"
#include "libshard/record/record_writer.h"

namespace libshard::testing {

// A deterministic colourful image: gradients plus a per-sample pattern.
inline image::Image PatternImage(int w, int h, int channels, int seed) {
  image::Image img(w, h, channels);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < channels; ++c)
        img.row(y)[x * channels + c] =
            static_cast<uint8_t>((x * (3 + c) + y * (5 + seed % 7) + seed * 37 + c * 80) & 255);
  return img;
}

struct FixtureOptions {
  int width = 32;
  int height = 24;
  std::string format = "jpeg";  // "jpeg", "png", "raw", "raw.zst"
  bool write_index = true;
  bool masks = false;
};

// Writes `n` records labelled first_label, first_label + 1, ...; returns the
// encoded image bytes of each record.
inline std::vector<std::string> WriteImageShard(const std::string& path, int n, int first_label,
                                                const FixtureOptions& o = {}) {
  record::WriterOptions wo;
  wo.write_index = o.write_index;
  auto w = record::RecordWriter::Create(path, wo);
  EXPECT_TRUE(w.ok()) << w.status();
  std::vector<std::string> encoded;
  for (int i = 0; i < n; ++i) {
    const int label = first_label + i;
    image::Image img = PatternImage(o.width, o.height, 3, label);
    std::string bytes;
    example::ExampleBuilder b;
    if (o.format == "jpeg") {
      bytes = *image::EncodeJpeg(img);
    } else if (o.format == "png") {
      bytes = *image::EncodePng(img);
    } else {
      image::RawEncodeOptions ro;
      ro.zstd_level = o.format == "raw" ? 0 : 3;
      bytes = *image::EncodeRaw(img, ro);
      const int64_t shape[3] = {o.height, o.width, 3};
      b.AddInt64List(keys::kShape, shape, 3);
      b.AddBytes(keys::kDtype, "uint8");
    }
    b.AddBytes(keys::kEncoded, bytes);
    b.AddBytes(keys::kFormat, o.format);
    b.AddInt64(keys::kHeight, o.height);
    b.AddInt64(keys::kWidth, o.width);
    b.AddInt64(keys::kLabel, label);
    b.AddBytes(keys::kText, "class" + std::to_string(label));
    if (o.masks) {
      image::Image mask(o.width, o.height, 1);
      for (int y = 0; y < o.height; ++y)
        for (int x = 0; x < o.width; ++x) mask.row(y)[x] = static_cast<uint8_t>((x / 4 + y / 4 + label) % 5);
      b.AddBytes(keys::kMaskEncoded, *image::EncodePng(mask));
      b.AddBytes(keys::kMaskFormat, "png");
    }
    EXPECT_TRUE((*w)->Write(b.Serialize()).ok());
    encoded.push_back(bytes);
  }
  EXPECT_TRUE((*w)->Close().ok());
  return encoded;
}

// Writes plain records "record-<i>" padded to varied lengths.
inline std::vector<std::string> WritePlainShard(const std::string& path, int n, bool write_index = true) {
  record::WriterOptions wo;
  wo.write_index = write_index;
  auto w = record::RecordWriter::Create(path, wo);
  EXPECT_TRUE(w.ok()) << w.status();
  std::vector<std::string> recs;
  for (int i = 0; i < n; ++i) {
    std::string r = "record-" + std::to_string(i) + std::string(static_cast<size_t>(i * 37 % 5000), 'a' + i % 26);
    EXPECT_TRUE((*w)->Write(r).ok());
    recs.push_back(r);
  }
  EXPECT_TRUE((*w)->Close().ok());
  return recs;
}

}  // namespace libshard::testing

#endif  // LIBSHARD_TESTS_READER_FIXTURES_H_
