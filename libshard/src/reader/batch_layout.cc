#include "libshard/reader/batch_layout.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

namespace libshard::reader {
namespace {

// GCC: an AVX2 clone picked at load time, vectorised at -O3 (the stride-3
// loads need AVX2's permutes to vectorise; the default -O2 does not try).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define LIBSHARD_VECTORISE __attribute__((target_clones("avx2", "default"), optimize("O3")))
#else
#define LIBSHARD_VECTORISE
#endif

// float32 NCHW with 3 channels, the common case: one pass, three planes,
// x * scale[c] + bias[c].
LIBSHARD_VECTORISE void Float32Planar3(const uint8_t* __restrict src, float* __restrict dst, size_t pixels,
                                       const float* scale, const float* bias) {
  const float s0 = scale[0], s1 = scale[1], s2 = scale[2], b0 = bias[0], b1 = bias[1], b2 = bias[2];
  float* __restrict o0 = dst;
  float* __restrict o1 = dst + pixels;
  float* __restrict o2 = dst + 2 * pixels;
  for (size_t p = 0; p < pixels; ++p) {
    o0[p] = static_cast<float>(src[3 * p]) * s0 + b0;
    o1[p] = static_cast<float>(src[3 * p + 1]) * s1 + b1;
    o2[p] = static_cast<float>(src[3 * p + 2]) * s2 + b2;
  }
}

// dst[c * pixels + p] (NCHW) or dst[p * C + c] (NHWC) = map(c, src[p * C + c]).
template <typename Out, typename Map>
void Apply(const uint8_t* src, Out* dst, size_t pixels, int channels, Layout layout, Map map) {
  const size_t C = static_cast<size_t>(channels);
  if (layout == Layout::kNCHW && C == 3) {
    // One pass over the pixels, three output planes.
    Out* o0 = dst;
    Out* o1 = dst + pixels;
    Out* o2 = dst + 2 * pixels;
    for (size_t p = 0; p < pixels; ++p) {
      o0[p] = map(0, src[3 * p]);
      o1[p] = map(1, src[3 * p + 1]);
      o2[p] = map(2, src[3 * p + 2]);
    }
  } else if (layout == Layout::kNCHW) {
    for (size_t c = 0; c < C; ++c) {
      const uint8_t* in = src + c;
      Out* out = dst + c * pixels;
      for (size_t p = 0; p < pixels; ++p) out[p] = map(c, in[p * C]);
    }
  } else {
    for (size_t p = 0; p < pixels; ++p) {
      for (size_t c = 0; c < C; ++c) dst[p * C + c] = map(c, src[p * C + c]);
    }
  }
}

}  // namespace

const char* LayoutName(Layout layout) { return layout == Layout::kNCHW ? "NCHW" : "NHWC"; }

StatusOr<Layout> ParseLayout(std::string_view name) {
  if (name == "NHWC") return Layout::kNHWC;
  if (name == "NCHW") return Layout::kNCHW;
  return InvalidArgumentError("layout: unknown layout \"" + std::string(name) + "\" (expected NHWC or NCHW)");
}

const char* PixelTypeName(PixelType type) {
  switch (type) {
    case PixelType::kFloat32:
      return "float32";
    case PixelType::kFloat16:
      return "float16";
    default:
      return "uint8";
  }
}

StatusOr<PixelType> ParsePixelType(std::string_view name) {
  if (name == "uint8") return PixelType::kUint8;
  if (name == "float32") return PixelType::kFloat32;
  if (name == "float16") return PixelType::kFloat16;
  return InvalidArgumentError("dtype: unknown dtype \"" + std::string(name) +
                              "\" (expected uint8, float32 or float16)");
}

size_t PixelTypeSize(PixelType type) {
  switch (type) {
    case PixelType::kFloat32:
      return 4;
    case PixelType::kFloat16:
      return 2;
    default:
      return 1;
  }
}

uint16_t DoubleToHalf(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (std::isnan(v)) return sign | 0x7E00;
  if (a >= 65520.0) return sign | 0x7C00;  // rounds past the largest half (65504)
  if (a < std::ldexp(1.0, -14)) {
    // Subnormal (or zero): units of 2^-24, rounded to nearest even.
    return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(a, 24)));
  }
  int e = 0;
  const double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  // 11 significant bits: mantissa in [1024, 2048); may round up to 2048.
  const uint32_t q = static_cast<uint32_t>(std::nearbyint(std::ldexp(m, 11)));
  // bits = ((e - 1 + 15) << 10) + (q - 1024); q == 2048 carries into the exponent.
  return sign | static_cast<uint16_t>((static_cast<uint32_t>(e + 14) << 10) + q - 1024);
}

