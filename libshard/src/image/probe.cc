// Header-only parsing of PNG chunks and JPEG markers (see probe.h).
#include "libshard/image/probe.h"

#include <webp/decode.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "image/codec_internal.h"
#include "image/exif.h"

namespace libshard::image {
namespace {

constexpr unsigned char kPngSignature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};

uint32_t Be32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
uint16_t Be16(const unsigned char* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }

bool ValidPngDepth(int color_type, int depth) {
  switch (color_type) {
    case 0:
      return depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16;
    case 3:
      return depth == 1 || depth == 2 || depth == 4 || depth == 8;
    case 2:
    case 4:
    case 6:
      return depth == 8 || depth == 16;
    default:
      return false;
  }
}

StatusOr<ImageInfo> ProbePng(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  ImageInfo info;
  info.format = ImageFormat::kPng;
  size_t pos = 8;
  bool seen_ihdr = false;
  while (true) {
    if (pos + 8 > n) {
      return DataLossError("PNG: truncated at byte " + std::to_string(pos) +
                           (seen_ihdr ? " before the first IDAT chunk" : " before IHDR"));
    }
    const uint32_t len = Be32(p + pos);
    std::string type(reinterpret_cast<const char*>(p + pos + 4), 4);
    if (len > 0x7fffffffu || pos + 12 + len > n) {
      return DataLossError("PNG: truncated: chunk " + type + " at byte " + std::to_string(pos) +
                           " runs past the end of the data");
    }
    const unsigned char* data = p + pos + 8;
    if (!seen_ihdr) {
      if (type != "IHDR" || len != 13) {
        return DataLossError("PNG: first chunk is " + type + ", not a 13-byte IHDR");
      }
      const uint32_t crc = static_cast<uint32_t>(crc32(0L, p + pos + 4, 4 + len));
      if (crc != Be32(data + len)) return DataLossError("PNG: IHDR CRC mismatch");
      const uint32_t w = Be32(data), h = Be32(data + 4);
      const int depth = data[8], color_type = data[9], interlace = data[12];
      if (w == 0 || h == 0 || w > 0x7fffffffu || h > 0x7fffffffu) {
        return DataLossError("PNG: invalid IHDR dimensions " + std::to_string(w) + "x" + std::to_string(h));
      }
      if (!ValidPngDepth(color_type, depth)) {
        return DataLossError("PNG: invalid IHDR colour type " + std::to_string(color_type) + " with bit depth " +
                             std::to_string(depth));
      }
      if (interlace > 1) return DataLossError("PNG: invalid IHDR interlace method");
      info.width = static_cast<int>(w);
      info.height = static_cast<int>(h);
      info.bit_depth = depth;
      info.progressive = interlace == 1;
      static constexpr int kChannels[7] = {1, 0, 3, 3, 2, 0, 4};
      info.channels = kChannels[color_type];
      info.has_alpha = color_type == 4 || color_type == 6;
      info.palette = color_type == 3;
      seen_ihdr = true;
    } else if (type == "tRNS") {
      info.has_alpha = true;
      if (info.channels == 1 || info.channels == 3) info.channels += 1;
    } else if (type == "IDAT") {
      return info;
    } else if (type == "IEND") {
      return DataLossError("PNG: no IDAT chunk before IEND");
    }
    pos += 12 + len;
  }
}

bool IsSof(int m) { return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC; }

StatusOr<ImageInfo> ProbeJpeg(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  ImageInfo info;
  info.format = ImageFormat::kJpeg;
  bool seen_sof = false;
  int adobe_transform = -1;
  size_t pos = 2;
  while (true) {
    // Markers may be preceded by any number of 0xFF fill bytes.
    if (pos >= n || p[pos] != 0xFF) {
      if (pos >= n) {
        return DataLossError(std::string("JPEG: truncated at byte ") + std::to_string(pos) +
                             (seen_sof ? " before SOS" : " before SOF"));
      }
      return DataLossError("JPEG: expected a marker at byte " + std::to_string(pos));
    }
    while (pos < n && p[pos] == 0xFF) ++pos;
    if (pos >= n) return DataLossError("JPEG: truncated inside a marker");
    const int m = p[pos++];
    if (m == 0xD9) {
      return DataLossError(seen_sof ? "JPEG: missing SOS marker (EOI before scan data)"
                                    : "JPEG: missing SOF marker (EOI before frame header)");
    }
    if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) continue;  // no length field
    if (pos + 2 > n) return DataLossError("JPEG: truncated marker length at byte " + std::to_string(pos));
    const size_t len = Be16(p + pos);
    if (len < 2 || pos + len > n) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "%02X", m);
      return DataLossError(std::string("JPEG: truncated: marker 0xFF") + hex + " segment at byte " +
                           std::to_string(pos - 2) + " runs past the end of the data" +
                           (seen_sof ? " (before SOS)" : " (before the SOF marker)"));
    }
    const unsigned char* seg = p + pos + 2;
    const size_t seg_len = len - 2;
    if (IsSof(m)) {
      if (seg_len < 6) return DataLossError("JPEG: SOF segment too short");
      info.bit_depth = seg[0];
      info.height = Be16(seg + 1);
      info.width = Be16(seg + 3);
      info.channels = seg[5];
      info.progressive = (m & 0x03) == 0x02;
      info.arithmetic = m >= 0xC9;
      if (info.width == 0 || info.height == 0) {
        return DataLossError("JPEG: zero image dimension in SOF (" + std::to_string(info.width) + "x" +
                             std::to_string(info.height) + ")");
      }
      if (info.channels != 1 && info.channels != 3 && info.channels != 4) {
        return UnimplementedError("JPEG: " + std::to_string(info.channels) + " components are not supported");
      }
      seen_sof = true;
    } else if (m == 0xE1 && seg_len >= 6 && std::memcmp(seg, "Exif\0\0", 6) == 0) {
      info.orientation = internal::ExifOrientation(seg + 6, seg_len - 6);
    } else if (m == 0xEE && seg_len >= 12 && std::memcmp(seg, "Adobe", 5) == 0) {
      info.adobe = true;
      adobe_transform = seg[11];
    } else if (m == 0xDA) {
      if (!seen_sof) return DataLossError("JPEG: missing SOF marker before SOS");
      break;
    }
    pos += len;
  }
  info.cmyk = info.channels == 4;
  info.ycck = info.cmyk && adobe_transform == 2;
  return info;
}

