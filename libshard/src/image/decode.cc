// DecodeImage: format dispatch, limits and the pixel policy (decode.h).
#include "libshard/image/decode.h"

#include <string>

#include "image/codec_internal.h"
#include "libshard/image/probe.h"
#include "libshard/image/transform.h"

namespace libshard::image {
namespace {

// CMYK (4 samples as stored) to RGB or gray: R = (255-C)(255-K)/255. Adobe
// files store inverted samples (C' = 255 - C), so there R = C'K'/255.
void CmykToOutput(const Image& cmyk, bool adobe_inverted, bool gray, Image* out) {
  out->Reset(cmyk.width(), cmyk.height(), gray ? 1 : 3, 8);
  const size_t n = static_cast<size_t>(cmyk.width()) * cmyk.height();
  const uint8_t* s = cmyk.data();
  uint8_t* d = out->data();
  for (size_t i = 0; i < n; ++i, s += 4) {
    uint32_t c = s[0], m = s[1], y = s[2], k = s[3];
    if (!adobe_inverted) {
      c = 255 - c;
      m = 255 - m;
      y = 255 - y;
      k = 255 - k;
    }
    const uint32_t r = (c * k + 127) / 255, g = (m * k + 127) / 255, b = (y * k + 127) / 255;
    if (gray) {
      *d++ = static_cast<uint8_t>(internal::Luma8(r, g, b));
    } else {
      d[0] = static_cast<uint8_t>(r);
      d[1] = static_cast<uint8_t>(g);
      d[2] = static_cast<uint8_t>(b);
      d += 3;
    }
  }
}

Status DecodeJpegWithPolicy(std::string_view bytes, const ImageInfo& info, const DecodeOptions& options, Image* out) {
  if (info.bit_depth != 8) {
    return UnimplementedError("JPEG: " + std::to_string(info.bit_depth) + "-bit samples (SOF precision " +
                              std::to_string(info.bit_depth) +
                              ") are not supported; this libjpeg decodes 8-bit JPEG only");
  }
  const bool gray =
      options.channels == ChannelMode::kGray || (options.channels == ChannelMode::kAuto && info.channels == 1);
  internal::JpegReadOptions jo;
  jo.gray = gray;
  jo.scale_denom = options.jpeg_scale_denom;
  jo.strict = options.strict_jpeg;
  if (info.cmyk) {
    thread_local Image cmyk;
    LIBSHARD_RETURN_IF_ERROR(internal::DecodeJpeg(bytes, jo, &cmyk));
    if (cmyk.channels() != 4)
      return InternalError("JPEG: CMYK decode gave " + std::to_string(cmyk.channels()) + " channels");
    CmykToOutput(cmyk, info.adobe, gray, out);
  } else {
    LIBSHARD_RETURN_IF_ERROR(internal::DecodeJpeg(bytes, jo, out));
  }
  if (options.apply_orientation && info.orientation != 1) {
    *out = Orient(*out, info.orientation);
  }
  return Status::OK();
}

Status CheckPixelLimit(const ImageInfo& info, const DecodeOptions& options) {
  const uint64_t pixels = static_cast<uint64_t>(info.width) * static_cast<uint64_t>(info.height);
  if (pixels > options.max_pixels) {
    return ResourceExhaustedError(std::string(ImageFormatName(info.format)) + ": " + std::to_string(info.width) + "x" +
                                  std::to_string(info.height) + " exceeds the pixel limit of " +
                                  std::to_string(options.max_pixels) + " pixels");
  }
  return Status::OK();
}

// PNG bytes (probed, within the limit) to pixels under the policy.
Status DecodePngPixels(PngDecoder decoder, std::string_view bytes, const DecodeOptions& options, Image* out) {
  internal::PngReadOptions po;
  po.keep_16bit = options.keep_16bit;
  po.gray_to_rgb = options.channels == ChannelMode::kRgb;
  po.max_pixels = options.max_pixels;
  po.decoder = decoder;
  LIBSHARD_RETURN_IF_ERROR(internal::DecodePng(bytes, po, out));
  internal::ApplyPixelPolicy(options, out);
  return Status::OK();
}

}  // namespace

Status DecodeImageInto(std::string_view bytes, const DecodeOptions& options, Image* out) {
  const int d = options.jpeg_scale_denom;
  if (d != 1 && d != 2 && d != 4 && d != 8) {
    return InvalidArgumentError("decode: jpeg_scale_denom must be 1, 2, 4 or 8, not " + std::to_string(d));
  }
  if (options.tiff_page < 0) {
    return InvalidArgumentError("decode: tiff_page must be 0 or more, not " + std::to_string(options.tiff_page));
  }
  LIBSHARD_ASSIGN_OR_RETURN(ImageInfo info, ProbeImage(bytes, options.tiff_page));
  LIBSHARD_RETURN_IF_ERROR(CheckPixelLimit(info, options));
  switch (info.format) {
    case ImageFormat::kJpeg:
      return DecodeJpegWithPolicy(bytes, info, options, out);
    case ImageFormat::kPng:
      return DecodePngPixels(PngDecoder::kAuto, bytes, options, out);
    case ImageFormat::kWebp:
      LIBSHARD_RETURN_IF_ERROR(internal::DecodeWebp(bytes, info, out));
      break;
    case ImageFormat::kBmp:
      LIBSHARD_RETURN_IF_ERROR(internal::DecodeBmp(bytes, out));
      break;
    case ImageFormat::kGif:
      LIBSHARD_RETURN_IF_ERROR(internal::DecodeGif(bytes, options.max_pixels, out));
      break;
    case ImageFormat::kTiff:
      LIBSHARD_RETURN_IF_ERROR(
          internal::DecodeTiff(bytes, options.tiff_page, options.keep_16bit, options.max_pixels, out));
      break;
    case ImageFormat::kUnknown:
      return InternalError("decode: probe gave no format");
  }
  internal::ApplyPixelPolicy(options, out);
  return Status::OK();
}

const char* PngDecoderName(PngDecoder decoder) {
  switch (decoder) {
    case PngDecoder::kAuto:
      return "auto";
    case PngDecoder::kLibpng:
      return "libpng";
    case PngDecoder::kLibdeflate:
      return "libdeflate";
  }
  return "?";
}

Status DecodePngWith(PngDecoder decoder, std::string_view bytes, const DecodeOptions& options, Image* out) {
  LIBSHARD_ASSIGN_OR_RETURN(ImageInfo info, ProbeImage(bytes));
  if (info.format != ImageFormat::kPng) {
    return InvalidArgumentError(std::string("decode: the data is ") + ImageFormatName(info.format) + ", not PNG");
  }
  LIBSHARD_RETURN_IF_ERROR(CheckPixelLimit(info, options));
  return DecodePngPixels(decoder, bytes, options, out);
}

StatusOr<ChannelMode> ParseChannelMode(std::string_view name) {
  if (name == "rgb") return ChannelMode::kRgb;
  if (name == "gray") return ChannelMode::kGray;
  if (name == "auto") return ChannelMode::kAuto;
  return InvalidArgumentError("unknown channel mode '" + std::string(name) + "' (expected rgb, gray or auto)");
}

StatusOr<AlphaMode> ParseAlphaMode(std::string_view name) {
  if (name == "composite") return AlphaMode::kComposite;
  if (name == "keep") return AlphaMode::kKeep;
  return InvalidArgumentError("unknown alpha mode '" + std::string(name) + "' (expected composite or keep)");
}

namespace {
Status RegionRead(std::string_view bytes, int scale_denom, bool gray, bool untrimmed, PixelRect* region, Image* out) {
  internal::JpegReadOptions jo;
  jo.gray = gray;
  jo.scale_denom = scale_denom;
  jo.untrimmed = untrimmed;
  return internal::DecodeJpegRegion(bytes, jo, region, out);
}
}  // namespace

Status DecodeJpegRegion(std::string_view bytes, int scale_denom, bool gray, PixelRect* region, Image* out) {
  return RegionRead(bytes, scale_denom, gray, false, region, out);
}

Status DecodeJpegRegionUntrimmed(std::string_view bytes, int scale_denom, bool gray, PixelRect* region, Image* out) {
  return RegionRead(bytes, scale_denom, gray, true, region, out);
}

void ApplyPixelPolicy(const DecodeOptions& options, Image* img) { internal::ApplyPixelPolicy(options, img); }

StatusOr<Image> DecodeImage(std::string_view bytes, const DecodeOptions& options) {
  Image out;
  LIBSHARD_RETURN_IF_ERROR(DecodeImageInto(bytes, options, &out));
  return out;
}

}  // namespace libshard::image
