// The image-record contract (image_record.h): one parser and one decoder of
// stored pixels, shared by the batch loader and `shard verify --decode`.
#include "libshard/example/image_record.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "libshard/image/decode.h"
#include "libshard/image/mask_colors.h"

namespace libshard::example {
namespace {

// A value for a message: printable ASCII, at most 64 characters.
std::string Quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s.substr(0, 64)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (s.size() > 64) out += "...";
  return out + "\"";
}

std::string Size(int64_t w, int64_t h) { return std::to_string(w) + "x" + std::to_string(h); }

std::string ShapeText(const int64_t* dims) {
  return "[" + std::to_string(dims[0]) + ", " + std::to_string(dims[1]) + ", " + std::to_string(dims[2]) + "]";
}

Status Fail(RecordPart* part, RecordPart which, Status s) {
  if (part != nullptr) *part = which;
  return s;
}

// The first value of an optional bytes feature ("" when absent or empty); a
// feature of another kind is an error.
Status OptionalBytes(const ExampleView& ex, const std::string& key, std::string_view* out) {
  *out = {};
  FeatureView f;
  if (!ex.Find(key, &f) || f.kind() == FeatureKind::kNone || f.size() == 0) return Status::OK();
  if (f.kind() != FeatureKind::kBytes) {
    return DataLossError("feature \"" + key + "\" is " + FeatureKindName(f.kind()) + ", expected bytes_list");
  }
  *out = f.bytes(0);
  return Status::OK();
}

Status CheckPixelLimit(const char* what, int64_t w, int64_t h, const ImageRecordLimits& limits) {
  if (static_cast<uint64_t>(w) * static_cast<uint64_t>(h) > limits.max_pixels) {
    return ResourceExhaustedError(std::string(what) + " of " + Size(w, h) + " exceeds the pixel limit of " +
                                  std::to_string(limits.max_pixels));
  }
  return Status::OK();
}

Status ParseRawShape(const ExampleView& ex, const ImageRecordKeys& keys, const ImageRecordLimits& limits,
                     std::string_view bytes, ImageRecordFormat format, image::RawShape* shape) {
  FeatureView f;
  if (!ex.Find(keys.shape, &f) || f.kind() != FeatureKind::kInt64 || f.size() != 3) {
    return DataLossError("raw array without " + keys.shape + " as 3 int64 values [height, width, channels]");
  }
  int64_t dims[3];
  f.CopyInt64s(dims, 3);
  if (dims[0] < 1 || dims[1] < 1 || dims[2] < 1 || dims[2] > 4) {
    return DataLossError(keys.shape + " " + ShapeText(dims) +
                         " is not a valid image shape (height and width >= 1, channels 1..4)");
  }
  const uint64_t cap = std::min<uint64_t>(limits.max_pixels, std::numeric_limits<int>::max());
  if (static_cast<uint64_t>(dims[0]) > cap || static_cast<uint64_t>(dims[1]) > cap ||
      static_cast<uint64_t>(dims[0]) * static_cast<uint64_t>(dims[1]) > limits.max_pixels) {
    return ResourceExhaustedError(keys.shape + " " + ShapeText(dims) + ": " + Size(dims[1], dims[0]) +
                                  " exceeds the pixel limit of " + std::to_string(limits.max_pixels));
  }
  std::string_view dtype;
  LIBSHARD_RETURN_IF_ERROR(OptionalBytes(ex, keys.dtype, &dtype));
  if (dtype.empty()) return DataLossError("raw array without " + keys.dtype);
  auto depth = image::ParseRawDtype(dtype);
  if (!depth.ok()) return DataLossError(keys.dtype + " " + Quoted(dtype) + ": " + depth.status().message());
  *shape = image::RawShape{static_cast<int>(dims[0]), static_cast<int>(dims[1]), static_cast<int>(dims[2]), *depth};
  const uint64_t need = static_cast<uint64_t>(dims[0]) * static_cast<uint64_t>(dims[1]) *
                        static_cast<uint64_t>(dims[2]) * static_cast<uint64_t>(*depth / 8);
  if (format == ImageRecordFormat::kRaw && bytes.size() != need) {
    return DataLossError("raw array has " + std::to_string(bytes.size()) + " bytes, " + keys.shape + " " +
                         ShapeText(dims) + " " + std::string(dtype) + " needs " + std::to_string(need));
  }
  return Status::OK();
}

Status ParseMask(const ExampleView& ex, const ImageRecordKeys& keys, ImageRecord* rec, RecordPart* part) {
  Status s = OptionalBytes(ex, keys.mask, &rec->mask);
  if (s.ok() && !rec->mask.empty()) {
    std::string_view fmt;
    s = OptionalBytes(ex, keys.mask_format, &fmt);
    if (s.ok() && fmt.empty()) {
      if (image::DetectFormat(rec->mask) != image::ImageFormat::kPng) {
        s = DataLossError("mask without " + keys.mask_format + " is not a PNG");
      }
      rec->mask_format = ImageRecordFormat::kPng;
    } else if (s.ok()) {
      auto f = ParseImageRecordFormat(fmt);
      if (!f.ok() || *f == ImageRecordFormat::kJpeg) {
        s = DataLossError(keys.mask_format + " " + Quoted(fmt) + " is not png, raw, raw.zst or raw.up.zst");
      } else {
        rec->mask_format = *f;
      }
    }
  }
  if (!s.ok()) return Fail(part, RecordPart::kMask, s);
  if (rec->mask_format == ImageRecordFormat::kRaw && !rec->mask.empty()) {
    const uint64_t want = static_cast<uint64_t>(rec->width) * static_cast<uint64_t>(rec->height);
    if (rec->mask.size() != want) {
      return Fail(part, RecordPart::kMaskSize,
                  DataLossError("raw mask has " + std::to_string(rec->mask.size()) + " bytes, a " +
                                Size(rec->width, rec->height) + " uint8 mask needs " + std::to_string(want)));
    }
  }
  return Status::OK();
}

image::RawCompression CompressionOf(ImageRecordFormat f) {
  switch (f) {
    case ImageRecordFormat::kRawZst:
      return image::RawCompression::kZstd;
    case ImageRecordFormat::kRawUpZst:
      return image::RawCompression::kZstdUp;
    default:
      return image::RawCompression::kNone;
  }
}

// The message a raw array's decode error gets, naming format and shape.
Status RawArrayError(const ImageRecord& rec, const Status& s) {
  return Status(s.code(), std::string(ImageRecordFormatName(rec.format)) + " array of shape " +
                              Size(rec.shape.width, rec.shape.height) + "x" + std::to_string(rec.shape.channels) + " " +
                              image::RawDtypeName(rec.shape.bit_depth) + ": " + s.message());
}

StatusOr<image::Image> DecodeRawArray(const ImageRecord& rec) {
  auto img = image::DecodeRaw(rec.encoded, rec.shape, CompressionOf(rec.format));
  if (!img.ok()) return RawArrayError(rec, img.status());
  return img;
}

}  // namespace

