// Geometry planning and application (transform.h).
#include "libshard/image/transform.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace libshard::image {
namespace {

int RoundDim(double v) { return std::max(1, static_cast<int>(std::lround(v))); }

bool IsInteger(double v) { return v == std::floor(v); }

void FillCanvas(Image* img, const std::array<uint8_t, 4>& fill) {
  const int c = img->channels();
  uint16_t v[4];
  switch (c) {
    case 1:
      v[0] = fill[0];
      break;
    case 2:
      v[0] = fill[0];
      v[1] = fill[3];
      break;
    case 3:
      v[0] = fill[0];
      v[1] = fill[1];
      v[2] = fill[2];
      break;
    default:
      for (int k = 0; k < 4; ++k) v[k] = fill[k];
      break;
  }
  const size_t n = static_cast<size_t>(img->width()) * img->height();
  if (img->bit_depth() == 16) {
    uint16_t* p = img->samples16();
    for (size_t i = 0; i < n; ++i)
      for (int k = 0; k < c; ++k) *p++ = static_cast<uint16_t>(v[k] * 257);
  } else {
    uint8_t* p = img->data();
    for (size_t i = 0; i < n; ++i)
      for (int k = 0; k < c; ++k) *p++ = static_cast<uint8_t>(v[k]);
  }
}

}  // namespace

const char* ResizeModeName(ResizeMode mode) {
  switch (mode) {
    case ResizeMode::kNone:
      return "none";
    case ResizeMode::kStretch:
      return "stretch";
    case ResizeMode::kCenterCrop:
      return "center-crop";
    case ResizeMode::kKeepRatio:
      return "keep-ratio";
    case ResizeMode::kLetterbox:
      return "letterbox";
    case ResizeMode::kCropOrPad:
      return "crop-or-pad";
    case ResizeMode::kShorterSide:
      return "shorter-side";
  }
  return "?";
}

StatusOr<ResizeMode> ParseResizeMode(std::string_view name) {
  for (ResizeMode m : {ResizeMode::kNone, ResizeMode::kStretch, ResizeMode::kCenterCrop, ResizeMode::kKeepRatio,
                       ResizeMode::kLetterbox, ResizeMode::kCropOrPad, ResizeMode::kShorterSide}) {
    if (name == ResizeModeName(m)) return m;
  }
  return InvalidArgumentError("unknown resize mode '" + std::string(name) +
                              "' (expected none, stretch, center-crop, keep-ratio, letterbox, "
                              "crop-or-pad or shorter-side)");
}

Status ParseImageSize(std::string_view text, int* width, int* height) {
  const std::string s(text);
  // Plain decimal digits, 1..5 of them, on each side of an optional 'x'.
  auto number = [](const std::string& part, int* out) {
    if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::stoi(part);
    return true;
  };
  const size_t x = s.find('x');
  const bool ok = x == std::string::npos ? number(s, width) && number(s, height)
                                         : number(s.substr(0, x), width) && number(s.substr(x + 1), height);
  if (!ok) return InvalidArgumentError("expected N or WxH, got '" + s + "'");
  if (*width <= 0 || *height <= 0 || *width > 65535 || *height > 65535) {
    return InvalidArgumentError(s + " is out of range");
  }
  return Status::OK();
}

StatusOr<std::array<uint8_t, 4>> ParseFillColor(std::string_view text) {
  const std::string s(text);
  std::array<int, 4> v = {0, 0, 0, 255};
  int n = 0;
  size_t pos = 0;
  while (true) {
    const size_t comma = s.find(',', pos);
    const std::string part = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const bool digits = !part.empty() && part.size() <= 3 && part.find_first_not_of("0123456789") == std::string::npos;
    if (n == 4 || !digits || std::stoi(part) > 255) break;
    v[n++] = std::stoi(part);
    if (comma == std::string::npos) {
      if (n < 3) break;
      std::array<uint8_t, 4> rgba;
      for (int k = 0; k < 4; ++k) rgba[k] = static_cast<uint8_t>(v[k]);
      return rgba;
    }
    pos = comma + 1;
  }
  return InvalidArgumentError("expected R,G,B or R,G,B,A with values 0..255, got '" + s + "'");
}

bool Geometry::identity() const {
  return box.x0 == 0 && box.y0 == 0 && box.x1 == src_width && box.y1 == src_height && scaled_width == src_width &&
         scaled_height == src_height && out_width == src_width && out_height == src_height && offset_x == 0 &&
         offset_y == 0;
}

bool Geometry::resamples() const {
  return !IsInteger(box.x0) || !IsInteger(box.y0) || !IsInteger(box.x1) || !IsInteger(box.y1) ||
         box.x1 - box.x0 != scaled_width || box.y1 - box.y0 != scaled_height;
}

