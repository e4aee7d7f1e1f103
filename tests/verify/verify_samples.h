// Shard payloads for the verifier's tests, as `shard convert` writes them:
// image samples (JPEG, PNG, raw arrays, masks) built from a pattern, and
// shards of them, framed in memory or written with their .idx.
#ifndef LIBSHARD_TESTS_VERIFY_VERIFY_SAMPLES_H_
#define LIBSHARD_TESTS_VERIFY_VERIFY_SAMPLES_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "libshard/example/example_builder.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/encode.h"
#include "libshard/image/raw_array.h"
#include "libshard/io/writable_file.h"
#include "libshard/record/format.h"
#include "libshard/record/record_writer.h"

namespace libshard::verify::test {

// `payloads` framed as a shard in memory; its index text in `*index` when given.
inline std::string Frame(const std::vector<std::string>& payloads, std::string* index = nullptr) {
  std::string data, idx;
  record::RecordWriter writer(io::NewStringWritableFile(&data), index ? io::NewStringWritableFile(&idx) : nullptr);
  for (const auto& p : payloads) EXPECT_TRUE(writer.Write(p).ok());
  EXPECT_TRUE(writer.Close().ok());
  if (index) *index = idx;
  return data;
}

inline image::Image Pattern(int width, int height, int channels, int seed = 0) {
  image::Image img(width, height, channels);
  for (size_t i = 0; i < img.byte_size(); ++i) img.data()[i] = static_cast<uint8_t>(i * 7 + seed * 31);
  return img;
}

inline std::string Jpeg(const image::Image& img) {
  auto b = image::EncodeJpeg(img);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? *b : "";
}
inline std::string Png(const image::Image& img) {
  auto b = image::EncodePng(img);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? *b : "";
}

// An image sample as `shard convert` writes it: the image keys of
// example/image_keys.h. Tests change the builder's input to damage it.
struct Sample {
  std::string encoded;
  std::string format = "jpeg";
  int64_t height = 6, width = 8, channels = 3;
  bool with_label = true;
  int64_t label = 0;
  bool height_as_bytes = false;  // the wrong kind for image/height
  std::vector<int64_t> shape;    // raw arrays
  std::string dtype;
  std::string mask, mask_format;

  std::string Serialize() const {
    example::ExampleBuilder b;
    b.AddBytes(keys::kEncoded, encoded);
    b.AddBytes(keys::kFormat, format);
    if (height_as_bytes) {
      b.AddBytes(keys::kHeight, std::to_string(height));
    } else {
      b.AddInt64(keys::kHeight, height);
    }
    b.AddInt64(keys::kWidth, width);
    b.AddInt64(keys::kChannels, channels);
    if (with_label) b.AddInt64(keys::kLabel, label);
    if (!shape.empty()) b.AddInt64List(keys::kShape, shape.data(), shape.size());
    if (!dtype.empty()) b.AddBytes(keys::kDtype, dtype);
    if (!mask.empty()) {
      b.AddBytes(keys::kMaskEncoded, mask);
      b.AddBytes(keys::kMaskFormat, mask_format);
    }
    return b.Serialize();
  }
};

inline Sample JpegSample(int seed, int64_t label) {
  Sample s;
  s.encoded = Jpeg(Pattern(8, 6, 3, seed));
  s.label = label;
  return s;
}

// Writes `samples` as a shard (and its .idx); returns each record's offset.
inline std::vector<uint64_t> WriteShard(const std::string& path, const std::vector<Sample>& samples) {
  record::WriterOptions wo;
  wo.write_index = true;
  auto writer = record::RecordWriter::Create(path, wo);
  EXPECT_TRUE(writer.ok()) << writer.status();
  std::vector<uint64_t> offsets;
  uint64_t offset = 0;
  for (const Sample& s : samples) {
    std::string rec = s.Serialize();
    offsets.push_back(offset);
    offset += rec.size() + record::kFramingOverhead;
    EXPECT_TRUE((*writer)->Write(rec).ok());
  }
  EXPECT_TRUE((*writer)->Close().ok());
  return offsets;
}

inline Sample PngSample(const image::Image& img) {
  Sample s;
  s.encoded = Png(img);
  s.format = "png";
  s.width = img.width();
  s.height = img.height();
  s.channels = img.channels();
  return s;
}

inline Sample RawSample(const image::Image& img, int zstd_level) {
  Sample s;
  image::RawEncodeOptions ro;
  ro.zstd_level = zstd_level;
  auto bytes = image::EncodeRaw(img, ro);
  EXPECT_TRUE(bytes.ok());
  s.encoded = *bytes;
  s.format = zstd_level == 0 ? "raw" : "raw.zst";
  s.width = img.width();
  s.height = img.height();
  s.channels = img.channels();
  s.shape = {img.height(), img.width(), img.channels()};
  s.dtype = "uint8";
  return s;
}

}  // namespace libshard::verify::test

#endif  // LIBSHARD_TESTS_VERIFY_VERIFY_SAMPLES_H_