StatusOr<SampleConverter> SampleConverter::Create(Layout layout, PixelType dtype, const std::vector<double>& mean,
                                                  const std::vector<double>& std, int height, int width, int channels) {
  if (channels < 1 || height < 1 || width < 1) return InvalidArgumentError("SampleConverter: empty sample shape");
  const bool is_float = dtype != PixelType::kUint8;
  if (!is_float && (!mean.empty() || !std.empty())) {
    return InvalidArgumentError("mean/std: normalisation needs dtype float32 or float16, not uint8");
  }
  const char* names[2] = {"mean", "std"};
  const std::vector<double>* lists[2] = {&mean, &std};
  for (int k = 0; k < 2; ++k) {
    const std::vector<double>& l = *lists[k];
    if (!l.empty() && l.size() != static_cast<size_t>(channels)) {
      return InvalidArgumentError(std::string(names[k]) + ": " + std::to_string(l.size()) + " values for " +
                                  std::to_string(channels) + " channel(s)");
    }
    for (double v : l) {
      if (!std::isfinite(v) || (k == 1 && v == 0)) {
        return InvalidArgumentError(std::string(names[k]) + ": " + std::to_string(v) +
                                    (k == 1 ? " (values must be finite and non-zero)" : " (values must be finite)"));
      }
    }
  }
  // (x / 255 - mean) / std is linear in x: its extremes are at x = 0 and 255.
  // Each must be finite in the dtype, as computed (float32: x * scale + bias
  // in float; float16: rounded from double, 65520 and beyond round to inf).
  if (is_float) {
    const double largest = dtype == PixelType::kFloat16 ? 65504.0 : static_cast<double>(FLT_MAX);
    for (int c = 0; c < channels; ++c) {
      const double m = mean.empty() ? 0.0 : mean[c];
      const double sd = std.empty() ? 1.0 : std[c];
      const float scale = static_cast<float>(1.0 / (255.0 * sd));
      const float bias = static_cast<float>(-m / sd);
      for (int x : {255, 0}) {
        const double v = (x / 255.0 - m) / sd;
        const bool finite = dtype == PixelType::kFloat16 ? std::isfinite(v) && std::fabs(v) < 65520.0
                                                         : std::isfinite(v) && std::fabs(v) <= largest &&
                                                               std::isfinite(static_cast<float>(x) * scale + bias);
        if (!finite) {
          char buf[256];
          std::snprintf(buf, sizeof buf,
                        "mean/std: channel %d (mean %g, std %g) gives %g for pixel value %d, beyond %s's range "
                        "(largest %g): (x / 255 - mean) / std must be finite in the chosen dtype",
                        c, m, sd, v, x, PixelTypeName(dtype), largest);
          return InvalidArgumentError(buf);
        }
      }
    }
  }
  // Values on the 0..255 scale (manifest.json's statistics, OpenCV's habit)
  // would give garbage without a word: pixels are x / 255 here.
  for (int k = 0; k < 2; ++k) {
    for (double v : *lists[k]) {
      if (std::fabs(v) > 1.0) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "%s: %g looks like the 0..255 scale; give values on the 0..1 scale (divide by 255), as "
                      "torchvision's Normalize takes them, or \"dataset\" for the manifest's own statistics",
                      names[k], v);
        return InvalidArgumentError(buf);
      }
    }
  }
  SampleConverter s;
  s.layout_ = layout;
  s.dtype_ = dtype;
  s.pixels_ = static_cast<size_t>(height) * static_cast<size_t>(width);
  s.channels_ = channels;
  if (is_float) {
    const size_t n = static_cast<size_t>(channels) * 256;
    s.scale_.resize(channels);
    s.bias_.resize(channels);
    if (dtype == PixelType::kFloat16) s.lut16_.resize(n);
    for (int c = 0; c < channels; ++c) {
      const double m = mean.empty() ? 0.0 : mean[c];
      const double sd = std.empty() ? 1.0 : std[c];
      s.scale_[c] = static_cast<float>(1.0 / (255.0 * sd));
      s.bias_[c] = static_cast<float>(-m / sd);
      for (int x = 0; x < 256; ++x) {
        const double v = (x / 255.0 - m) / sd;
        if (dtype == PixelType::kFloat16) s.lut16_[c * 256 + x] = DoubleToHalf(v);
      }
    }
  }
  return s;
}

void SampleConverter::Convert(const uint8_t* hwc, void* dst) const {
  switch (dtype_) {
    case PixelType::kFloat32: {
      // x * scale + bias in float (vectorised), within 1 ulp of the double formula.
      if (layout_ == Layout::kNCHW && channels_ == 3) {
        Float32Planar3(hwc, static_cast<float*>(dst), pixels_, scale_.data(), bias_.data());
        break;
      }
      const float* sc = scale_.data();
      const float* bi = bias_.data();
      Apply(hwc, static_cast<float*>(dst), pixels_, channels_, layout_,
            [sc, bi](size_t c, uint8_t x) { return static_cast<float>(x) * sc[c] + bi[c]; });
      break;
    }
    case PixelType::kFloat16: {
      const uint16_t* t = lut16_.data();
      Apply(hwc, static_cast<uint16_t*>(dst), pixels_, channels_, layout_,
            [t](size_t c, uint8_t x) { return t[c * 256 + x]; });
      break;
    }
    case PixelType::kUint8:
      if (layout_ == Layout::kNHWC) {
        std::memcpy(dst, hwc, sample_bytes());
      } else {
        Apply(hwc, static_cast<uint8_t*>(dst), pixels_, channels_, layout_, [](size_t, uint8_t x) { return x; });
      }
      break;
  }
}

}  // namespace libshard::reader
