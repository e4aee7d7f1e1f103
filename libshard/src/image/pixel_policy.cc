// The channel / alpha half of the decode pixel policy (decode.h).
#include <cstdint>

#include "image/codec_internal.h"

namespace libshard::image::internal {
namespace {

template <typename T>
void Convert(const Image& in, const DecodeOptions& opt, int out_channels, bool composite, Image* out) {
  constexpr uint32_t kMax = sizeof(T) == 1 ? 255 : 65535;
  const int in_c = in.channels();
  const bool in_alpha = in.has_alpha();
  const bool in_color = in_c >= 3;
  const bool out_color = out_channels >= 3;
  const bool out_alpha = out_channels == 2 || out_channels == 4;
  // Background scaled to the sample range (x257 maps 255 to 65535).
  const uint32_t scale = kMax / 255;
  const uint32_t bg[3] = {opt.background[0] * scale, opt.background[1] * scale, opt.background[2] * scale};
  const uint32_t bg_gray = Luma8(opt.background[0], opt.background[1], opt.background[2]) * scale;
  const size_t n = static_cast<size_t>(in.width()) * in.height();
  const T* src = reinterpret_cast<const T*>(in.data());
  T* dst = reinterpret_cast<T*>(out->data());
  for (size_t i = 0; i < n; ++i, src += in_c, dst += out_channels) {
    uint32_t c[3];
    if (in_color) {
      c[0] = src[0];
      c[1] = src[1];
      c[2] = src[2];
    } else {
      c[0] = c[1] = c[2] = src[0];
    }
    const uint32_t a = in_alpha ? src[in_c - 1] : kMax;
    if (composite && in_alpha) {
      for (int k = 0; k < 3; ++k) {
        const uint32_t b = in_color || out_color ? bg[k] : bg_gray;
        c[k] = static_cast<uint32_t>((uint64_t{c[k]} * a + uint64_t{b} * (kMax - a) + kMax / 2) / kMax);
      }
    }
    if (out_color) {
      dst[0] = static_cast<T>(c[0]);
      dst[1] = static_cast<T>(c[1]);
      dst[2] = static_cast<T>(c[2]);
    } else if (in_color) {
      dst[0] = static_cast<T>((uint64_t{c[0]} * 19595 + uint64_t{c[1]} * 38470 + uint64_t{c[2]} * 7471 + 0x8000) >> 16);
    } else {
      dst[0] = static_cast<T>(c[0]);
    }
    if (out_alpha) dst[out_channels - 1] = static_cast<T>(a);
  }
}

}  // namespace

void ApplyPixelPolicy(const DecodeOptions& opt, Image* img) {
  const int in_c = img->channels();
  const bool in_color = in_c >= 3;
  bool out_color = in_color;
  if (opt.channels == ChannelMode::kRgb) out_color = true;
  if (opt.channels == ChannelMode::kGray) out_color = false;
  const bool keep_alpha = img->has_alpha() && opt.alpha == AlphaMode::kKeep;
  const int out_c = (out_color ? 3 : 1) + (keep_alpha ? 1 : 0);
  const bool composite = img->has_alpha() && !keep_alpha;
  if (out_c == in_c && !composite) return;
  Image out(img->width(), img->height(), out_c, img->bit_depth());
  if (img->bit_depth() == 16) {
    Convert<uint16_t>(*img, opt, out_c, composite, &out);
  } else {
    Convert<uint8_t>(*img, opt, out_c, composite, &out);
  }
  *img = std::move(out);
}

}  // namespace libshard::image::internal
