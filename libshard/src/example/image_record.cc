// The image-record contract (image_record.h): one parser and one decoder
// shared by the batch loader and `shard verify --decode`.
#include "libshard/example/image_record.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "libshard/image/decode.h"
#include "libshard/image/mask_colors.h"
#include "libshard/image/pipeline.h"

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
    case ImageRecordFormat::kRawZst: return image::RawCompression::kZstd;
    case ImageRecordFormat::kRawUpZst: return image::RawCompression::kZstdUp;
    default: return image::RawCompression::kNone;
  }
}

// The message a raw array's decode error gets, naming format and shape.
Status RawArrayError(const ImageRecord& rec, const Status& s) {
  return Status(s.code(), std::string(ImageRecordFormatName(rec.format)) + " array of shape " +
                              Size(rec.shape.width, rec.shape.height) + "x" + std::to_string(rec.shape.channels) +
                              " " + image::RawDtypeName(rec.shape.bit_depth) + ": " + s.message());
}

StatusOr<image::Image> DecodeRawArray(const ImageRecord& rec) {
  auto img = image::DecodeRaw(rec.encoded, rec.shape, CompressionOf(rec.format));
  if (!img.ok()) return RawArrayError(rec, img.status());
  return img;
}

// 16-bit samples to 8 as round(v / 257), libpng's png_set_scale_16 rule.
void To8Bit(image::Image* img) {
  if (img->bit_depth() != 16) return;
  image::Image out(img->width(), img->height(), img->channels(), 8);
  const size_t n = static_cast<size_t>(img->width()) * img->height() * img->channels();
  const auto* src = reinterpret_cast<const uint16_t*>(img->data());
  uint8_t* dst = out.data();
  for (size_t i = 0; i < n; ++i) dst[i] = static_cast<uint8_t>((src[i] + 128u) / 257u);
  *img = std::move(out);
}

double FilterSupport(image::Filter f) {
  switch (f) {
    case image::Filter::kBox: return 0.5;
    case image::Filter::kBicubic: return 2.0;
    case image::Filter::kLanczos3: return 3.0;
    default: return 1.0;
  }
}

// Decode-only-the-crop for kStretch + crop on an upright 8-bit YCbCr/gray
// JPEG: the same DCT scale and the same resample box (scaled by 1/d) as
// DecodeAndTransform, over just the region the filter reads, so the result
// is the same.
Status DecodeJpegCrop(std::string_view bytes, const image::ImageInfo& info, const image::TransformSpec& spec,
                      int channels, image::Image* out) {
  const int d = image::ChooseJpegScale(info, spec);
  const image::PixelRect& c = *spec.crop;
  const double bx0 = static_cast<double>(c.x) / d, by0 = static_cast<double>(c.y) / d;
  const double bx1 = static_cast<double>(c.x + c.width) / d, by1 = static_cast<double>(c.y + c.height) / d;
  const int sw = (info.width + d - 1) / d, sh = (info.height + d - 1) / d;
  const double shrink = std::max({1.0, (bx1 - bx0) / spec.width, (by1 - by0) / spec.height});
  const int margin = static_cast<int>(std::ceil(FilterSupport(spec.filter) * shrink)) + 2;
  image::PixelRect r;
  r.x = std::max(0, static_cast<int>(std::floor(bx0)) - margin);
  r.y = std::max(0, static_cast<int>(std::floor(by0)) - margin);
  r.width = std::min(sw, static_cast<int>(std::ceil(bx1)) + margin) - r.x;
  r.height = std::min(sh, static_cast<int>(std::ceil(by1)) + margin) - r.y;
  thread_local image::Image part;
  LIBSHARD_RETURN_IF_ERROR(image::DecodeJpegRegion(bytes, d, channels == 1, &r, &part));
  image::ResampleBox box;
  box.x0 = bx0 - r.x;
  box.y0 = by0 - r.y;
  box.x1 = bx1 - r.x;
  box.y1 = by1 - r.y;
  LIBSHARD_ASSIGN_OR_RETURN(*out, image::Resample(part, box, spec.width, spec.height, spec.filter));
  return Status::OK();
}

