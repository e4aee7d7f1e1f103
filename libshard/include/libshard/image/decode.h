// Decode: PNG (libdeflate + libpng), JPEG (libjpeg-turbo), still WebP (libwebp),
// TIFF (libtiff; one page, the first unless tiff_page says), GIF (giflib; the
// first frame) and uncompressed BMP (libshard's reader) bytes to an Image,
// under an explicit pixel policy. Animated WebP and RLE BMP are refused
// (kUnimplemented).
//
// The format is identified by content (probe.h), never by file name.
// Pixel policy (docs/image.md says the same):
//   * Channels: RGB by default. ChannelMode::kGray gives 1 channel (colour is
//     reduced with Pillow's "L" weights 0.299/0.587/0.114); kAuto keeps gray
//     sources as 1 channel and gives everything else RGB.
//   * Alpha (PNG alpha channel or tRNS, WebP alpha): composited over `background` by
//     default; AlphaMode::kKeep adds the alpha channel instead (RGBA or gray+
//     alpha; sources without alpha stay without).
//   * 16-bit PNG and TIFF samples become 8-bit as round(v / 257); keep_16bit
//     keeps them (bit_depth 16). Samples below 8 bits are scaled to 0..255.
//     TIFF min-is-white is inverted; TIFF associated alpha is divided out.
//   * PNG gamma, cHRM, sRGB and iCCP are ignored: samples are taken as is.
//   * JPEG CMYK / YCCK become RGB as R = (255-C)(255-K)/255 (likewise G, B);
//     with an Adobe APP14 marker the stored samples are inverted first, as
//     Photoshop writes them. No ICC colour management.
//   * JPEG EXIF orientation (1..8) is applied; out-of-range values ignored.
//   * The pixel limit (max_pixels, on the stored size) is checked from the
//     header before any buffer of the image's size is allocated.
//   * Work is bounded by the declared size: a GIF's first frame must lie
//     within its logical screen and the pixel limit (checked before a row is
//     decoded); a JPEG of more than kMaxJpegScans scans is refused when
//     libjpeg reaches the next one (each progressive scan is decoded over the
//     whole image again).
//
//   DecodeOptions opts;
//   opts.alpha = AlphaMode::kKeep;
//   StatusOr<Image> img = DecodeImage(bytes, opts);
//
// Errors: kInvalidArgument (unknown format, bad option), kDataLoss (truncated
// or corrupt data; the message names the decoder's complaint),
// kUnimplemented (valid but unsupported, e.g. 12-bit JPEG),
// kResourceExhausted (pixel limit, scan limit).
// Thread-safety: safe from any number of threads. Each thread keeps its own
// decoder handle and scratch buffers (thread_local), reused across calls.
#ifndef LIBSHARD_IMAGE_DECODE_H_
#define LIBSHARD_IMAGE_DECODE_H_

#include <array>
#include <cstdint>
#include <string_view>

#include "libshard/image/image.h"
#include "libshard/status.h"

