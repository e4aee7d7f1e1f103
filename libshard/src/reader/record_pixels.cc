// Record pixels (reader/record_pixels.h): the loader's geometry over the
// image-record contract (example/image_record.h).
#include "libshard/reader/record_pixels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>

#include "libshard/image/decode.h"
#include "libshard/image/pipeline.h"
#include "libshard/image/raw_array.h"
#include "libshard/image/resize.h"
#include "libshard/image/transform.h"

namespace libshard::reader {
namespace {

using example::ImageRecord;
using example::ImageRecordLimits;

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
    case image::Filter::kBox:
      return 0.5;
    case image::Filter::kBicubic:
      return 2.0;
    case image::Filter::kLanczos3:
      return 3.0;
    default:
      return 1.0;
  }
}

// Mirrors each row of a packed width x height image of C-sample pixels:
// in place (src == dst) or from src into dst.
template <int C>
void FlipRows(const uint8_t* src, uint8_t* dst, int width, int height) {
  const size_t stride = static_cast<size_t>(width) * C;
  for (int y = 0; y < height; ++y) {
    const uint8_t* s = src + y * stride;
    uint8_t* d = dst + y * stride;
    if (s == d) {
      for (int a = 0, b = width - 1; a < b; ++a, --b) {
        uint8_t t[C];
        std::memcpy(t, d + a * C, C);
        std::memcpy(d + a * C, d + b * C, C);
        std::memcpy(d + b * C, t, C);
      }
    } else {
      for (int x = 0; x < width; ++x) std::memcpy(d + (width - 1 - x) * C, s + x * C, C);
    }
  }
}

void FlipHorizontal(const uint8_t* src, uint8_t* dst, int width, int height, int channels) {
  switch (channels) {
    case 1:
      return FlipRows<1>(src, dst, width, height);
    case 2:
      return FlipRows<2>(src, dst, width, height);
    case 3:
      return FlipRows<3>(src, dst, width, height);
    default:
      return FlipRows<4>(src, dst, width, height);
  }
}

Status ShapeError(const char* what, int w, int h, int c, int bits, int W, int H, int C) {
  return InvalidArgumentError(std::string(what) + " came out " + std::to_string(w) + "x" + std::to_string(h) + "x" +
                              std::to_string(c) + " (" + std::to_string(bits) + "-bit), the batch needs " +
                              std::to_string(W) + "x" + std::to_string(H) + "x" + std::to_string(C) + " 8-bit");
}

// The part of the image `spec` resamples onto the whole output (in source
// pixels), when that is all the output holds and it is less than the image:
// a crop (kStretch + crop, random-resized-crop's), or a kCenterCrop /
// kCropOrPad plan that cuts the image without padding (an eval centre crop).
// nullopt for every other plan (letterbox, keep-ratio, padding, the whole
// image, a box-filtered centre crop), which the full decode serves.
std::optional<image::ResampleBox> DecodeWindow(const image::ImageInfo& info, const image::TransformSpec& spec) {
  if (spec.crop) {
    const image::PixelRect& c = *spec.crop;
    return image::ResampleBox{double(c.x), double(c.y), double(c.x + c.width), double(c.y + c.height)};
  }
  if (spec.mode != image::ResizeMode::kCenterCrop && spec.mode != image::ResizeMode::kCropOrPad) return std::nullopt;
  // A box filter's edges are exact to the last bit: over a window the
  // fractional ends of a centre crop's box shift by a whole number of pixels
  // and round differently, so a source pixel on an edge may count or not.
  // The full decode serves it (an integer crop-or-pad cut resamples to a copy).
  if (spec.mode == image::ResizeMode::kCenterCrop && spec.filter == image::Filter::kBox) return std::nullopt;
  StatusOr<image::Geometry> g = image::PlanGeometry(info.width, info.height, spec);
  if (!g.ok() || g->offset_x != 0 || g->offset_y != 0 || g->scaled_width != spec.width ||
      g->scaled_height != spec.height || g->out_width != spec.width || g->out_height != spec.height) {
    return std::nullopt;
  }
  const image::ResampleBox& b = g->box;
  if (b.x1 - b.x0 >= info.width && b.y1 - b.y0 >= info.height) return std::nullopt;  // the whole image
  return b;
}

