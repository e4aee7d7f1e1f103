// Transform: crop, resize modes, padding and EXIF orientation, planned once
// as a Geometry and applied identically to an image and its mask.
//
// A TransformSpec says what the user asked for; PlanGeometry() turns it into
// a Geometry for a given source size: a (possibly fractional) source box, the
// size that box is resampled to, and where the result sits on the output
// canvas (the rest is filled). Resize modes, for a target W x H:
//   kNone        no scaling (an explicit crop still applies)
//   kStretch     resize to exactly W x H, aspect ratio not kept
//   kCenterCrop  scale so the shorter side fits, then take the centre W x H
//                (done as one resample of the centre box, no intermediate)
//   kKeepRatio   scale to fit inside W x H; output is the scaled size
//   kLetterbox   as kKeepRatio, then pad to W x H centred with `fill`
//   kCropOrPad   TensorFlow's resize_image_with_crop_or_pad: no scaling,
//                centre-crop each side that is too long, centre-pad (with
//                `fill`) each side that is too short
// Scaled sizes are rounded to the nearest integer and never below 1.
//
//   TransformSpec spec;
//   spec.mode = ResizeMode::kCenterCrop;
//   spec.width = spec.height = 224;
//   StatusOr<Image> out = Transform(img, spec);
//
//   // An image and its segmentation mask, same geometry:
//   StatusOr<Geometry> g = PlanGeometry(img.width(), img.height(), spec);
//   StatusOr<ImageAndMask> both = ApplyGeometryPair(img, mask, *g, spec, 255);
//
// Errors: kInvalidArgument for a bad spec (missing target size, crop outside
// the image) or mismatched image/mask sizes.
// Thread-safety: pure functions, safe from any thread.
#ifndef LIBSHARD_IMAGE_TRANSFORM_H_
#define LIBSHARD_IMAGE_TRANSFORM_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "libshard/image/image.h"
#include "libshard/image/probe.h"
#include "libshard/image/resize.h"
#include "libshard/status.h"

namespace libshard::image {

// kShorterSide scales the image so its shorter side is the target size
// (width == height == N; up or down), keeping the aspect ratio, no crop: the
// longer side is trunc(N * long / short), as torchvision's Resize(N).
enum class ResizeMode { kNone, kStretch, kCenterCrop, kKeepRatio, kLetterbox, kCropOrPad, kShorterSide };

// "none", "stretch", "center-crop", "keep-ratio", "letterbox", "crop-or-pad",
// "shorter-side".
const char* ResizeModeName(ResizeMode mode);
StatusOr<ResizeMode> ParseResizeMode(std::string_view name);

// A target size: "224" (224 x 224) or "512x496" (width x height), each
// 1..65535. InvalidArgument "expected N or WxH, got 'TEXT'" / "TEXT is out of
// range".
Status ParseImageSize(std::string_view text, int* width, int* height);

// A fill colour: "R,G,B" or "R,G,B,A", each 0..255 (A defaults to 255).
// InvalidArgument "expected R,G,B or R,G,B,A with values 0..255, got 'TEXT'".
StatusOr<std::array<uint8_t, 4>> ParseFillColor(std::string_view text);

struct TransformSpec {
  // Applied before the resize mode, in (oriented) source pixels. Default: none.
  std::optional<PixelRect> crop;
  // How the (cropped) image reaches width x height. Default: kNone.
  ResizeMode mode = ResizeMode::kNone;
  // Target size; required (> 0) by every mode but kNone. Default: 0.
  int width = 0;
  // Default: 0.
  int height = 0;
  // Resampling filter for images (masks always use kNearest).
  // Default: kBilinear.
  Filter filter = Filter::kBilinear;
  // Padding colour for kLetterbox / kCropOrPad, per channel (gray uses [0],
  // gray+alpha [0] and [3]); 16-bit images scale it by 257.
  // Default: {0, 0, 0, 255} (opaque black).
  std::array<uint8_t, 4> fill = {0, 0, 0, 255};
};

// Where a transform takes pixels from and puts them, in source pixel units.
struct Geometry {
  int src_width = 0;  // source size the plan was made for
  int src_height = 0;
  ResampleBox box;       // source region used
  int scaled_width = 0;  // size `box` is resampled to
  int scaled_height = 0;
  int out_width = 0;  // output canvas
  int out_height = 0;
  int offset_x = 0;  // top-left of the scaled region on the canvas
  int offset_y = 0;

  // True when the output is the source unchanged.
  bool identity() const;
  // True when pixels are interpolated (not only copied/cropped/padded).
  bool resamples() const;
};

StatusOr<Geometry> PlanGeometry(int src_width, int src_height, const TransformSpec& spec);

// Applies `g` to `img`. `img` may be a uniformly downscaled version of the
// source the plan was made for (a JPEG decoded with DCT scaling): the box is
// then scaled by 1/d when img is ceil(src / d) for d = 2, 4 or 8, else by
// img.width() / g.src_width (and likewise for height).
// `fill` pads uncovered canvas pixels.
StatusOr<Image> ApplyGeometry(const Image& img, const Geometry& g, Filter filter, const std::array<uint8_t, 4>& fill);

// PlanGeometry + ApplyGeometry.
StatusOr<Image> Transform(const Image& img, const TransformSpec& spec);

struct ImageAndMask {
  Image image;
  Image mask;
};

// The same geometry on an image (spec.filter, spec.fill) and on its mask
// (nearest, padding with mask_fill, e.g. the ignore index). The mask must
// have the image's size; it may have any channel count.
StatusOr<ImageAndMask> ApplyGeometryPair(const Image& img, const Image& mask, const Geometry& g,
                                         const TransformSpec& spec, uint8_t mask_fill);

// An integer crop (copy).
StatusOr<Image> Crop(const Image& img, const PixelRect& box);

// Applies EXIF orientation 1..8 (2 mirror, 3 rotate 180, 4 flip vertical,
// 5 transpose, 6 rotate 90 clockwise, 7 transverse, 8 rotate 90
// counter-clockwise). Other values return a copy.
Image Orient(const Image& img, int orientation);

// The DCT scale denominator (1, 2, 4 or 8) for decoding a JPEG described by
// `info` (oriented size) under `spec`: the largest n for which the region
// the plan reads, shrunk n times, still leaves the filter a shrink of at
// least `min_filter_shrink` (at least 8 for kBox, whose taps do not
// overlap). The default 1.0 is Pillow's draft() rule (the largest n with the
// shrunk region no smaller than the output); libvips keeps 2.0. 1 for PNG,
// CMYK/YCCK JPEG (the conversion to RGB is not linear), kNearest, kNone,
// kCropOrPad, or a plan that shrinks too little.
//
// Measured on photos (docs/image.md): 512x496 -> 224 centre crop picks 1/2
// under 1.0 (1/1 under 2.0), which makes decode + resize 1.6x faster; the
// result is within a mean absolute difference of 1.5 to 3.7 of full decode
// + resize (under 2.0: at most 1.0), about as far as one more JPEG q90
// generation.
int ChooseJpegScale(const ImageInfo& info, const TransformSpec& spec, double min_filter_shrink = 1.0);

}  // namespace libshard::image

#endif  // LIBSHARD_IMAGE_TRANSFORM_H_