void FlipHorizontal(uint8_t* p, int width, int height, int channels) {
  for (int y = 0; y < height; ++y) {
    uint8_t* row = p + static_cast<size_t>(y) * width * channels;
    for (int a = 0, b = width - 1; a < b; ++a, --b) {
      for (int c = 0; c < channels; ++c) std::swap(row[a * channels + c], row[b * channels + c]);
    }
  }
}

Status CopyOut(const image::Image& img, int w, int h, int c, uint8_t* dst, const char* what) {
  if (img.width() != w || img.height() != h || img.channels() != c || img.bit_depth() != 8) {
    return InvalidArgumentError(std::string(what) + " came out " + std::to_string(img.width()) + "x" +
                                std::to_string(img.height()) + "x" + std::to_string(img.channels()) + " (" +
                                std::to_string(img.bit_depth()) + "-bit), the batch needs " + std::to_string(w) +
                                "x" + std::to_string(h) + "x" + std::to_string(c) + " 8-bit");
  }
  std::memcpy(dst, img.data(), img.byte_size());
  return Status::OK();
}

bool NoGeometry(const image::TransformSpec& spec) { return spec.mode == image::ResizeMode::kNone && !spec.crop; }

// A uint8 raw array already of the batch's shape: decompressed (and
// unfiltered) straight into the batch slot, on the thread's zstd context.
Status RawIntoBatch(const ImageRecord& rec, uint8_t* dst) {
  const uint64_t n = image::RawByteSize(rec.shape);
  Status s = image::DecodeRawInto(rec.encoded, rec.shape, CompressionOf(rec.format), dst, n);
  return s.ok() ? s : RawArrayError(rec, s);
}

Status ImagePixels(const ImageRecord& rec, const ImageRecordLimits& limits, const PixelRequest& r, uint8_t* dst) {
  const int W = r.width, H = r.height, C = r.channels;
  if (rec.raw()) {
    if (NoGeometry(r.spec) && rec.shape.width == W && rec.shape.height == H && rec.shape.channels == C &&
        rec.shape.bit_depth == 8) {
      return RawIntoBatch(rec, dst);
    }
    LIBSHARD_ASSIGN_OR_RETURN(image::Image img, DecodeRawArray(rec));
    To8Bit(&img);
    image::DecodeOptions policy;
    policy.channels = C == 1 ? image::ChannelMode::kGray : image::ChannelMode::kRgb;
    image::ApplyPixelPolicy(policy, &img);
    if (NoGeometry(r.spec)) return CopyOut(img, W, H, C, dst, "the image");
    LIBSHARD_ASSIGN_OR_RETURN(image::Image out, image::Transform(img, r.spec));
    return CopyOut(out, W, H, C, dst, "the image");
  }
  image::DecodeOptions d;
  d.channels = C == 1 ? image::ChannelMode::kGray : image::ChannelMode::kRgb;
  d.max_pixels = limits.max_pixels;
  if (NoGeometry(r.spec)) {
    // Already the batch's size: decode into a per-thread image, one copy.
    thread_local image::Image decoded;
    LIBSHARD_RETURN_IF_ERROR(image::DecodeImageInto(rec.encoded, d, &decoded));
    return CopyOut(decoded, W, H, C, dst, "the image");
  }
  const image::ImageInfo& info = rec.info;
  image::Image out;
  if (r.spec.crop && r.crop_decode && info.format == image::ImageFormat::kJpeg && !info.cmyk &&
      info.orientation == 1 && info.bit_depth == 8) {
    LIBSHARD_RETURN_IF_ERROR(DecodeJpegCrop(rec.encoded, info, r.spec, C, &out));
  } else {
    LIBSHARD_ASSIGN_OR_RETURN(out, image::DecodeAndTransform(rec.encoded, d, r.spec));
  }
  return CopyOut(out, W, H, C, dst, "the image");
}

}  // namespace

