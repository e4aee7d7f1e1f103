#include "record_checks.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "libshard/example/image_keys.h"
#include "libshard/image/decode.h"
#include "libshard/image/label_map.h"
#include "libshard/image/probe.h"
#include "libshard/image/raw_array.h"

namespace libshard::verify::internal {

namespace {

using example::ExampleView;
using example::FeatureKind;
using example::FeatureView;

std::string Quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s.substr(0, 64)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (s.size() > 64) out += "...";
  return out + "\"";
}

// The first value of a bytes feature, if there is one.
std::optional<std::string_view> FirstBytes(const ExampleView& ex, std::string_view key) {
  FeatureView f;
  if (!ex.Find(key, &f) || f.kind() != FeatureKind::kBytes || f.size() == 0) return std::nullopt;
  return f.bytes(0);
}

std::optional<int64_t> FirstInt64(const ExampleView& ex, std::string_view key) {
  FeatureView f;
  if (!ex.Find(key, &f) || f.kind() != FeatureKind::kInt64 || f.size() == 0) return std::nullopt;
  return f.int64(0);
}

std::string Size(int64_t w, int64_t h) { return std::to_string(w) + "x" + std::to_string(h); }

// What was decoded: width, height, channels.
struct Decoded {
  int64_t width = 0, height = 0, channels = 0;
};

std::optional<Decoded> DecodeRawImage(const ExampleView& ex, std::string_view bytes, std::string_view format,
                                      const VerifyOptions& options, const RecordFaults& faults) {
  auto bad = [&](std::string message) {
    faults.Add(FaultKind::kRawArrayInvalid, std::move(message));
    return std::nullopt;
  };
  FeatureView shape;
  if (!ex.Find(keys::kShape, &shape) || shape.kind() != FeatureKind::kInt64 || shape.size() != 3) {
    return bad(std::string("raw array without ") + keys::kShape + " as 3 int64 values [height, width, channels]");
  }
  int64_t dims[3];
  shape.CopyInt64s(dims, 3);
  if (dims[0] < 1 || dims[1] < 1 || dims[0] > std::numeric_limits<int>::max() ||
      dims[1] > std::numeric_limits<int>::max() || dims[2] < 1 || dims[2] > 4) {
    return bad(std::string(keys::kShape) + " [" + std::to_string(dims[0]) + ", " + std::to_string(dims[1]) + ", " +
               std::to_string(dims[2]) + "] is not a valid image shape");
  }
  auto dtype = FirstBytes(ex, keys::kDtype);
  if (!dtype) return bad(std::string("raw array without ") + keys::kDtype);
  auto bit_depth = image::ParseRawDtype(*dtype);
  if (!bit_depth.ok()) return bad(std::string(keys::kDtype) + " " + Quoted(*dtype) + ": " + bit_depth.status().message());
  if (static_cast<uint64_t>(dims[0]) * static_cast<uint64_t>(dims[1]) > options.max_pixels) {
    return bad("raw array of " + Size(dims[1], dims[0]) + " exceeds the pixel limit of " +
               std::to_string(options.max_pixels));
  }
  auto compression = image::ParseRawFormat(format);
  image::RawShape rs{static_cast<int>(dims[0]), static_cast<int>(dims[1]), static_cast<int>(dims[2]), *bit_depth};
  auto img = image::DecodeRaw(bytes, rs, *compression);
  if (!img.ok()) {
    return bad(std::string(format) + " array of shape [" + std::to_string(dims[0]) + ", " + std::to_string(dims[1]) +
               ", " + std::to_string(dims[2]) + "] " + std::string(*dtype) + ": " + img.status().message());
  }
  return Decoded{dims[1], dims[0], dims[2]};
}

std::optional<Decoded> DecodeEncodedImage(std::string_view bytes, std::optional<std::string_view> format,
                                          const VerifyOptions& options, const RecordFaults& faults) {
  const image::ImageFormat detected = image::DetectFormat(bytes);
  if (format && *format != "jpeg" && *format != "png") {
    faults.Add(FaultKind::kImageUndecodable, std::string(keys::kFormat) + " " + Quoted(*format) +
                                                 " is not jpeg, png, raw or raw.zst");
    return std::nullopt;
  }
  if (detected == image::ImageFormat::kUnknown) {
    faults.Add(FaultKind::kImageUndecodable, std::string(keys::kEncoded) + " (" + std::to_string(bytes.size()) +
                                                 " bytes) is neither PNG nor JPEG");
    return std::nullopt;
  }
  if (format && *format != image::ImageFormatName(detected)) {
    faults.Add(FaultKind::kImageUndecodable, std::string(keys::kFormat) + " says " + std::string(*format) +
                                                 ", but the bytes are " + image::ImageFormatName(detected));
    return std::nullopt;
  }
  image::DecodeOptions d;
  d.channels = image::ChannelMode::kAuto;  // channels as stored: gray stays gray
  d.alpha = image::AlphaMode::kKeep;
  d.keep_16bit = true;
  d.max_pixels = options.max_pixels;
  d.apply_orientation = false;  // readers (tf.io.decode_jpeg, DALI) see the stored size
  thread_local image::Image img;  // reused: one decode buffer per thread
  Status s = image::DecodeImageInto(bytes, d, &img);
  if (!s.ok()) {
    faults.Add(FaultKind::kImageUndecodable,
               std::string(image::ImageFormatName(detected)) + " does not decode: " + s.message());
    return std::nullopt;
  }
  return Decoded{img.width(), img.height(), img.channels()};
}

void CheckMask(const ExampleView& ex, std::string_view mask, std::optional<int64_t> height,
               std::optional<int64_t> width, const VerifyOptions& options, const RecordFaults& faults) {
  auto format = FirstBytes(ex, keys::kMaskFormat);
  std::string_view fmt = format ? *format : "";
  if (fmt.empty() && image::DetectFormat(mask) == image::ImageFormat::kPng) fmt = "png";
  int64_t got_h = 0, got_w = 0;
  if (fmt == "png") {
    auto img = image::DecodeIndexMask(mask, options.max_pixels);
    if (!img.ok()) {
      faults.Add(FaultKind::kMaskUndecodable, "png mask does not decode: " + img.status().message());
      return;
    }
    got_h = img->height();
    got_w = img->width();
  } else if (fmt == "raw" || fmt == "raw.zst") {
    if (!height || !width || *height < 1 || *width < 1 || *height > std::numeric_limits<int>::max() ||
        *width > std::numeric_limits<int>::max()) {
      faults.Add(FaultKind::kMaskUndecodable, std::string(fmt) + " mask, but no image size to read it with");
      return;
    }
    const uint64_t want = static_cast<uint64_t>(*height) * static_cast<uint64_t>(*width);
    if (want > options.max_pixels) {
      faults.Add(FaultKind::kMaskUndecodable,
                 std::string(fmt) + " mask of " + Size(*width, *height) + " exceeds the pixel limit");
      return;
    }
    if (fmt == "raw" && mask.size() != want) {
      faults.Add(FaultKind::kMaskSizeMismatch, "raw mask has " + std::to_string(mask.size()) + " bytes, a " +
                                                   Size(*width, *height) + " uint8 mask needs " + std::to_string(want));
      return;
    }
    image::RawShape rs{static_cast<int>(*height), static_cast<int>(*width), 1, 8};
    auto img = image::DecodeRaw(mask, rs, fmt == "raw" ? image::RawCompression::kNone : image::RawCompression::kZstd);
    if (!img.ok()) {
      faults.Add(FaultKind::kMaskUndecodable,
                 std::string(fmt) + " mask as " + Size(*width, *height) + " uint8: " + img.status().message());
    }
    return;  // read with the image's size: nothing further to compare
  } else {
    faults.Add(FaultKind::kMaskUndecodable, std::string(keys::kMaskFormat) + " " + Quoted(fmt) +
                                                " is not png, raw or raw.zst");
    return;
  }
  if ((height && *height != got_h) || (width && *width != got_w)) {
    faults.Add(FaultKind::kMaskSizeMismatch,
               "mask is " + Size(got_w, got_h) + ", the image " + Size(width.value_or(got_w), height.value_or(got_h)));
  }
}

}  // namespace