const char* ImageRecordFormatName(ImageRecordFormat format) {
  switch (format) {
    case ImageRecordFormat::kJpeg:
      return "jpeg";
    case ImageRecordFormat::kPng:
      return "png";
    case ImageRecordFormat::kRaw:
      return image::RawFormatName(image::RawCompression::kNone);
    case ImageRecordFormat::kRawZst:
      return image::RawFormatName(image::RawCompression::kZstd);
    case ImageRecordFormat::kRawUpZst:
      return image::RawFormatName(image::RawCompression::kZstdUp);
  }
  return "?";
}

StatusOr<ImageRecordFormat> ParseImageRecordFormat(std::string_view name) {
  if (auto raw = image::ParseRawFormat(name); raw.ok()) {
    switch (*raw) {
      case image::RawCompression::kZstd:
        return ImageRecordFormat::kRawZst;
      case image::RawCompression::kZstdUp:
        return ImageRecordFormat::kRawUpZst;
      case image::RawCompression::kNone:
        return ImageRecordFormat::kRaw;
    }
  }
  if (auto f = image::ParseImageFormat(name); f.ok()) {
    return *f == image::ImageFormat::kPng ? ImageRecordFormat::kPng : ImageRecordFormat::kJpeg;
  }
  return DataLossError("format " + Quoted(name) + " is not jpeg, png, raw, raw.zst or raw.up.zst");
}