const char* ImageRecordFormatName(ImageRecordFormat format) {
  switch (format) {
    case ImageRecordFormat::kJpeg: return "jpeg";
    case ImageRecordFormat::kPng: return "png";
    case ImageRecordFormat::kRaw: return image::RawFormatName(image::RawCompression::kNone);
    case ImageRecordFormat::kRawZst: return image::RawFormatName(image::RawCompression::kZstd);
    case ImageRecordFormat::kRawUpZst: return image::RawFormatName(image::RawCompression::kZstdUp);
  }
  return "?";
}

StatusOr<ImageRecordFormat> ParseImageRecordFormat(std::string_view name) {
  if (auto raw = image::ParseRawFormat(name); raw.ok()) {
    switch (*raw) {
      case image::RawCompression::kZstd: return ImageRecordFormat::kRawZst;
      case image::RawCompression::kZstdUp: return ImageRecordFormat::kRawUpZst;
      case image::RawCompression::kNone: return ImageRecordFormat::kRaw;
    }
  }
  if (auto f = image::ParseImageFormat(name); f.ok()) {
    return *f == image::ImageFormat::kPng ? ImageRecordFormat::kPng : ImageRecordFormat::kJpeg;
  }
  return DataLossError("format " + Quoted(name) + " is not jpeg, png, raw, raw.zst or raw.up.zst");
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
      return Fail(part, RecordPart::kImage,
                  DataLossError(keys.image + " (" + std::to_string(rec.encoded.size()) +
                                " bytes) is neither PNG nor JPEG"));
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
                  Status(info.status().code(), std::string(ImageRecordFormatName(content)) +
                                                   " does not decode: " + info.status().message()));
    }
    rec.info = *info;
    s = CheckPixelLimit(ImageRecordFormatName(content), info->width, info->height, limits);
    if (!s.ok()) return Fail(part, RecordPart::kImage, s);
    rec.width = info->format == image::ImageFormat::kJpeg ? info->oriented_width() : info->width;
    rec.height = info->format == image::ImageFormat::kJpeg ? info->oriented_height() : info->height;
  }

  FeatureView label;
  if (ex.Find(keys.label, &label) && label.kind() != FeatureKind::kNone) {
    if (label.kind() != FeatureKind::kInt64) {
      return Fail(part, RecordPart::kLabel,
                  DataLossError("feature \"" + keys.label + "\" is " + FeatureKindName(label.kind()) +
                                ", expected int64_list"));
    }
    if (label.size() > 0) {
      rec.label = label.int64(0);
      rec.has_label = true;
    }
  }
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
    return Fail(part, RecordPart::kMaskSize,
                DataLossError("mask is " + Size(out->width(), out->height()) + ", the image " +
                              Size(rec.width, rec.height)));
  }
  if (out->bit_depth() != 8) {
    return Fail(part, RecordPart::kMask,
                DataLossError(std::string("png mask is ") + std::to_string(out->bit_depth()) +
                              "-bit; masks are 8-bit class indices"));
  }
  return Status::OK();
}

Status DecodeRecordPixels(const ImageRecord& rec, const ImageRecordKeys& keys, const ImageRecordLimits& limits,
                          const PixelRequest& r, uint8_t* image, uint8_t* mask) {
  LIBSHARD_RETURN_IF_ERROR(ImagePixels(rec, limits, r, image));
  if (r.flip) FlipHorizontal(image, r.width, r.height, r.channels);
  if (mask == nullptr) return Status::OK();
  image::Image m;
  LIBSHARD_RETURN_IF_ERROR(DecodeRecordMask(rec, keys, limits, &m));
  LIBSHARD_ASSIGN_OR_RETURN(image::Geometry g, image::PlanGeometry(rec.width, rec.height, r.spec));
  LIBSHARD_ASSIGN_OR_RETURN(image::Image mout,
                            image::ApplyGeometry(m, g, image::Filter::kNearest,
                                                 {r.mask_fill, r.mask_fill, r.mask_fill, r.mask_fill}));
  LIBSHARD_RETURN_IF_ERROR(CopyOut(mout, r.width, r.height, 1, mask, "the mask"));
  if (r.flip) FlipHorizontal(mask, r.width, r.height, 1);
  return Status::OK();
}

}  // namespace libshard::example