// libwebp's WebPGetFeatures reads the RIFF, VP8X, VP8 and VP8L headers only.
StatusOr<ImageInfo> ProbeWebp(std::string_view bytes) {
  WebPBitstreamFeatures f;
  const VP8StatusCode code = WebPGetFeatures(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &f);
  if (code == VP8_STATUS_NOT_ENOUGH_DATA) {
    return DataLossError("WebP: truncated header (" + std::to_string(bytes.size()) + " bytes)");
  }
  if (code != VP8_STATUS_OK) {
    return DataLossError("WebP: invalid header (libwebp status " + std::to_string(code) + ")");
  }
  ImageInfo info;
  info.format = ImageFormat::kWebp;
  info.width = f.width;
  info.height = f.height;
  info.has_alpha = f.has_alpha != 0;
  info.channels = info.has_alpha ? 4 : 3;
  info.animated = f.has_animation != 0;
  info.lossless = f.format == 2;
  return info;
}

// GIF, BMP or TIFF by their magic bytes (BigTIFF included); kUnknown if none.
ImageFormat DetectOtherFormat(std::string_view b) {
  auto starts = [&](std::string_view magic) { return b.substr(0, magic.size()) == magic; };
  if (starts("GIF87a") || starts("GIF89a")) return ImageFormat::kGif;
  if (starts(std::string_view("II*\0", 4)) || starts(std::string_view("MM\0*", 4)) ||
      starts(std::string_view("II+\0", 4)) || starts(std::string_view("MM\0+", 4))) {
    return ImageFormat::kTiff;
  }
  // BMP: "BM", file size, 4 reserved bytes, pixel offset, then a DIB header
  // whose own size is one of the known ones (so text starting "BM" is not one).
  if (starts("BM") && b.size() >= 18) {
    const auto* p = reinterpret_cast<const unsigned char*>(b.data());
    const uint32_t dib = p[14] | (p[15] << 8) | (p[16] << 16) | (uint32_t{p[17]} << 24);
    if (dib == 12 || dib == 40 || dib == 52 || dib == 56 || dib == 64 || dib == 108 || dib == 124) {
      return ImageFormat::kBmp;
    }
  }
  return ImageFormat::kUnknown;
}

}  // namespace

