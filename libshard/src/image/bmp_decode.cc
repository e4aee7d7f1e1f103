// BMP, read by libshard (codec_internal.h): no Debian library the project
// links reads BMP from memory (libtiff does not read it; TurboJPEG's
// tjLoadImage reads only from a named file and is linked by benchmarks only).
//
// Read: the Windows headers (BITMAPINFOHEADER and its V2..V5 extensions,
// 40..124 bytes) and the OS/2 core header (12 bytes); uncompressed
// (BI_RGB) 1-, 4- and 8-bit palette, 16-, 24- and 32-bit, and BI_BITFIELDS /
// BI_ALPHABITFIELDS 16- and 32-bit; bottom-up and top-down rows. 32-bit
// BI_RGB is BGRX (no alpha), as Pillow reads it; an alpha mask gives RGBA.
// RLE, JPEG and PNG compression are kUnimplemented; a header that does not
// hold together or pixel data past the end of the file is kDataLoss.
#include <algorithm>
#include <cstdint>
#include <string>

#include "image/codec_internal.h"

namespace libshard::image::internal {
namespace {

constexpr uint32_t kBiRgb = 0, kBiRle8 = 1, kBiRle4 = 2, kBiBitfields = 3, kBiJpeg = 4, kBiPng = 5,
                   kBiAlphaBitfields = 6;

uint32_t Le32(const unsigned char* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (uint32_t{p[3]} << 24); }
uint16_t Le16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

// One channel's bit mask: where it sits and how wide it is.
struct Mask {
  uint32_t mask = 0;
  int shift = 0;
  uint32_t max = 0;  // largest value after the shift
  static Mask Of(uint32_t m) {
    Mask r;
    r.mask = m;
    if (m == 0) return r;
    while (!((m >> r.shift) & 1)) ++r.shift;
    r.max = m >> r.shift;
    return r;
  }
  uint8_t Get(uint32_t px) const {
    if (max == 0) return 0;
    return static_cast<uint8_t>((uint64_t{(px & mask) >> shift} * 255 + max / 2) / max);
  }
};

struct BmpHeader {
  uint32_t offset = 0;  // of the pixel data
  uint32_t dib = 0;     // the info header's size
  int width = 0, height = 0;
  bool top_down = false;
  int bpp = 0;
  uint32_t compression = kBiRgb;
  uint32_t palette_at = 0, palette_entries = 0, palette_entry_size = 4;
  Mask r, g, b, a;
};

StatusOr<BmpHeader> ParseHeader(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  if (n < 26) return DataLossError("BMP: truncated header (" + std::to_string(n) + " bytes)");
  BmpHeader h;
  h.offset = Le32(p + 10);
  h.dib = Le32(p + 14);
  if (h.dib == 12) {
    h.width = Le16(p + 18);
    const int32_t height = static_cast<int16_t>(Le16(p + 20));
    h.top_down = height < 0;
    h.height = height < 0 ? -height : height;
    h.bpp = Le16(p + 24);
    h.palette_entry_size = 3;
  } else if (h.dib >= 40 && h.dib <= 124) {
    if (n < 14 + size_t{h.dib}) return DataLossError("BMP: truncated info header (" + std::to_string(n) + " bytes)");
    const int32_t width = static_cast<int32_t>(Le32(p + 18)), height = static_cast<int32_t>(Le32(p + 22));
    if (width <= 0 || height == 0 || height == INT32_MIN) {
      return DataLossError("BMP: invalid dimensions " + std::to_string(width) + "x" + std::to_string(height));
    }
    h.width = width;
    h.top_down = height < 0;
    h.height = height < 0 ? -height : height;
    h.bpp = Le16(p + 28);
    h.compression = Le32(p + 30);
    h.palette_entries = Le32(p + 46);
  } else {
    return DataLossError("BMP: unknown info header size " + std::to_string(h.dib));
  }
  if (h.width <= 0 || h.height <= 0) {
    return DataLossError("BMP: invalid dimensions " + std::to_string(h.width) + "x" + std::to_string(h.height));
  }
  switch (h.compression) {
    case kBiRgb:
    case kBiBitfields:
    case kBiAlphaBitfields:
      break;
    case kBiRle8:
    case kBiRle4:
      return UnimplementedError("BMP: RLE-compressed BMP is not supported; uncompressed BMP is read");
    case kBiJpeg:
    case kBiPng:
      return UnimplementedError("BMP: JPEG or PNG inside a BMP is not supported; uncompressed BMP is read");
    default:
      return DataLossError("BMP: unknown compression " + std::to_string(h.compression));
  }
  const bool bitfields = h.compression != kBiRgb;
  if (bitfields ? h.bpp != 16 && h.bpp != 32
                : h.bpp != 1 && h.bpp != 4 && h.bpp != 8 && h.bpp != 16 && h.bpp != 24 && h.bpp != 32) {
    return DataLossError("BMP: invalid bit count " + std::to_string(h.bpp) + " for compression " +
                         std::to_string(h.compression));
  }
  uint32_t masks_end = 14 + h.dib;
  if (bitfields) {
    // Masks inside a V2+ header, or (40-byte header) right after it.
    const uint32_t count = h.compression == kBiAlphaBitfields ? 4 : 3;
    const uint32_t at = 14 + 40;
    if (h.dib == 40) masks_end += 4 * count;
    if (n < at + 4 * count) return DataLossError("BMP: truncated colour masks");
    h.r = Mask::Of(Le32(p + at));
    h.g = Mask::Of(Le32(p + at + 4));
    h.b = Mask::Of(Le32(p + at + 8));
    if (count == 4 || h.dib >= 56) h.a = Mask::Of(Le32(p + at + 12));
  } else if (h.bpp == 16) {
    h.r = Mask::Of(0x7c00), h.g = Mask::Of(0x03e0), h.b = Mask::Of(0x001f);
  } else if (h.bpp == 32) {
    h.r = Mask::Of(0xff0000), h.g = Mask::Of(0xff00), h.b = Mask::Of(0xff);
  }
  if (h.bpp <= 8) {
    const uint32_t most = uint32_t{1} << h.bpp;
    if (h.palette_entries == 0 || h.palette_entries > most) h.palette_entries = most;
    h.palette_at = masks_end;
    // Writers that leave the count at 0 often store fewer entries than 2^bpp:
    // the table ends where the pixel data starts.
    if (h.offset > h.palette_at) {
      h.palette_entries = std::min(h.palette_entries, (h.offset - h.palette_at) / h.palette_entry_size);
    }
    if (h.palette_entries == 0) return DataLossError("BMP: no colour table before the pixel data");
    if (h.palette_at + uint64_t{h.palette_entries} * h.palette_entry_size > n) {
      return DataLossError("BMP: truncated colour table");
    }
  }
  return h;
}

uint64_t RowStride(const BmpHeader& h) { return (uint64_t{static_cast<uint32_t>(h.width)} * h.bpp + 31) / 32 * 4; }

}  // namespace

StatusOr<ImageInfo> ProbeBmp(std::string_view bytes) {
  LIBSHARD_ASSIGN_OR_RETURN(BmpHeader h, ParseHeader(bytes));
  ImageInfo info;
  info.format = ImageFormat::kBmp;
  info.width = h.width;
  info.height = h.height;
  info.has_alpha = h.a.mask != 0;
  info.channels = info.has_alpha ? 4 : 3;
  info.palette = h.bpp <= 8;
  info.bit_depth = h.bpp <= 8 ? h.bpp : 8;
  return info;
}

Status DecodeBmp(std::string_view bytes, Image* out) {
  LIBSHARD_ASSIGN_OR_RETURN(BmpHeader h, ParseHeader(bytes));
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const uint64_t stride = RowStride(h);
  const uint64_t needed = stride * static_cast<uint64_t>(h.height);
  if (h.offset > bytes.size() || needed > bytes.size() - h.offset) {
    return DataLossError("BMP: truncated: the pixel data needs " + std::to_string(needed) + " bytes from byte " +
                         std::to_string(h.offset) + ", the file has " + std::to_string(bytes.size()));
  }
  const bool alpha = h.a.mask != 0;
  const int channels = alpha ? 4 : 3;
  out->Reset(h.width, h.height, channels, 8);
  const unsigned char* palette = p + h.palette_at;
  for (int y = 0; y < h.height; ++y) {
    const unsigned char* src = p + h.offset + stride * static_cast<uint64_t>(h.top_down ? y : h.height - 1 - y);
    uint8_t* d = out->row(y);
    for (int x = 0; x < h.width; ++x, d += channels) {
      if (h.bpp <= 8) {
        const int per_byte = 8 / h.bpp;
        const int shift = 8 - h.bpp * (x % per_byte + 1);
        const uint32_t index = (src[x / per_byte] >> shift) & ((1u << h.bpp) - 1);
        if (index < h.palette_entries) {
          const unsigned char* e = palette + size_t{index} * h.palette_entry_size;
          d[0] = e[2], d[1] = e[1], d[2] = e[0];
        } else {
          d[0] = d[1] = d[2] = 0;
        }
      } else if (h.bpp == 24) {
        const unsigned char* s = src + size_t{static_cast<uint32_t>(x)} * 3;
        d[0] = s[2], d[1] = s[1], d[2] = s[0];
      } else {
        const uint32_t px = h.bpp == 16 ? Le16(src + size_t{static_cast<uint32_t>(x)} * 2)
                                        : Le32(src + size_t{static_cast<uint32_t>(x)} * 4);
        d[0] = h.r.Get(px), d[1] = h.g.Get(px), d[2] = h.b.Get(px);
        if (alpha) d[3] = h.a.Get(px);
      }
    }
  }
  return Status::OK();
}

}  // namespace libshard::image::internal
