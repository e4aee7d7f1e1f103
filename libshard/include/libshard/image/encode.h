// Encode: an Image to JPEG (libjpeg-turbo) or PNG (libpng) bytes.
//
// JPEG takes 8-bit gray or RGB; an image with alpha or 16-bit samples is
// refused (composite / reduce it at decode time, see decode.h). PNG takes
// 1..4 channels at 8 or 16 bits and is lossless: use it for masks. Raw
// arrays are in raw_array.h.
//
//   JpegEncodeOptions jo;
//   jo.quality = 95;
//   jo.subsampling = ChromaSubsampling::k444;
//   StatusOr<std::string> jpeg = EncodeJpeg(img, jo);
//
// Errors: kInvalidArgument for an option out of range or an image the format
// cannot hold; kInternal if the library itself fails.
// Thread-safety: safe from any thread; each thread reuses its own encoder
// handle and output buffer (thread_local).
#ifndef LIBSHARD_IMAGE_ENCODE_H_
#define LIBSHARD_IMAGE_ENCODE_H_

#include <string>
#include <string_view>

#include "libshard/image/image.h"
#include "libshard/status.h"

namespace libshard::image {

// What a converter writes: an encoded image or a raw array (raw_array.h).
enum class OutputFormat { kJpeg, kPng, kRaw };
// "jpeg", "png", "raw".
const char* OutputFormatName(OutputFormat format);
StatusOr<OutputFormat> ParseOutputFormat(std::string_view name);

enum class ChromaSubsampling {
  k420,  // chroma halved both ways (smallest files; the usual photo choice)
  k444,  // full-resolution chroma
};

struct JpegEncodeOptions {
  // libjpeg quality 1..100 (standard IJG tables scaled). Default: 90.
  int quality = 90;
  // Chroma subsampling for colour images. Default: k420.
  ChromaSubsampling subsampling = ChromaSubsampling::k420;
  // Progressive (multi-scan) JPEG; implies optimised Huffman tables.
  // Default: false.
  bool progressive = false;
  // Two-pass optimised Huffman tables (smaller, slower). Default: false.
  bool optimize_huffman = false;
};

StatusOr<std::string> EncodeJpeg(const Image& img, const JpegEncodeOptions& options = {});

struct PngEncodeOptions {
  // zlib level 0 (store) .. 9 (smallest). Default: 6.
  int compression_level = 6;
};

StatusOr<std::string> EncodePng(const Image& img, const PngEncodeOptions& options = {});

}  // namespace libshard::image

#endif  // LIBSHARD_IMAGE_ENCODE_H_
