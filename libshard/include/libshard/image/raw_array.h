// Raw arrays: an Image's samples as a plain HWC array, stored or zstd
// compressed (optionally after a row filter), for lossless training data
// (8-bit photos, 16-bit depth maps, masks, ...).
//
// Layout of the decoded bytes: height x width x channels samples,
// row-major, uint8 or uint16 little-endian, no header and no padding. The
// shape and dtype do NOT travel inside the bytes; the writer stores them
// beside the bytes (for a tf.train.Example, docs/image.md recommends
//   image/encoded  bytes   the array: stored, or one zstd frame
//   image/format   bytes   "raw", "raw.zst" or "raw.up.zst"  (RawFormatName)
//   image/shape    int64   [height, width, channels]
//   image/dtype    bytes   "uint8" or "uint16" (RawDtypeName)
// ) and a reader passes them back to DecodeRaw(), which checks that the data
// has exactly the size that shape states, before and after decompression.
//
// The three encodings (docs/formats.md, "Raw arrays"):
//   "raw"         the samples as they are.
//   "raw.zst"     one zstd frame of the samples (content size and checksum
//                 in the frame header).
//   "raw.up.zst"  one zstd frame of the samples after PNG's "Up" filter:
//                 row 0 as it is, every later sample minus the sample one
//                 row above (same column and channel), modulo 2^8 for uint8
//                 and 2^16 for uint16. Undone in place after decompression
//                 (a vector add per row). With zstd level 1, on photos,
//                 about a quarter smaller than "raw.zst" at level 3 and
//                 twice as fast to write.
// Every encoding ever written stays readable: the format names it.
//
//   StatusOr<std::string> bytes = EncodeRaw(img, RawEncodeOptions{});
//   RawShape shape = RawShapeOf(img);
//   StatusOr<Image> back = DecodeRaw(*bytes, shape, RawCompressionFor({}));
//
// Errors: kInvalidArgument (bad shape, level or buffer size), kDataLoss
// (size mismatch, corrupt zstd frame), kResourceExhausted (shape larger than
// max_bytes).
// Thread-safety: safe from any thread; each thread keeps one zstd
// compression and one decompression context for all its calls.
#ifndef LIBSHARD_IMAGE_RAW_ARRAY_H_
#define LIBSHARD_IMAGE_RAW_ARRAY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "libshard/image/image.h"
#include "libshard/status.h"

namespace libshard::image {

enum class RawCompression {
  kNone,    // the samples as they are ("raw")
  kZstd,    // one zstd frame with content size and checksum ("raw.zst")
  kZstdUp,  // Up-filtered samples in one such frame ("raw.up.zst")
};

// The filter applied before zstd.
enum class RawFilter {
  kNone,  // "none": the samples as they are (format "raw.zst")
  kUp,    // "up": each row minus the row above (format "raw.up.zst")
};

struct RawShape {
  int height = 0;
  int width = 0;
  int channels = 0;
  int bit_depth = 8;  // 8 = uint8, 16 = uint16
};

RawShape RawShapeOf(const Image& img);
// "raw" / "raw.zst" / "raw.up.zst".
const char* RawFormatName(RawCompression compression);
StatusOr<RawCompression> ParseRawFormat(std::string_view name);
// "none" / "up".
const char* RawFilterName(RawFilter filter);
StatusOr<RawFilter> ParseRawFilter(std::string_view name);
// "uint8" / "uint16"; ParseRawDtype gives the bit depth.
const char* RawDtypeName(int bit_depth);
StatusOr<int> ParseRawDtype(std::string_view name);

// The default, zstd's fast level -5 without a filter, decodes 224x224 photos
// at 1.8-3.6x the rate of libjpeg-turbo on the same images as JPEG q90 and
// encodes at about half libjpeg-turbo's rate (~0.2 ms per image), at ~0.8x
// the stored size; kUp with level 1 is the smallest (~0.5x) and decodes
// about as fast as JPEG (docs/performance.md has the measured table).
struct RawEncodeOptions {
  // zstd level: 1..22, zstd's fast levels -1 down to ZSTD_minCLevel()
  // (-131072), or 0 to store the samples uncompressed. Default: -5.
  int zstd_level = -5;
  // The filter before zstd; ignored when stored. Default: kNone.
  RawFilter filter = RawFilter::kNone;
};

// kInvalidArgument for a level zstd does not have.
Status ValidateRawEncodeOptions(const RawEncodeOptions& options);

// The compression EncodeRaw uses for these options.
inline RawCompression RawCompressionFor(const RawEncodeOptions& o) {
  if (o.zstd_level == 0) return RawCompression::kNone;
  return o.filter == RawFilter::kUp ? RawCompression::kZstdUp : RawCompression::kZstd;
}

StatusOr<std::string> EncodeRaw(const Image& img, const RawEncodeOptions& options = {});

// The byte count of an array of `shape` (0 for a shape DecodeRaw refuses).
uint64_t RawByteSize(const RawShape& shape);

// The bytes back into an Image of `shape`. max_bytes bounds the
// decompressed size (the shape's byte count is checked against it before
// anything is allocated). Default limit: 1 GiB.
StatusOr<Image> DecodeRaw(std::string_view bytes, const RawShape& shape, RawCompression compression,
                          uint64_t max_bytes = uint64_t{1} << 30);

// As DecodeRaw, into the caller's `dst` of exactly RawByteSize(shape) bytes
// (`dst_size`; another size is kInvalidArgument): zstd decompresses straight
// into it and the Up filter is undone there, no other buffer. On an error
// `dst` holds unspecified bytes.
Status DecodeRawInto(std::string_view bytes, const RawShape& shape, RawCompression compression, uint8_t* dst,
                     uint64_t dst_size, uint64_t max_bytes = uint64_t{1} << 30);

}  // namespace libshard::image

#endif  // LIBSHARD_IMAGE_RAW_ARRAY_H_
