// Probe: what an encoded image is, read from its header bytes only.
//
// DetectFormat() looks at the magic bytes (never a file name): PNG starts
// 89 50 4E 47 0D 0A 1A 0A, JPEG starts FF D8 FF, WebP starts "RIFF", a
// 4-byte size, "WEBP"; GIF "GIF87a" or "GIF89a"; TIFF "II*\0" or "MM\0*";
// BMP "BM" with a known info-header size at byte 14. ProbeImage() then walks
// the PNG chunks up to the first IDAT, the JPEG markers up to the first SOS,
// the WebP chunk headers (libwebp's WebPGetFeatures), the BMP headers, the
// GIF screen descriptor or the TIFF directories (libtiff), without decoding
// any pixel or allocating anything proportional to the image size; it is
// what `--dry-run` reports.
//
//   StatusOr<ImageInfo> info = ProbeImage(bytes);
//   if (info.ok() && info->format == ImageFormat::kJpeg && info->progressive) ...
//
// Errors: kInvalidArgument when the format is not recognised, kDataLoss when
// the header is truncated or malformed (the message names what is missing).
// A 12-bit JPEG probes fine (bit_depth 12) although it cannot be decoded.
// Thread-safety: pure functions, safe from any thread.
#ifndef LIBSHARD_IMAGE_PROBE_H_
#define LIBSHARD_IMAGE_PROBE_H_

#include <string_view>

#include "libshard/status.h"

namespace libshard::image {

enum class ImageFormat { kUnknown, kPng, kJpeg, kWebp, kBmp, kGif, kTiff };

// "png", "jpeg", "webp", "bmp", "gif", "tiff" or "unknown".
const char* ImageFormatName(ImageFormat format);
// "png", "jpeg" or "jpg", in any case (TensorFlow's ImageNet converter
// writes "JPEG"). Anything else: kInvalidArgument naming the value. WebP is
// not a stated format, nor are BMP, GIF and TIFF: records carry only PNG and
// JPEG (image_record.h); convert re-encodes the others.
StatusOr<ImageFormat> ParseImageFormat(std::string_view name);

// The format from the magic bytes; kUnknown when neither matches.
ImageFormat DetectFormat(std::string_view bytes);

// What data looks like, from its first bytes (at most 64 are looked at), in
// words for a message about data that is not what was expected (a file that
// is not a TFRecord, a record that is not a tf.Example): "PNG image", "JPEG
// image", "WebP image", "GIF image", "BMP image", "TIFF image"
// (DetectFormat), "zstd data" (a zstd frame, as raw arrays are
// stored: raw_array.h), "text" (printable ASCII and white space only), or
// nullptr when none of these. The one "what is this file" of the project.
const char* DescribeContent(std::string_view head);

struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  // Stored dimensions, before any EXIF orientation is applied.
  int width = 0;
  int height = 0;
  // Components as stored: 1 gray, 2 gray+alpha, 3 colour, 4 RGBA or CMYK.
  // A palette PNG reports 3 (4 with a tRNS chunk); WebP 3, or 4 with alpha.
  int channels = 0;
  // Bits per sample as stored: PNG 1/2/4/8/16, JPEG 8 or 12, WebP 8, TIFF
  // 1..16, BMP palette 1/4/8 (else 8), GIF 8.
  int bit_depth = 8;
  bool has_alpha = false;    // PNG alpha channel or tRNS chunk, WebP alpha
  bool palette = false;      // PNG colour type 3 (indexed), BMP <= 8 bits, GIF, TIFF palette
  bool progressive = false;  // JPEG SOF2/6/10/14, or interlaced PNG
  bool arithmetic = false;   // JPEG arithmetic coding (SOF9..SOF15)
  bool cmyk = false;         // JPEG with 4 components (CMYK or YCCK)
  bool ycck = false;         // JPEG 4 components, Adobe transform 2
  bool adobe = false;        // JPEG carries an Adobe APP14 marker
  bool animated = false;     // WebP animation (ANIM/ANMF chunks); not decoded
  bool lossless = false;     // WebP VP8L bitstream
  // EXIF orientation 1..8 from a JPEG APP1 Exif segment; 1 when absent or
  // when the stored value is out of range.
  int orientation = 1;
  // TIFF: the pages (directories) in the file; 1 for every other format.
  int pages = 1;

  // Dimensions after the orientation is applied (5..8 swap them).
  int oriented_width() const { return orientation >= 5 ? height : width; }
  int oriented_height() const { return orientation >= 5 ? width : height; }
};

StatusOr<ImageInfo> ProbeImage(std::string_view bytes);
// As ProbeImage, but for a TIFF the header of page `tiff_page` (from 0; a
// page past the last is kInvalidArgument); other formats ignore it.
StatusOr<ImageInfo> ProbeImage(std::string_view bytes, int tiff_page);

}  // namespace libshard::image

#endif  // LIBSHARD_IMAGE_PROBE_H_