StatusOr<std::optional<int64_t>> ParseRecordLabel(const ExampleView& ex, const std::string& key) {
  FeatureView label;
  if (!ex.Find(key, &label) || label.kind() == FeatureKind::kNone) return std::optional<int64_t>();
  if (label.kind() != FeatureKind::kInt64) {
    return DataLossError("feature \"" + key + "\" is " + FeatureKindName(label.kind()) + ", expected int64_list");
  }
  if (label.size() == 0) return std::optional<int64_t>();
  return std::optional<int64_t>(label.int64(0));
}

StatusOr<ImageRecord> ParseImageRecord(const ExampleView& ex, const ImageRecordKeys& keys,
                                       const ImageRecordLimits& limits, RecordPart* part) {
  ImageRecord rec;
  Status s = OptionalBytes(ex, keys.image, &rec.encoded);
  if (s.ok() && rec.encoded.empty()) s = DataLossError("no bytes in feature \"" + keys.image + "\"");
  std::string_view stated;
  if (s.ok()) s = OptionalBytes(ex, keys.format, &stated);
  if (!s.ok()) return Fail(part, RecordPart::kImage, s);

  const image::ImageFormat detected = image::DetectFormat(rec.encoded);
  if (!stated.empty()) {
    auto f = ParseImageRecordFormat(stated);
    if (!f.ok()) {
      return Fail(part, RecordPart::kImage,
                  DataLossError(keys.format + " " + Quoted(stated) + " is not jpeg, png, raw, raw.zst or raw.up.zst"));
    }
    rec.format = *f;
  }
  if (rec.raw()) {
    s = ParseRawShape(ex, keys, limits, rec.encoded, rec.format, &rec.shape);
    if (!s.ok()) return Fail(part, RecordPart::kRawArray, s);
    rec.width = rec.shape.width;
    rec.height = rec.shape.height;
  } else {
    if (detected == image::ImageFormat::kUnknown) {
      return Fail(
          part, RecordPart::kImage,
          DataLossError(keys.image + " (" + std::to_string(rec.encoded.size()) + " bytes) is neither PNG nor JPEG"));
    }
    if (detected != image::ImageFormat::kPng && detected != image::ImageFormat::kJpeg) {
      return Fail(part, RecordPart::kImage,
                  DataLossError(keys.image + " (" + std::to_string(rec.encoded.size()) + " bytes) is " +
                                image::ImageFormatName(detected) + "; records carry jpeg, png or raw"));
    }
    const ImageRecordFormat content =
        detected == image::ImageFormat::kPng ? ImageRecordFormat::kPng : ImageRecordFormat::kJpeg;
    if (!stated.empty() && rec.format != content) {
      return Fail(part, RecordPart::kImage,
                  DataLossError(keys.format + " says " + ImageRecordFormatName(rec.format) + ", but the bytes are " +
                                ImageRecordFormatName(content)));
    }
    rec.format = content;
    auto info = image::ProbeImage(rec.encoded);
    if (!info.ok()) {
      return Fail(part, RecordPart::kImage,
                  Status(info.status().code(),
                         std::string(ImageRecordFormatName(content)) + " does not decode: " + info.status().message()));
    }
    rec.info = *info;
    s = CheckPixelLimit(ImageRecordFormatName(content), info->width, info->height, limits);
    if (!s.ok()) return Fail(part, RecordPart::kImage, s);
    rec.width = info->format == image::ImageFormat::kJpeg ? info->oriented_width() : info->width;
    rec.height = info->format == image::ImageFormat::kJpeg ? info->oriented_height() : info->height;
  }

  StatusOr<std::optional<int64_t>> label = ParseRecordLabel(ex, keys.label);
  if (!label.ok()) return Fail(part, RecordPart::kLabel, label.status());
  rec.has_label = label->has_value();
  rec.label = label->value_or(-1);
  LIBSHARD_RETURN_IF_ERROR(ParseMask(ex, keys, &rec, part));
  return rec;
}