StatusOr<Geometry> PlanGeometry(int src_width, int src_height, const TransformSpec& spec) {
  if (src_width <= 0 || src_height <= 0) {
    return InvalidArgumentError("transform: empty source image");
  }
  if (spec.mode != ResizeMode::kNone && (spec.width <= 0 || spec.height <= 0)) {
    return InvalidArgumentError(std::string("transform: mode ") + ResizeModeName(spec.mode) +
                                " needs a positive target size, got " + std::to_string(spec.width) + "x" +
                                std::to_string(spec.height));
  }
  Geometry g;
  g.src_width = src_width;
  g.src_height = src_height;
  int cx = 0, cy = 0, cw = src_width, ch = src_height;
  if (spec.crop) {
    const PixelRect& c = *spec.crop;
    if (c.x < 0 || c.y < 0 || c.width <= 0 || c.height <= 0 || c.x + c.width > src_width ||
        c.y + c.height > src_height) {
      return InvalidArgumentError("transform: crop box " + std::to_string(c.width) + "x" + std::to_string(c.height) +
                                  "+" + std::to_string(c.x) + "+" + std::to_string(c.y) + " is empty or outside the " +
                                  std::to_string(src_width) + "x" + std::to_string(src_height) + " image");
    }
    cx = c.x;
    cy = c.y;
    cw = c.width;
    ch = c.height;
  }
  g.box = ResampleBox{double(cx), double(cy), double(cx + cw), double(cy + ch)};
  g.scaled_width = g.out_width = cw;
  g.scaled_height = g.out_height = ch;
  const int W = spec.width, H = spec.height;
  switch (spec.mode) {
    case ResizeMode::kNone:
      break;
    case ResizeMode::kStretch:
      g.scaled_width = g.out_width = W;
      g.scaled_height = g.out_height = H;
      break;
    case ResizeMode::kCenterCrop: {
      const double s = std::max(double(W) / cw, double(H) / ch);
      const double bw = std::min<double>(cw, W / s), bh = std::min<double>(ch, H / s);
      g.box.x0 = cx + (cw - bw) / 2;
      g.box.x1 = g.box.x0 + bw;
      g.box.y0 = cy + (ch - bh) / 2;
      g.box.y1 = g.box.y0 + bh;
      g.scaled_width = g.out_width = W;
      g.scaled_height = g.out_height = H;
      break;
    }
    case ResizeMode::kKeepRatio:
    case ResizeMode::kLetterbox: {
      const double s = std::min(double(W) / cw, double(H) / ch);
      g.scaled_width = std::min(W, RoundDim(cw * s));
      g.scaled_height = std::min(H, RoundDim(ch * s));
      if (spec.mode == ResizeMode::kKeepRatio) {
        g.out_width = g.scaled_width;
        g.out_height = g.scaled_height;
      } else {
        g.out_width = W;
        g.out_height = H;
        g.offset_x = (W - g.scaled_width) / 2;
        g.offset_y = (H - g.scaled_height) / 2;
      }
      break;
    }
    case ResizeMode::kShorterSide: {
      if (W != H) {
        return InvalidArgumentError("transform: mode shorter-side takes one size N (the shorter side), got " +
                                    std::to_string(W) + "x" + std::to_string(H));
      }
      // torchvision's Resize(N): the long side is int(N * long / short).
      const auto longer = [W](int a, int b) { return static_cast<int>(std::max<int64_t>(1, int64_t{W} * a / b)); };
      g.scaled_width = g.out_width = cw <= ch ? W : longer(cw, ch);
      g.scaled_height = g.out_height = cw <= ch ? longer(ch, cw) : W;
      if (g.out_width > 65535 || g.out_height > 65535) {
        return InvalidArgumentError("transform: shorter-side " + std::to_string(W) + " makes a " + std::to_string(cw) +
                                    "x" + std::to_string(ch) + " image " + std::to_string(g.out_width) + "x" +
                                    std::to_string(g.out_height) + ", over 65535 pixels a side");
      }
      break;
    }
    case ResizeMode::kCropOrPad: {
      // As tf.image.resize_with_crop_or_pad: offsets are floor((a - b) / 2).
      if (cw > W) {
        g.box.x0 = cx + (cw - W) / 2;
        g.box.x1 = g.box.x0 + W;
      } else {
        g.offset_x = (W - cw) / 2;
      }
      if (ch > H) {
        g.box.y0 = cy + (ch - H) / 2;
        g.box.y1 = g.box.y0 + H;
      } else {
        g.offset_y = (H - ch) / 2;
      }
      g.scaled_width = static_cast<int>(g.box.x1 - g.box.x0);
      g.scaled_height = static_cast<int>(g.box.y1 - g.box.y0);
      g.out_width = W;
      g.out_height = H;
      break;
    }
  }
  return g;
}

StatusOr<Image> Crop(const Image& img, const PixelRect& box) {
  if (box.x < 0 || box.y < 0 || box.width <= 0 || box.height <= 0 || box.x + box.width > img.width() ||
      box.y + box.height > img.height()) {
    return InvalidArgumentError("crop: box outside the " + std::to_string(img.width()) + "x" +
                                std::to_string(img.height()) + " image");
  }
  Image out(box.width, box.height, img.channels(), img.bit_depth());
  const size_t px = static_cast<size_t>(img.channels()) * img.bytes_per_sample();
  for (int y = 0; y < box.height; ++y) {
    std::memcpy(out.row(y), img.row(box.y + y) + box.x * px, out.row_bytes());
  }
  return out;
}