void RecordFaults::Add(FaultKind kind, std::string message) const {
  out->push_back(Fault{offset, record, kind, std::move(message)});
}

void CheckRules(const ExampleView& ex, const RecordRules& rules, const RecordFaults& faults) {
  for (const FeatureRule& rule : rules.schema) {
    FeatureView f;
    if (!ex.Find(rule.key, &f)) {
      if (rule.required) faults.Add(FaultKind::kManifestSchema, "required feature \"" + rule.key + "\" is missing");
      continue;
    }
    if (f.kind() != rule.kind) {
      faults.Add(FaultKind::kManifestSchema, "feature \"" + rule.key + "\" is " +
                                                 example::FeatureKindName(f.kind()) + ", the schema says " +
                                                 example::FeatureKindName(rule.kind));
    }
  }
  if (rules.labels.empty()) return;
  FeatureView label;
  if (!ex.Find(keys::kLabel, &label) || label.kind() != FeatureKind::kInt64) return;  // the schema's business
  thread_local std::vector<int64_t> values;
  values.resize(label.size());
  label.CopyInt64s(values.data(), values.size());
  for (int64_t v : values) {
    if (!std::binary_search(rules.labels.begin(), rules.labels.end(), v)) {
      faults.Add(FaultKind::kManifestLabelOutOfRange,
                 std::string(keys::kLabel) + " " + std::to_string(v) + " is not in the label map (" +
                     std::to_string(rules.labels.size()) + " labels, " + std::to_string(rules.labels.front()) +
                     ".." + std::to_string(rules.labels.back()) + ")");
      return;  // one fault per record
    }
  }
}

void CheckImages(const ExampleView& ex, const VerifyOptions& options, const RecordFaults& faults) {
  auto encoded = FirstBytes(ex, keys::kEncoded);
  if (!encoded) return;
  auto format = FirstBytes(ex, keys::kFormat);
  const auto height = FirstInt64(ex, keys::kHeight);
  const auto width = FirstInt64(ex, keys::kWidth);
  const auto channels = FirstInt64(ex, keys::kChannels);
  std::optional<Decoded> got;
  if (format && (*format == "raw" || *format == "raw.zst")) {
    got = DecodeRawImage(ex, *encoded, *format, options, faults);
  } else {
    got = DecodeEncodedImage(*encoded, format, options, faults);
  }
  if (got) {
    if ((height && *height != got->height) || (width && *width != got->width)) {
      faults.Add(FaultKind::kImageSizeMismatch,
                 "image is " + Size(got->width, got->height) + ", " + keys::kWidth + " x " + keys::kHeight + " say " +
                     Size(width.value_or(got->width), height.value_or(got->height)));
    } else if (channels && *channels != got->channels) {
      faults.Add(FaultKind::kImageSizeMismatch, "image has " + std::to_string(got->channels) + " channels, " +
                                                    keys::kChannels + " says " + std::to_string(*channels));
    }
  }
  if (auto mask = FirstBytes(ex, keys::kMaskEncoded)) {
    CheckMask(ex, *mask, height ? height : (got ? std::optional<int64_t>(got->height) : std::nullopt),
              width ? width : (got ? std::optional<int64_t>(got->width) : std::nullopt), options, faults);
  }
}

}  // namespace libshard::verify::internal