const char* ImageFormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      return "png";
    case ImageFormat::kJpeg:
      return "jpeg";
    case ImageFormat::kWebp:
      return "webp";
    case ImageFormat::kBmp:
      return "bmp";
    case ImageFormat::kGif:
      return "gif";
    case ImageFormat::kTiff:
      return "tiff";
    case ImageFormat::kUnknown:
      break;
  }
  return "unknown";
}

StatusOr<ImageFormat> ParseImageFormat(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (lower == "png") return ImageFormat::kPng;
  if (lower == "jpeg" || lower == "jpg") return ImageFormat::kJpeg;
  return InvalidArgumentError("unknown image format '" + std::string(name) + "' (expected jpeg or png)");
}

ImageFormat DetectFormat(std::string_view bytes) {
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), kPngSignature, 8) == 0) {
    return ImageFormat::kPng;
  }
  if (bytes.size() >= 3 && static_cast<unsigned char>(bytes[0]) == 0xFF &&
      static_cast<unsigned char>(bytes[1]) == 0xD8 && static_cast<unsigned char>(bytes[2]) == 0xFF) {
    return ImageFormat::kJpeg;
  }
  if (bytes.size() >= 12 && std::memcmp(bytes.data(), "RIFF", 4) == 0 &&
      std::memcmp(bytes.data() + 8, "WEBP", 4) == 0) {
    return ImageFormat::kWebp;
  }
  return DetectOtherFormat(bytes);
}

const char* DescribeContent(std::string_view head) {
  switch (DetectFormat(head)) {
    case ImageFormat::kPng:
      return "PNG image";
    case ImageFormat::kJpeg:
      return "JPEG image";
    case ImageFormat::kWebp:
      return "WebP image";
    case ImageFormat::kGif:
      return "GIF image";
    case ImageFormat::kBmp:
      return "BMP image";
    case ImageFormat::kTiff:
      return "TIFF image";
    case ImageFormat::kUnknown:
      break;
  }
  static constexpr char kZstdMagic[] = {'\x28', '\xb5', '\x2f', '\xfd'};  // ZSTD_MAGICNUMBER, little-endian
  if (head.size() >= 4 && std::memcmp(head.data(), kZstdMagic, 4) == 0) return "zstd data";
  const std::string_view first = head.substr(0, 64);
  if (!first.empty() && std::all_of(first.begin(), first.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return (u >= 0x20 && u < 0x7f) || (u >= '\t' && u <= '\r');  // isprint or isspace
      })) {
    return "text";
  }
  return nullptr;
}

StatusOr<ImageInfo> ProbeImage(std::string_view bytes, int tiff_page) {
  if (tiff_page != 0 && DetectFormat(bytes) == ImageFormat::kTiff) return internal::ProbeTiff(bytes, tiff_page);
  return ProbeImage(bytes);
}

StatusOr<ImageInfo> ProbeImage(std::string_view bytes) {
  switch (DetectFormat(bytes)) {
    case ImageFormat::kPng:
      return ProbePng(bytes);
    case ImageFormat::kJpeg:
      return ProbeJpeg(bytes);
    case ImageFormat::kWebp:
      return ProbeWebp(bytes);
    case ImageFormat::kBmp:
      return internal::ProbeBmp(bytes);
    case ImageFormat::kGif:
      return internal::ProbeGif(bytes);
    case ImageFormat::kTiff:
      return internal::ProbeTiff(bytes, 0);
    case ImageFormat::kUnknown:
      break;
  }
  if (bytes.empty()) return InvalidArgumentError("image: empty data");
  return InvalidArgumentError("image: unrecognised format (not a PNG, JPEG, WebP, GIF, BMP or TIFF signature)");
}

}  // namespace libshard::image