namespace libshard::image {

enum class ChannelMode {
  kRgb,   // always 3 colour channels (+ alpha when kept)
  kGray,  // always 1 channel (+ alpha when kept)
  kAuto,  // gray sources stay gray, colour sources are RGB
};

enum class AlphaMode {
  kComposite,  // blend over DecodeOptions::background, drop alpha
  kKeep,       // keep alpha as the last channel
};

// "rgb", "gray", "auto"; InvalidArgument naming the choices otherwise.
StatusOr<ChannelMode> ParseChannelMode(std::string_view name);
// "composite", "keep"; InvalidArgument naming the choices otherwise.
StatusOr<AlphaMode> ParseAlphaMode(std::string_view name);

// Most scans a JPEG may have (libjpeg-turbo's `djpeg -maxscans` guards
// against the same; a progressive JPEG has about 10, libjpeg's default
// script 10 for YCbCr, 6 for gray). Scan 257 is kResourceExhausted.
constexpr int kMaxJpegScans = 256;

struct DecodeOptions {
  // Output channels. Default: kRgb.
  ChannelMode channels = ChannelMode::kRgb;
  // What happens to alpha. Default: kComposite.
  AlphaMode alpha = AlphaMode::kComposite;
  // Colour alpha is composited over (8-bit RGB; gray output uses its luma).
  // Default: white {255, 255, 255}.
  std::array<uint8_t, 3> background = {255, 255, 255};
  // Keep 16-bit PNG and TIFF samples as 16-bit (for raw output). Default: false.
  bool keep_16bit = false;
  // Largest accepted stored width * height. Default: 100'000'000.
  uint64_t max_pixels = 100'000'000;
  // Apply the JPEG EXIF orientation. Default: true.
  bool apply_orientation = true;
  // JPEG DCT-domain downscale: 1, 2, 4 or 8 (output is ceil(size / n)).
  // Ignored for PNG. See transform.h ChooseJpegScale(). Default: 1.
  int jpeg_scale_denom = 1;
  // Fail on any libjpeg warning (corrupt entropy data, extraneous bytes).
  // Truncated data always fails. Default: false.
  bool strict_jpeg = false;
  // The TIFF page (directory) to read, from 0; a page past the last is
  // kInvalidArgument naming how many there are. Other formats ignore it.
  // Default: 0.
  int tiff_page = 0;
};

StatusOr<Image> DecodeImage(std::string_view bytes, const DecodeOptions& options = {});

// The PNG decoders, for tests and benchmarks; DecodeImage uses kAuto.
//   kLibpng: libpng + zlib, for every PNG: the reference.
//   kLibdeflate: the IDAT stream inflated in one call by libdeflate and
//     unfiltered by libshard. It takes only 8- and 16-bit gray, gray + alpha,
//     RGB and RGBA files (interlaced or not) without PLTE or tRNS, whose
//     inflated data fits in 256 MiB, that libpng would decode without
//     complaint; for anything else it is kUnimplemented.
//   kAuto: kLibdeflate where it takes the file, else kLibpng.
// All three give the same pixels under the same options (tested on PngSuite).
enum class PngDecoder { kAuto, kLibpng, kLibdeflate };
// "auto", "libpng", "libdeflate".
const char* PngDecoderName(PngDecoder decoder);
// DecodeImageInto for PNG bytes with the given decoder; other formats are
// kInvalidArgument.
Status DecodePngWith(PngDecoder decoder, std::string_view bytes, const DecodeOptions& options, Image* out);

// As DecodeImage, but into *out, reusing its allocation (keep one Image per
// thread for the lowest cost). On error *out is unspecified.
Status DecodeImageInto(std::string_view bytes, const DecodeOptions& options, Image* out);

// Crop-decode: decodes only `*region` of a JPEG as scaled by 1/scale_denom
// (1, 2, 4 or 8; otherwise kInvalidArgument): rows above it are skipped
// (entropy-decoded only), columns outside it are not transformed (bar the
// iMCU columns around it and a margin for chroma upsampling, trimmed), rows
// below it are not decoded at all. To 1 channel when `gray`, else RGB. No
// EXIF orientation, no pixel policy beyond that; 8-bit YCbCr, RGB and gray
// files only (CMYK/YCCK: kUnimplemented). The pixels are exactly those of
// the same rectangle of the full decode at the same scale (DecodeImage with
// jpeg_scale_denom, apply_orientation off): baseline and progressive, every
// chroma subsampling. A region reaching past the scaled image is clipped to
// it; on return *region is the rectangle *out holds. A progressive file is
// entropy-decoded whole by libjpeg before its first row (only the rest of
// the work is saved). No pixel limit is applied: check ProbeImage's size
// first. Errors as DecodeImage; an empty or negative region is
// kInvalidArgument. Thread-safety as DecodeImage.
Status DecodeJpegRegion(std::string_view bytes, int scale_denom, bool gray, PixelRect* region, Image* out);

// DecodeJpegRegion without its last step, the copy of every row that trims
// libjpeg's column range (the region widened to whole iMCUs and by the
// upsampling margin) down to the region: *out holds whole rows of that
// range, and on return *region is the rectangle *out holds. Only the
// columns of the requested region (clipped to the image) are exactly the
// full decode's; the others, near the range's ends, may differ. For a
// caller that reads no pixel outside the requested region (a resample whose
// filter stays inside it), which saves the copy: a sixth of a loader's
// random-resized-crop sample on 512x496 photos. Errors and thread-safety as
// DecodeJpegRegion.
Status DecodeJpegRegionUntrimmed(std::string_view bytes, int scale_denom, bool gray, PixelRect* region, Image* out);

// The channel and alpha part of the pixel policy (`options.channels`,
// `alpha`, `background`), applied to an already decoded 8- or 16-bit image
// of 1..4 channels (gray, gray+alpha, RGB, RGBA), as DecodeImage applies it.
// Does nothing when nothing changes.
void ApplyPixelPolicy(const DecodeOptions& options, Image* img);

}  // namespace libshard::image

#endif  // LIBSHARD_IMAGE_DECODE_H_
