#include "image/exif.h"

#include <cstdint>

namespace libshard::image::internal {

int ExifOrientation(const unsigned char* tiff, size_t size) {
  if (size < 8) return 1;
  bool little;
  if (tiff[0] == 'I' && tiff[1] == 'I') {
    little = true;
  } else if (tiff[0] == 'M' && tiff[1] == 'M') {
    little = false;
  } else {
    return 1;
  }
  auto u16 = [&](size_t off) -> uint32_t {
    return little ? (tiff[off] | (tiff[off + 1] << 8)) : ((tiff[off] << 8) | tiff[off + 1]);
  };
  auto u32 = [&](size_t off) -> uint32_t {
    return little ? (u16(off) | (u16(off + 2) << 16)) : ((u16(off) << 16) | u16(off + 2));
  };
  if (u16(2) != 42) return 1;
  const uint32_t ifd = u32(4);
  if (ifd > size - 2) return 1;
  const uint32_t count = u16(ifd);
  for (uint32_t i = 0; i < count; ++i) {
    const size_t e = ifd + 2 + size_t{i} * 12;
    if (e + 12 > size) return 1;
    if (u16(e) != 0x0112) continue;
    if (u16(e + 2) != 3 || u32(e + 4) < 1) return 1;  // must be SHORT
    const uint32_t v = u16(e + 8);
    return (v >= 1 && v <= 8) ? static_cast<int>(v) : 1;
  }
  return 1;
}

}  // namespace libshard::image::internal
