#include "photo_testutil.h"

#include <algorithm>

#include "libshard/util/random.h"

namespace libshard::testing {

image::Image SyntheticPhoto(int width, int height, uint64_t seed) {
  util::SplitMix64 rng(util::MixSeed(seed, 0x9407, 0));
  auto colour = [&rng](int c[3]) {
    for (int k = 0; k < 3; ++k) c[k] = static_cast<int>(rng.Below(256));
  };
  image::Image img(width, height, 3);
  // Gradient from colour a to colour b along (dx, dy).
  int a[3], b[3];
  colour(a);
  colour(b);
  const int dx = static_cast<int>(rng.Below(201)) - 100, dy = static_cast<int>(rng.Below(201)) - 100;
  const int64_t span = std::max<int64_t>(1, std::abs(dx) * int64_t{width} + std::abs(dy) * int64_t{height});
  const int64_t base = (dx < 0 ? -dx * int64_t{width} : 0) + (dy < 0 ? -dy * int64_t{height} : 0);
  for (int y = 0; y < height; ++y) {
    uint8_t* row = img.row(y);
    for (int x = 0; x < width; ++x) {
      const int64_t t = base + dx * int64_t{x} + dy * int64_t{y};  // 0..span
      for (int k = 0; k < 3; ++k) row[x * 3 + k] = static_cast<uint8_t>(a[k] + (b[k] - a[k]) * t / span);
    }
  }
  // Shapes, sized relative to the picture.
  const int shapes = 4 + static_cast<int>(rng.Below(8));
  for (int s = 0; s < shapes; ++s) {
    int c[3];
    colour(c);
    const int64_t cx = rng.Below(width), cy = rng.Below(height);
    const int64_t rx = std::max<int64_t>(2, width / 16 + rng.Below(width / 3 + 1));
    const int64_t ry = std::max<int64_t>(2, height / 16 + rng.Below(height / 3 + 1));
    const bool ellipse = rng.Below(2) == 0;
    for (int64_t y = std::max<int64_t>(0, cy - ry); y < std::min<int64_t>(height, cy + ry); ++y) {
      uint8_t* row = img.row(static_cast<int>(y));
      for (int64_t x = std::max<int64_t>(0, cx - rx); x < std::min<int64_t>(width, cx + rx); ++x) {
        const int64_t ux = (x - cx) * ry, uy = (y - cy) * rx;
        if (ellipse && ux * ux + uy * uy > rx * rx * ry * ry) continue;
        for (int k = 0; k < 3; ++k) row[x * 3 + k] = static_cast<uint8_t>(c[k]);
      }
    }
  }
  for (int y = 0; y < height; ++y) {
    uint8_t* row = img.row(y);
    for (size_t i = 0; i < img.row_bytes(); ++i) {
      const int v = row[i] + static_cast<int>(rng.Below(13)) - 6;
      row[i] = static_cast<uint8_t>(std::clamp(v, 0, 255));
    }
  }
  return img;
}

image::Image CropOf(const image::Image& img, int x, int y, int w, int h) {
  image::Image out(w, h, img.channels(), img.bit_depth());
  const size_t px = static_cast<size_t>(img.channels()) * img.bytes_per_sample();
  for (int r = 0; r < h; ++r) std::copy_n(img.row(y + r) + x * px, w * px, out.row(r));
  return out;
}

image::Image MirrorOf(const image::Image& img) {
  image::Image out(img.width(), img.height(), img.channels(), img.bit_depth());
  const size_t px = static_cast<size_t>(img.channels()) * img.bytes_per_sample();
  for (int y = 0; y < img.height(); ++y) {
    for (int x = 0; x < img.width(); ++x) std::copy_n(img.row(y) + x * px, px, out.row(y) + (img.width() - 1 - x) * px);
  }
  return out;
}

}  // namespace libshard::testing
