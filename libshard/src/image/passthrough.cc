#include "libshard/image/passthrough.h"

namespace libshard::image {

const char* ReencodeModeName(ReencodeMode mode) { return mode == ReencodeMode::kAuto ? "auto" : "always"; }

StatusOr<ReencodeMode> ParseReencodeMode(std::string_view name) {
  if (name == "auto") return ReencodeMode::kAuto;
  if (name == "always") return ReencodeMode::kAlways;
  return InvalidArgumentError("unknown reencode mode '" + std::string(name) + "' (expected auto or always)");
}

PassThroughDecision DecidePassThrough(const ImageInfo& info, const DecodeOptions& decode, const Geometry& geometry,
                                      OutputFormat output, ReencodeMode mode) {
  auto no = [](std::string why) { return PassThroughDecision{false, std::move(why)}; };
  if (mode == ReencodeMode::kAlways) return no("re-encoding requested (reencode=always)");
  if (output != OutputFormat::kJpeg) return no(std::string("output format is ") + OutputFormatName(output));
  if (info.format != ImageFormat::kJpeg) return no(std::string("input is ") + ImageFormatName(info.format));
  if (info.bit_depth != 8) return no(std::to_string(info.bit_depth) + "-bit JPEG");
  if (info.cmyk) return no(info.ycck ? "YCCK JPEG needs conversion to RGB" : "CMYK JPEG needs conversion to RGB");
  if (info.arithmetic) return no("arithmetic-coded JPEG");
  if (decode.apply_orientation && info.orientation != 1) {
    return no("EXIF orientation " + std::to_string(info.orientation) + " must be applied");
  }
  if (decode.jpeg_scale_denom != 1) return no("DCT scaling requested");
  if (!geometry.identity()) return no("crop, resize or padding changes the pixels");
  const bool gray = info.channels == 1;
  if (decode.channels == ChannelMode::kRgb && gray) return no("gray JPEG must become RGB");
  if (decode.channels == ChannelMode::kGray && !gray) return no("colour JPEG must become gray");
  return PassThroughDecision{true, "unchanged JPEG"};
}

}  // namespace libshard::image
