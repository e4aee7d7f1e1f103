// EXIF orientation (transform.h Orient): a pixel-exact copy with the axes
// mapped, as PIL.ImageOps.exif_transpose does.
#include <cstring>

#include "libshard/image/transform.h"

namespace libshard::image {

Image Orient(const Image& img, int orientation) {
  if (orientation < 2 || orientation > 8) return img;
  const int w = img.width(), h = img.height();
  const bool swap = orientation >= 5;
  Image out(swap ? h : w, swap ? w : h, img.channels(), img.bit_depth());
  const size_t px = static_cast<size_t>(img.channels()) * img.bytes_per_sample();
  for (int y = 0; y < out.height(); ++y) {
    uint8_t* d = out.row(y);
    for (int x = 0; x < out.width(); ++x, d += px) {
      int sx = x, sy = y;
      switch (orientation) {
        case 2:
          sx = w - 1 - x;
          break;
        case 3:
          sx = w - 1 - x;
          sy = h - 1 - y;
          break;
        case 4:
          sy = h - 1 - y;
          break;
        case 5:
          sx = y;
          sy = x;
          break;
        case 6:
          sx = y;
          sy = h - 1 - x;
          break;
        case 7:
          sx = w - 1 - y;
          sy = h - 1 - x;
          break;
        case 8:
          sx = w - 1 - y;
          sy = x;
          break;
      }
      std::memcpy(d, img.row(sy) + sx * px, px);
    }
  }
  return out;
}

}  // namespace libshard::image
