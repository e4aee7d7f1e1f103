// Pass-through: whether a JPEG input may be copied byte for byte instead of
// decoded and re-encoded.
//
// With ReencodeMode::kAuto a JPEG is passed through when the output is JPEG
// and nothing about its pixels would change: no crop, resize or padding
// (the Geometry is the identity), no EXIF rotation to apply, no colour
// conversion (gray stays gray, colour stays 3-component YCbCr/RGB, never
// CMYK/YCCK), 8-bit, Huffman-coded (arithmetic coding is refused because
// many readers cannot decode it), and no DCT scaling. kAlways always
// re-encodes. The decision comes with a reason for --dry-run and logs.
//
//   PassThroughDecision d = DecidePassThrough(info, decode_opts, geometry,
//                                             OutputFormat::kJpeg, ReencodeMode::kAuto);
//   if (d.pass_through) record.image = original_bytes;
//
// Thread-safety: a pure function.
#ifndef LIBSHARD_IMAGE_PASSTHROUGH_H_
#define LIBSHARD_IMAGE_PASSTHROUGH_H_

#include <string>
#include <string_view>

#include "libshard/image/decode.h"
#include "libshard/image/encode.h"
#include "libshard/image/probe.h"
#include "libshard/image/transform.h"
#include "libshard/status.h"

namespace libshard::image {

enum class ReencodeMode { kAuto, kAlways };
// "auto" / "always".
const char* ReencodeModeName(ReencodeMode mode);
StatusOr<ReencodeMode> ParseReencodeMode(std::string_view name);

struct PassThroughDecision {
  bool pass_through = false;
  // Why not (or "unchanged JPEG" when passing through).
  std::string reason;
};

// `geometry` is the plan for the oriented image (PlanGeometry).
PassThroughDecision DecidePassThrough(const ImageInfo& info, const DecodeOptions& decode, const Geometry& geometry,
                                      OutputFormat output, ReencodeMode mode);

}  // namespace libshard::image

#endif  // LIBSHARD_IMAGE_PASSTHROUGH_H_
