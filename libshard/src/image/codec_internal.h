// Internal pieces shared by the decode/encode front ends. Not installed.
#ifndef LIBSHARD_SRC_IMAGE_CODEC_INTERNAL_H_
#define LIBSHARD_SRC_IMAGE_CODEC_INTERNAL_H_

#include <array>
#include <cstdint>
#include <string_view>

#include "libshard/image/decode.h"
#include "libshard/image/image.h"
#include "libshard/image/probe.h"
#include "libshard/status.h"

namespace libshard::image::internal {

// PNG samples after libpng's expansion: palette -> RGB(A), gray below 8 bits
// -> 8 bits, tRNS -> alpha. 16-bit samples are rounded to 8 unless
// keep_16bit. gray_to_rgb widens gray to RGB inside libpng.
// palette_indices keeps palette indices / gray values unexpanded (index masks).
// decoder picks the implementation (decode.h PngDecoder).
struct PngReadOptions {
  bool keep_16bit = false;
  bool gray_to_rgb = false;
  bool palette_indices = false;
  uint64_t max_pixels = 0;
  PngDecoder decoder = PngDecoder::kAuto;
};
Status DecodePng(std::string_view bytes, const PngReadOptions& options, Image* out);

// The libdeflate decoder (png_libdeflate.cc): true when it decoded the image
// into *out, with the pixels libpng gives for the same options; false when
// it declines the file (palette, tRNS, below 8 bits,
// palette_indices, over max_pixels, or anything libpng would complain
// about), leaving *out reshaped but unspecified. It never reports errors:
// a declined file goes to libpng, which names the problem.
bool DecodePngLibdeflate(std::string_view bytes, const PngReadOptions& options, Image* out);

// JPEG to 1 (gray), 3 (RGB) or 4 (raw CMYK as stored) channels.
struct JpegReadOptions {
  bool gray = false;  // request JCS_GRAYSCALE for 1- and 3-component files
  int scale_denom = 1;
  bool strict = false;
  // A region read keeps libjpeg's whole column range (DecodeJpegRegionUntrimmed).
  bool untrimmed = false;
};
Status DecodeJpeg(std::string_view bytes, const JpegReadOptions& options, Image* out);

// The implementation of decode.h's DecodeJpegRegion (whose comment states
// the contract), with the read options spelled out.
Status DecodeJpegRegion(std::string_view bytes, const JpegReadOptions& options, PixelRect* region, Image* out);

// A still WebP (info from ProbeImage) to 8-bit RGB, or RGBA when it has
// alpha. Animated WebP: kUnimplemented. Corrupt or truncated: kDataLoss.
Status DecodeWebp(std::string_view bytes, const ImageInfo& info, Image* out);

// TIFF (libtiff, tiff_decode.cc): the header of page `page` (0 = first;
// info.pages counts them), and that page's pixels: gray, gray + alpha, RGB or
// RGBA, 16-bit samples kept under keep_16bit. A page past the last:
// kInvalidArgument; truncated or corrupt: kDataLoss naming libtiff's complaint.
StatusOr<ImageInfo> ProbeTiff(std::string_view bytes, int page);
Status DecodeTiff(std::string_view bytes, int page, bool keep_16bit, uint64_t max_pixels, Image* out);

// GIF (giflib, gif_decode.cc): the logical screen, and the first frame on it
// as RGB, or RGBA when the frame has a transparent index. kDataLoss when
// truncated or corrupt, or when the frame extends past the screen;
// kResourceExhausted when the frame has more than max_pixels (both checked
// before a row is decoded).
StatusOr<ImageInfo> ProbeGif(std::string_view bytes);
Status DecodeGif(std::string_view bytes, uint64_t max_pixels, Image* out);

// BMP (bmp_decode.cc, libshard's own bounded reader): uncompressed 1/4/8-bit
// palette, 16/24/32-bit and bit-field files to RGB, or RGBA with an alpha
// mask. RLE/JPEG/PNG inside BMP: kUnimplemented; truncated: kDataLoss.
StatusOr<ImageInfo> ProbeBmp(std::string_view bytes);
Status DecodeBmp(std::string_view bytes, Image* out);

// Luma with Pillow's "L" weights (ITU-R 601-2), rounded.
inline uint32_t Luma8(uint32_t r, uint32_t g, uint32_t b) { return (r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16; }

// Applies the alpha / channel part of the pixel policy to a decoded image
// (1..4 channels, 8 or 16 bit). Returns without copying when nothing changes.
void ApplyPixelPolicy(const DecodeOptions& options, Image* img);

}  // namespace libshard::image::internal

#endif  // LIBSHARD_SRC_IMAGE_CODEC_INTERNAL_H_
