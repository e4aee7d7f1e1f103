// OutputFormat names (encode.h).
#include <string>

#include "libshard/image/encode.h"

namespace libshard::image {

const char* OutputFormatName(OutputFormat format) {
  switch (format) {
    case OutputFormat::kJpeg:
      return "jpeg";
    case OutputFormat::kPng:
      return "png";
    case OutputFormat::kRaw:
      return "raw";
  }
  return "?";
}

StatusOr<OutputFormat> ParseOutputFormat(std::string_view name) {
  if (name == "jpeg" || name == "jpg") return OutputFormat::kJpeg;
  if (name == "png") return OutputFormat::kPng;
  if (name == "raw") return OutputFormat::kRaw;
  return InvalidArgumentError("unknown output format '" + std::string(name) + "' (expected jpeg, png or raw)");
}

}  // namespace libshard::image