// Decode-only-the-window (DecodeWindow) on an upright 8-bit YCbCr/gray JPEG:
// the same DCT scale and the same resample box (scaled by 1/d) as
// DecodeAndTransform, over just the region the filter reads (DecodeJpegRegion
// gives exactly the full decode's pixels there), so the result is the same
// Resampled straight into `dst` (the batch slot), mirrored by the resample's
// horizontal pass when `flip` (no pass of its own); a cut of whole pixels
// of the output's size at scale 1 (kCropOrPad) is copied, mirrored as it is
// copied.
Status DecodeJpegWindow(std::string_view bytes, const image::ImageInfo& info, const image::TransformSpec& spec,
                        const image::ResampleBox& window, int channels, bool dct_scale, bool flip, uint8_t* dst) {
  const int d = dct_scale ? image::ChooseJpegScale(info, spec) : 1;
  const double bx0 = window.x0 / d, by0 = window.y0 / d;
  const double bx1 = window.x1 / d, by1 = window.y1 / d;
  const int sw = (info.width + d - 1) / d, sh = (info.height + d - 1) / d;
  const double shrink = std::max({1.0, (bx1 - bx0) / spec.width, (by1 - by0) / spec.height});
  const bool copy = d == 1 && bx0 == std::floor(bx0) && by0 == std::floor(by0) && bx1 - bx0 == spec.width &&
                    by1 - by0 == spec.height;
  // The filter's reach, plus one pixel for the rounding of the box's ends.
  const int margin = copy ? 0 : static_cast<int>(std::ceil(FilterSupport(spec.filter) * shrink)) + 1;
  image::PixelRect r;
  r.x = std::max(0, static_cast<int>(std::floor(bx0)) - margin);
  r.y = std::max(0, static_cast<int>(std::floor(by0)) - margin);
  r.width = std::min(sw, static_cast<int>(std::ceil(bx1)) + margin) - r.x;
  r.height = std::min(sh, static_cast<int>(std::ceil(by1)) + margin) - r.y;
  thread_local image::Image part;
  // Untrimmed: the filter reads inside r only (the margin), so the columns
  // libjpeg adds around it need no copy to be cut off.
  LIBSHARD_RETURN_IF_ERROR(image::DecodeJpegRegionUntrimmed(bytes, d, channels == 1, &r, &part));
  if (part.channels() != channels) {
    return ShapeError("the image", spec.width, spec.height, part.channels(), 8, spec.width, spec.height, channels);
  }
  if (copy) {
    const int x0 = static_cast<int>(bx0) - r.x, y0 = static_cast<int>(by0) - r.y;
    if (x0 < 0 || y0 < 0 || x0 + spec.width > part.width() || y0 + spec.height > part.height()) {
      return ShapeError("the image's window", part.width(), part.height(), channels, 8, spec.width, spec.height,
                        channels);
    }
    const size_t row = static_cast<size_t>(spec.width) * channels;
    for (int y = 0; y < spec.height; ++y) {
      const uint8_t* src = part.row(y0 + y) + static_cast<size_t>(x0) * channels;
      uint8_t* out = dst + row * y;
      if (!flip) {
        std::memcpy(out, src, row);
        continue;
      }
      for (int x = 0; x < spec.width; ++x) {
        std::memcpy(out + static_cast<size_t>(spec.width - 1 - x) * channels, src + static_cast<size_t>(x) * channels,
                    channels);
      }
    }
    return Status::OK();
  }
  image::ResampleBox box;
  box.x0 = bx0 - r.x;
  box.y0 = by0 - r.y;
  box.x1 = bx1 - r.x;
  box.y1 = by1 - r.y;
  return image::ResampleInto(part, box, spec.width, spec.height, spec.filter, dst, flip);
}

Status CopyOut(const image::Image& img, int w, int h, int c, uint8_t* dst, const char* what) {
  if (img.width() != w || img.height() != h || img.channels() != c || img.bit_depth() != 8) {
    return ShapeError(what, img.width(), img.height(), img.channels(), img.bit_depth(), w, h, c);
  }
  std::memcpy(dst, img.data(), img.byte_size());
  return Status::OK();
}

bool NoGeometry(const image::TransformSpec& spec) { return spec.mode == image::ResizeMode::kNone && !spec.crop; }

// The image into `dst`; *flipped tells whether r.flip is already applied.
Status ImagePixels(const ImageRecord& rec, const ImageRecordLimits& limits, const PixelRequest& r, uint8_t* dst,
                   bool* flipped) {
  *flipped = false;
  const int W = r.width, H = r.height, C = r.channels;
  if (rec.raw()) {
    if (NoGeometry(r.spec) && rec.shape.width == W && rec.shape.height == H && rec.shape.channels == C &&
        rec.shape.bit_depth == 8) {
      // Already the batch's shape: decompressed (and unfiltered) straight
      // into the batch slot, on the thread's zstd context.
      return example::DecodeStoredRawInto(rec, dst, image::RawByteSize(rec.shape));
    }
    image::Image img;
    LIBSHARD_RETURN_IF_ERROR(example::DecodeStoredImage(rec, limits, &img));
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
  if (r.crop_decode && info.format == image::ImageFormat::kJpeg && !info.cmyk && info.orientation == 1 &&
      info.bit_depth == 8 && r.spec.width == W && r.spec.height == H) {
    if (std::optional<image::ResampleBox> window = DecodeWindow(info, r.spec)) {
      *flipped = r.flip;
      return DecodeJpegWindow(rec.encoded, info, r.spec, *window, C, r.dct_scale, r.flip, dst);
    }
  }
  image::PipelineOptions po;
  po.shrink_on_load = r.dct_scale;
  LIBSHARD_ASSIGN_OR_RETURN(image::Image out, image::DecodeAndTransform(rec.encoded, d, r.spec, po));
  return CopyOut(out, W, H, C, dst, "the image");
}

}  // namespace

Status DecodeRecordPixels(const ImageRecord& rec, const example::ImageRecordKeys& keys, const ImageRecordLimits& limits,
                          const PixelRequest& r, uint8_t* image, uint8_t* mask) {
  bool flipped = false;
  LIBSHARD_RETURN_IF_ERROR(ImagePixels(rec, limits, r, image, &flipped));
  if (r.flip && !flipped) FlipHorizontal(image, image, r.width, r.height, r.channels);
  if (mask == nullptr) return Status::OK();
  image::Image m;
  LIBSHARD_RETURN_IF_ERROR(example::DecodeRecordMask(rec, keys, limits, &m));
  LIBSHARD_ASSIGN_OR_RETURN(image::Geometry g, image::PlanGeometry(rec.width, rec.height, r.spec));
  LIBSHARD_ASSIGN_OR_RETURN(
      image::Image mout,
      image::ApplyGeometry(m, g, image::Filter::kNearest, {r.mask_fill, r.mask_fill, r.mask_fill, r.mask_fill}));
  LIBSHARD_RETURN_IF_ERROR(CopyOut(mout, r.width, r.height, 1, mask, "the mask"));
  if (r.flip) FlipHorizontal(mask, mask, r.width, r.height, 1);
  return Status::OK();
}

}  // namespace libshard::reader
