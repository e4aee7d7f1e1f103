// WebP still images to 8-bit RGB or RGBA with libwebp (codec_internal.h).
#include <webp/decode.h>

#include <string>

#include "image/codec_internal.h"

namespace libshard::image::internal {
namespace {

std::string WebpStatusText(VP8StatusCode code) {
  switch (code) {
    case VP8_STATUS_OUT_OF_MEMORY:
      return "out of memory";
    case VP8_STATUS_INVALID_PARAM:
      return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR:
      return "corrupt bitstream";
    case VP8_STATUS_UNSUPPORTED_FEATURE:
      return "unsupported feature";
    case VP8_STATUS_SUSPENDED:
      return "suspended";
    case VP8_STATUS_USER_ABORT:
      return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA:
      return "truncated data";
    default:
      return "status " + std::to_string(code);
  }
}

}  // namespace

Status DecodeWebp(std::string_view bytes, const ImageInfo& info, Image* out) {
  if (info.animated) {
    return UnimplementedError("WebP: animated WebP is not supported; only still WebP images are read");
  }
  const int channels = info.has_alpha ? 4 : 3;
  out->Reset(info.width, info.height, channels, 8);
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) return InternalError("WebP: libwebp version mismatch");
  config.output.colorspace = info.has_alpha ? MODE_RGBA : MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = out->data();
  config.output.u.RGBA.stride = static_cast<int>(out->row_bytes());
  config.output.u.RGBA.size = out->row_bytes() * static_cast<size_t>(info.height);
  const VP8StatusCode code = WebPDecode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &config);
  WebPFreeDecBuffer(&config.output);  // frees nothing held externally
  if (code == VP8_STATUS_OUT_OF_MEMORY) return ResourceExhaustedError("WebP: out of memory");
  if (code != VP8_STATUS_OK) {
    return DataLossError("WebP: " + WebpStatusText(code) + " (" + std::to_string(bytes.size()) + " bytes)");
  }
  return Status::OK();
}

}  // namespace libshard::image::internal