Status DecodeStoredImage(const ImageRecord& rec, const ImageRecordLimits& limits, image::Image* out) {
  if (rec.raw()) {
    LIBSHARD_ASSIGN_OR_RETURN(*out, DecodeRawArray(rec));
    return Status::OK();
  }
  image::DecodeOptions d;
  d.channels = image::ChannelMode::kAuto;  // channels as stored: gray stays gray
  d.alpha = image::AlphaMode::kKeep;
  d.keep_16bit = true;
  d.max_pixels = limits.max_pixels;
  d.apply_orientation = false;  // readers (tf.io.decode_jpeg, DALI) see the stored size
  Status s = image::DecodeImageInto(rec.encoded, d, out);
  if (!s.ok()) {
    return Status(s.code(), std::string(ImageRecordFormatName(rec.format)) + " does not decode: " + s.message());
  }
  return Status::OK();
}

Status DecodeRecordMask(const ImageRecord& rec, const ImageRecordKeys& keys, const ImageRecordLimits& limits,
                        image::Image* out, RecordPart* part) {
  if (rec.mask.empty()) return Fail(part, RecordPart::kMask, DataLossError("no mask in feature \"" + keys.mask + "\""));
  const char* fmt = ImageRecordFormatName(rec.mask_format);
  if (rec.mask_format == ImageRecordFormat::kPng) {
    auto img = image::DecodeIndexMask(rec.mask, limits.max_pixels);
    if (!img.ok()) {
      return Fail(part, RecordPart::kMask,
                  Status(img.status().code(), std::string("png mask does not decode: ") + img.status().message()));
    }
    *out = std::move(*img);
  } else {
    const image::RawShape ms{rec.height, rec.width, 1, 8};
    auto img = image::DecodeRaw(rec.mask, ms, CompressionOf(rec.mask_format));
    if (!img.ok()) {
      return Fail(part, RecordPart::kMask,
                  Status(img.status().code(), std::string(fmt) + " mask as " + Size(rec.width, rec.height) +
                                                  " uint8: " + img.status().message()));
    }
    *out = std::move(*img);
  }
  if (out->width() != rec.width || out->height() != rec.height) {
    return Fail(
        part, RecordPart::kMaskSize,
        DataLossError("mask is " + Size(out->width(), out->height()) + ", the image " + Size(rec.width, rec.height)));
  }
  if (out->bit_depth() != 8) {
    return Fail(part, RecordPart::kMask,
                DataLossError(std::string("png mask is ") + std::to_string(out->bit_depth()) +
                              "-bit; masks are 8-bit class indices"));
  }
  return Status::OK();
}

Status DecodeStoredRawInto(const ImageRecord& rec, uint8_t* out, uint64_t size) {
  if (!rec.raw()) {
    return InvalidArgumentError(std::string("a ") + ImageRecordFormatName(rec.format) + " record is not a raw array");
  }
  Status s = image::DecodeRawInto(rec.encoded, rec.shape, CompressionOf(rec.format), out, size);
  return s.ok() ? s : RawArrayError(rec, s);
}

}  // namespace libshard::example