StatusOr<Image> ApplyGeometry(const Image& img, const Geometry& g, Filter filter, const std::array<uint8_t, 4>& fill) {
  if (img.empty()) return InvalidArgumentError("transform: empty image");
  if (g.identity() && img.width() == g.src_width && img.height() == g.src_height) return img;
  ResampleBox box = g.box;
  if (img.width() != g.src_width || img.height() != g.src_height) {
    double sx = double(img.width()) / g.src_width, sy = double(img.height()) / g.src_height;
    // A DCT-scaled JPEG is ceil(size / d): its pixel i covers source pixels
    // [i * d, (i + 1) * d), so the exact factor is 1 / d, not the size ratio.
    for (int d : {2, 4, 8}) {
      if (img.width() == (g.src_width + d - 1) / d && img.height() == (g.src_height + d - 1) / d) {
        sx = sy = 1.0 / d;
        break;
      }
    }
    box.x0 *= sx;
    box.x1 = std::min<double>(box.x1 * sx, img.width());
    box.y0 *= sy;
    box.y1 = std::min<double>(box.y1 * sy, img.height());
  }
  Image scaled;
  const bool integer_box = IsInteger(box.x0) && IsInteger(box.y0) && IsInteger(box.x1) && IsInteger(box.y1);
  if (integer_box && box.x1 - box.x0 == g.scaled_width && box.y1 - box.y0 == g.scaled_height) {
    LIBSHARD_ASSIGN_OR_RETURN(scaled, Crop(img, PixelRect{int(box.x0), int(box.y0), g.scaled_width, g.scaled_height}));
  } else {
    LIBSHARD_ASSIGN_OR_RETURN(scaled, Resample(img, box, g.scaled_width, g.scaled_height, filter));
  }
  if (g.out_width == g.scaled_width && g.out_height == g.scaled_height) return scaled;
  Image canvas(g.out_width, g.out_height, img.channels(), img.bit_depth());
  FillCanvas(&canvas, fill);
  const size_t px = static_cast<size_t>(img.channels()) * img.bytes_per_sample();
  for (int y = 0; y < scaled.height(); ++y) {
    std::memcpy(canvas.row(g.offset_y + y) + g.offset_x * px, scaled.row(y), scaled.row_bytes());
  }
  return canvas;
}

StatusOr<Image> Transform(const Image& img, const TransformSpec& spec) {
  LIBSHARD_ASSIGN_OR_RETURN(Geometry g, PlanGeometry(img.width(), img.height(), spec));
  return ApplyGeometry(img, g, spec.filter, spec.fill);
}

StatusOr<ImageAndMask> ApplyGeometryPair(const Image& img, const Image& mask, const Geometry& g,
                                         const TransformSpec& spec, uint8_t mask_fill) {
  if (img.width() != mask.width() || img.height() != mask.height()) {
    return InvalidArgumentError("transform: mask is " + std::to_string(mask.width()) + "x" +
                                std::to_string(mask.height()) + " but its image is " + std::to_string(img.width()) +
                                "x" + std::to_string(img.height()));
  }
  ImageAndMask out;
  LIBSHARD_ASSIGN_OR_RETURN(out.image, ApplyGeometry(img, g, spec.filter, spec.fill));
  LIBSHARD_ASSIGN_OR_RETURN(out.mask,
                            ApplyGeometry(mask, g, Filter::kNearest, {mask_fill, mask_fill, mask_fill, mask_fill}));
  return out;
}

int ChooseJpegScale(const ImageInfo& info, const TransformSpec& spec, double min_filter_shrink) {
  // CMYK -> RGB is not linear, so averaging before it (DCT scaling) differs
  // visibly from averaging after; nearest must pick real source pixels.
  if (info.format != ImageFormat::kJpeg || info.cmyk || spec.mode == ResizeMode::kNone ||
      spec.mode == ResizeMode::kCropOrPad || spec.filter == Filter::kNearest) {
    return 1;
  }
  StatusOr<Geometry> g = PlanGeometry(info.oriented_width(), info.oriented_height(), spec);
  if (!g.ok() || !g->resamples()) return 1;
  const double fx = (g->box.x1 - g->box.x0) / g->scaled_width;
  const double fy = (g->box.y1 - g->box.y0) / g->scaled_height;
  const double f = std::min(fx, fy);
  // The DCT shrink is sharp (libvips leaves the filter 2x to antialias;
  // Pillow's draft() leaves 1x, the default). The box filter has no overlap
  // between taps, so it keeps far more room whatever the caller asks.
  const double margin = spec.filter == Filter::kBox ? std::max(8.0, min_filter_shrink) : min_filter_shrink;
  for (int d : {8, 4, 2}) {
    if (f >= margin * d) return d;
  }
  return 1;
}

}  // namespace libshard::image
