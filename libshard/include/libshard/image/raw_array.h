// Raw arrays: an Image's samples as a plain HWC array, optionally zstd
// compressed, for lossless training data (16-bit depth maps, masks, ...).
//
// Layout of the decompressed bytes: height x width x channels samples,
// row-major, uint8 or uint16 little-endian, no header and no padding. The
// shape and dtype do NOT travel inside the bytes; the writer stores them
// beside the bytes (for a tf.train.Example, docs/image.md recommends
//   image/encoded  bytes   the array, stored or one zstd frame
//   image/format   bytes   "raw" or "raw.zst"  (RawFormatName)
//   image/shape    int64   [height, width, channels]
//   image/dtype    bytes   "uint8" or "uint16" (RawDtypeName)
// ) and a reader passes them back to DecodeRaw(), which checks that the data
// has exactly the size that shape states, before and after decompression.
//
//   StatusOr<std::string> bytes = EncodeRaw(img, RawEncodeOptions{});
//   RawShape shape = RawShapeOf(img);
//   StatusOr<Image> back = DecodeRaw(*bytes, shape, RawCompression::kZstd);
//
// Errors: kInvalidArgument (bad shape or level), kDataLoss (size mismatch,
// corrupt zstd frame), kResourceExhausted (shape larger than max_bytes).
// Thread-safety: safe from any thread; zstd contexts are per thread.
#ifndef LIBSHARD_IMAGE_RAW_ARRAY_H_
#define LIBSHARD_IMAGE_RAW_ARRAY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "libshard/image/image.h"
#include "libshard/status.h"

namespace libshard::image {

enum class RawCompression {
  kNone,  // the samples as they are ("raw")
  kZstd,  // one zstd frame with content size and checksum ("raw.zst")
};

struct RawShape {
  int height = 0;
  int width = 0;
  int channels = 0;
  int bit_depth = 8;  // 8 = uint8, 16 = uint16
};

RawShape RawShapeOf(const Image& img);
// "raw" / "raw.zst".
const char* RawFormatName(RawCompression compression);
StatusOr<RawCompression> ParseRawFormat(std::string_view name);
// "uint8" / "uint16"; ParseRawDtype gives the bit depth.
const char* RawDtypeName(int bit_depth);
StatusOr<int> ParseRawDtype(std::string_view name);

struct RawEncodeOptions {
  // zstd level 1..22, or 0 to store the samples uncompressed. Default: 3.
  int zstd_level = 3;
};

// The compression EncodeRaw uses for these options.
inline RawCompression RawCompressionFor(const RawEncodeOptions& o) {
  return o.zstd_level == 0 ? RawCompression::kNone : RawCompression::kZstd;
}

StatusOr<std::string> EncodeRaw(const Image& img, const RawEncodeOptions& options = {});

// The bytes back into an Image of `shape`. max_bytes bounds the
// decompressed size (the shape's byte count is checked against it before
// anything is allocated). Default limit: 1 GiB.
StatusOr<Image> DecodeRaw(std::string_view bytes, const RawShape& shape,
                          RawCompression compression, uint64_t max_bytes = uint64_t{1} << 30);

}  // namespace libshard::image

#endif  // LIBSHARD_IMAGE_RAW_ARRAY_H_
