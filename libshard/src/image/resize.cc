// Separable resampling after Pillow's libImaging/Resample.c (see resize.h):
// the same coefficient computation, fixed-point rounding and pass order, so
// 8-bit RGB output is PIL.Image.resize's byte for byte (alpha images within
// one level: the premultiplication rounds differently). The 8-bit passes have a
// plain reference implementation (here) and an AVX2 one (resize_avx2.cc)
// that computes the same integers; 16-bit images use the reference passes
// with 64-bit sums.
#include "libshard/image/resize.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "image/resize_internal.h"

namespace libshard::image {
namespace {

using internal::Coeffs;
using internal::kPrecisionBits;

struct FilterDef {
  double (*fn)(double);
  double support;
};

double BoxFilter(double x) { return (x > -0.5 && x <= 0.5) ? 1.0 : 0.0; }
double TriangleFilter(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}
double CubicFilter(double x) {
  constexpr double a = -0.5;
  x = std::fabs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}
double Sinc(double x) {
  if (x == 0.0) return 1.0;
  x *= M_PI;
  return std::sin(x) / x;
}
double LanczosFilter(double x) { return (-3.0 <= x && x < 3.0) ? Sinc(x) * Sinc(x / 3) : 0.0; }

FilterDef GetFilter(Filter f) {
  switch (f) {
    case Filter::kBox:
      return {BoxFilter, 0.5};
    case Filter::kBilinear:
      return {TriangleFilter, 1.0};
    case Filter::kBicubic:
      return {CubicFilter, 2.0};
    case Filter::kLanczos3:
      return {LanczosFilter, 3.0};
    case Filter::kNearest:
      break;
  }
  return {BoxFilter, 0.5};
}

// Per output sample: first source index, tap count, and ksize fixed-point
// weights.

Coeffs Precompute(int in_size, double in0, double in1, int out_size, const FilterDef& f) {
  const double scale = (in1 - in0) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = f.support * filterscale;
  Coeffs c;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.first.resize(out_size);
  c.count.resize(out_size);
  c.weights.assign(static_cast<size_t>(out_size) * c.ksize, 0);
  std::vector<double> k(c.ksize);
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = in0 + (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    xmax = std::min(xmax, c.ksize);
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      k[x] = f.fn((x + xmin - center + 0.5) * ss);
      ww += k[x];
    }
    int32_t* w = &c.weights[static_cast<size_t>(xx) * c.ksize];
    for (int x = 0; x < xmax; ++x) {
      const double v = ww != 0.0 ? k[x] / ww : k[x];
      w[x] = static_cast<int32_t>(v < 0 ? -0.5 + v * (1 << kPrecisionBits) : 0.5 + v * (1 << kPrecisionBits));
    }
    c.first[xx] = xmin;
    c.count[xx] = std::max(xmax, 0);
  }
  return c;
}

// The last few coefficient sets this thread computed. A converter resizes
// image after image of the same size, and Lanczos weights cost two sin()
// per tap. Least recently used is replaced, so the set returned by the
// previous call survives this one (Separable holds two at once).
const Coeffs& CachedCoeffs(int in_size, double in0, double in1, int out_size, const FilterDef& f) {
  struct Entry {
    int in_size = -1, out_size = -1;
    double in0 = 0, in1 = 0, support = 0;
    double (*fn)(double) = nullptr;
    uint64_t used = 0;
    Coeffs coeffs;
  };
  thread_local std::array<Entry, 4> cache;
  thread_local uint64_t clock = 0;
  ++clock;
  Entry* victim = &cache[0];
  for (Entry& e : cache) {
    if (e.in_size == in_size && e.out_size == out_size && e.in0 == in0 && e.in1 == in1 && e.fn == f.fn &&
        e.support == f.support) {
      e.used = clock;
      return e.coeffs;
    }
    if (e.used < victim->used) victim = &e;
  }
  *victim = Entry{in_size, out_size, in0, in1, f.support, f.fn, clock, Precompute(in_size, in0, in1, out_size, f)};
  return victim->coeffs;
}

template <typename T>
struct Acc;
template <>
struct Acc<uint8_t> {
  using type = int32_t;
  static uint8_t Clip(int32_t v) {
    v >>= kPrecisionBits;
    return static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
  }
};
template <>
struct Acc<uint16_t> {
  using type = int64_t;
  static uint16_t Clip(int64_t v) {
    v >>= kPrecisionBits;
    return static_cast<uint16_t>(v < 0 ? 0 : v > 65535 ? 65535 : v);
  }
};

// Horizontal pass over source rows [y0, y0 + rows).
template <typename T, int C>
void Horizontal(const T* in, int in_w, int y0, int rows, const Coeffs& cf, int out_w, T* out) {
  using A = typename Acc<T>::type;
  for (int y = 0; y < rows; ++y) {
    const T* src = in + static_cast<size_t>(y0 + y) * in_w * C;
    T* dst = out + static_cast<size_t>(y) * out_w * C;
    for (int x = 0; x < out_w; ++x) {
      const int32_t* k = &cf.weights[static_cast<size_t>(x) * cf.ksize];
      const T* s = src + static_cast<size_t>(cf.first[x]) * C;
      A acc[C];
      for (int c = 0; c < C; ++c) acc[c] = A{1} << (kPrecisionBits - 1);
      for (int i = 0; i < cf.count[x]; ++i) {
        for (int c = 0; c < C; ++c) acc[c] += static_cast<A>(s[i * C + c]) * k[i];
      }
      for (int c = 0; c < C; ++c) dst[x * C + c] = Acc<T>::Clip(acc[c]);
    }
  }
}

// Vertical pass over rows of `stride` samples; cf.first is relative to
// row_offset, the source row `in` starts at.
template <typename T>
void Vertical(const T* in, size_t stride, const Coeffs& cf, int row_offset, int out_h, T* out) {
  using A = typename Acc<T>::type;
  for (int y = 0; y < out_h; ++y) {
    const int32_t* k = &cf.weights[static_cast<size_t>(y) * cf.ksize];
    const T* s = in + static_cast<size_t>(cf.first[y] - row_offset) * stride;
    T* dst = out + static_cast<size_t>(y) * stride;
    for (size_t x = 0; x < stride; ++x) {
      A acc = A{1} << (kPrecisionBits - 1);
      for (int i = 0; i < cf.count[y]; ++i) acc += static_cast<A>(s[i * stride + x]) * k[i];
      dst[x] = Acc<T>::Clip(acc);
    }
  }
}

template <typename T>
void HorizontalAnyC(const T* in, int in_w, int in_h, int channels, int y0, int rows, const Coeffs& cf, int out_w,
                    T* out) {
  switch (channels) {
    case 1:
      return Horizontal<T, 1>(in, in_w, y0, rows, cf, out_w, out);
    case 2:
      return Horizontal<T, 2>(in, in_w, y0, rows, cf, out_w, out);
    case 3:
      return Horizontal<T, 3>(in, in_w, y0, rows, cf, out_w, out);
    default:
      return Horizontal<T, 4>(in, in_w, y0, rows, cf, out_w, out);
  }
}

}  // namespace

namespace internal {

void HorizontalReference8(const uint8_t* in, int in_w, int in_h, int channels, int y0, int rows, const Coeffs& cf,
                          int out_w, uint8_t* out) {
  HorizontalAnyC<uint8_t>(in, in_w, in_h, channels, y0, rows, cf, out_w, out);
}

void VerticalReference8(const uint8_t* in, size_t stride, const Coeffs& cf, int row_offset, int out_h, uint8_t* out) {
  Vertical<uint8_t>(in, stride, cf, row_offset, out_h, out);
}

}  // namespace internal

namespace {

// The coefficients of a pass with its outputs in reverse order: a
// horizontal pass with them writes every row mirrored, and the vertical pass
// works column by column, so the result is the mirror image, byte for byte.
const Coeffs& Reversed(const Coeffs& c) {
  thread_local Coeffs r;
  const size_t n = c.first.size(), k = static_cast<size_t>(c.ksize);
  r.ksize = c.ksize;
  r.first.assign(c.first.rbegin(), c.first.rend());
  r.count.assign(c.count.rbegin(), c.count.rend());
  r.weights.resize(c.weights.size());
  for (size_t x = 0; x < n; ++x) std::copy_n(&c.weights[(n - 1 - x) * k], k, &r.weights[x * k]);
  return r;
}

// Pillow's order: the horizontal pass over only the source rows the vertical
// windows touch (and, through the windows, only the columns the box needs),
// then the vertical pass; the intermediate is rounded to the sample type, as
// in Pillow, so the order is part of the result. `mirror`: the horizontal
// pass writes its rows right to left (it runs even when the width and box
// leave it nothing else to do; its weights are then exactly 1 and 0).
template <typename T, typename H, typename V>
void Separable(const Image& in, const ResampleBox& box, const FilterDef& f, bool mirror, H horizontal, V vertical,
               int out_w, int out_h, uint8_t* out) {
  const int c = in.channels();
  const bool need_h = mirror || out_w != in.width() || box.x0 != 0 || box.x1 != out_w;
  const bool need_v = out_h != in.height() || box.y0 != 0 || box.y1 != out_h;
  const T* src = reinterpret_cast<const T*>(in.data());
  T* dst = reinterpret_cast<T*>(out);
  const size_t out_stride = static_cast<size_t>(out_w) * c;
  auto horizontal_coeffs = [&]() -> const Coeffs& {
    const Coeffs& ch = CachedCoeffs(in.width(), box.x0, box.x1, out_w, f);
    return mirror ? Reversed(ch) : ch;
  };
  if (need_h && need_v) {
    const Coeffs& ch = horizontal_coeffs();
    const Coeffs& cv = CachedCoeffs(in.height(), box.y0, box.y1, out_h, f);
    const int y_first = cv.first[0];
    const int y_last = cv.first[out_h - 1] + cv.count[out_h - 1];
    thread_local std::vector<T> tmp;
    tmp.resize(static_cast<size_t>(y_last - y_first) * out_stride);
    horizontal(src, in.width(), in.height(), c, y_first, y_last - y_first, ch, out_w, tmp.data());
    vertical(tmp.data(), out_stride, cv, y_first, out_h, dst);
  } else if (need_h) {
    horizontal(src, in.width(), in.height(), c, 0, out_h, horizontal_coeffs(), out_w, dst);
  } else if (need_v) {
    const Coeffs& cv = CachedCoeffs(in.height(), box.y0, box.y1, out_h, f);
    vertical(src, out_stride, cv, 0, out_h, dst);
  } else {
    std::copy(in.data(), in.data() + in.byte_size(), out);
  }
}

void Dispatch(ResampleImpl impl, const Image& in, const ResampleBox& box, const FilterDef& f, bool mirror, int out_w,
              int out_h, uint8_t* out) {
  if (in.bit_depth() == 16) {
    Separable<uint16_t>(in, box, f, mirror, HorizontalAnyC<uint16_t>, Vertical<uint16_t>, out_w, out_h, out);
  } else if (impl == ResampleImpl::kAvx2) {
    Separable<uint8_t>(in, box, f, mirror, internal::HorizontalAvx2, internal::VerticalAvx2, out_w, out_h, out);
  } else {
    Separable<uint8_t>(in, box, f, mirror, internal::HorizontalReference8, internal::VerticalReference8, out_w, out_h,
                       out);
  }
}

template <typename T>
void Nearest(const Image& in, const ResampleBox& box, bool mirror, int out_w, int out_h, uint8_t* out) {
  const int c = in.channels();
  const double sx = (box.x1 - box.x0) / out_w;
  const double sy = (box.y1 - box.y0) / out_h;
  std::vector<int> xs(out_w);
  for (int x = 0; x < out_w; ++x) {
    xs[x] = std::clamp(static_cast<int>(std::floor(box.x0 + (x + 0.5) * sx)), 0, in.width() - 1);
  }
  if (mirror) std::reverse(xs.begin(), xs.end());
  for (int y = 0; y < out_h; ++y) {
    const int yy = std::clamp(static_cast<int>(std::floor(box.y0 + (y + 0.5) * sy)), 0, in.height() - 1);
    const T* s = reinterpret_cast<const T*>(in.row(yy));
    T* d = reinterpret_cast<T*>(out) + static_cast<size_t>(y) * out_w * c;
    for (int x = 0; x < out_w; ++x) {
      for (int k = 0; k < c; ++k) d[x * c + k] = s[xs[x] * c + k];
    }
  }
}

// Straight <-> premultiplied alpha, in place, over `pixels` pixels of
// `c` samples.
template <typename T>
void Premultiply(uint8_t* samples, size_t pixels, int c, bool forward) {
  constexpr uint32_t kMax = sizeof(T) == 1 ? 255 : 65535;
  T* p = reinterpret_cast<T*>(samples);
  const size_t n = pixels;
  for (size_t i = 0; i < n; ++i, p += c) {
    const uint32_t a = p[c - 1];
    if (a == kMax) continue;
    for (int k = 0; k < c - 1; ++k) {
      if (forward) {
        p[k] = static_cast<T>((uint64_t{p[k]} * a + kMax / 2) / kMax);
      } else if (a != 0) {
        p[k] = static_cast<T>(std::min<uint64_t>(kMax, (uint64_t{p[k]} * kMax + a / 2) / a));
      }
    }
  }
}

}  // namespace

const char* FilterName(Filter filter) {
  switch (filter) {
    case Filter::kNearest:
      return "nearest";
    case Filter::kBox:
      return "area";
    case Filter::kBilinear:
      return "bilinear";
    case Filter::kBicubic:
      return "bicubic";
    case Filter::kLanczos3:
      return "lanczos3";
  }
  return "?";
}

StatusOr<Filter> ParseFilter(std::string_view name) {
  if (name == "nearest") return Filter::kNearest;
  if (name == "area" || name == "box") return Filter::kBox;
  if (name == "bilinear") return Filter::kBilinear;
  if (name == "bicubic") return Filter::kBicubic;
  if (name == "lanczos3" || name == "lanczos") return Filter::kLanczos3;
  return InvalidArgumentError("unknown resize filter '" + std::string(name) +
                              "' (expected nearest, area, bilinear, bicubic or lanczos3)");
}

const char* ResampleImplName(ResampleImpl impl) {
  switch (impl) {
    case ResampleImpl::kReference:
      return "reference";
    case ResampleImpl::kAvx2:
      return "avx2";
  }
  return "?";
}

bool ResampleImplAvailable(ResampleImpl impl) {
  switch (impl) {
    case ResampleImpl::kReference:
      return true;
    case ResampleImpl::kAvx2:
      return internal::CpuHasAvx2();
  }
  return false;
}

ResampleImpl ActiveResampleImpl() {
  static const ResampleImpl active =
      ResampleImplAvailable(ResampleImpl::kAvx2) ? ResampleImpl::kAvx2 : ResampleImpl::kReference;
  return active;
}

namespace {

Status CheckResample(ResampleImpl impl, const Image& in, const ResampleBox& box, int out_width, int out_height) {
  if (!ResampleImplAvailable(impl)) {
    return FailedPreconditionError(std::string("resize: implementation ") + ResampleImplName(impl) +
                                   " is not available on this CPU");
  }
  if (out_width <= 0 || out_height <= 0) {
    return InvalidArgumentError("resize: target size " + std::to_string(out_width) + "x" + std::to_string(out_height) +
                                " is not positive");
  }
  if (in.empty() || in.channels() < 1 || in.channels() > 4) {
    return InvalidArgumentError("resize: empty input image");
  }
  if (!(box.x0 >= 0 && box.y0 >= 0 && box.x1 <= in.width() && box.y1 <= in.height() && box.x1 > box.x0 &&
        box.y1 > box.y0)) {
    return InvalidArgumentError("resize: box (" + std::to_string(box.x0) + ", " + std::to_string(box.y0) + ", " +
                                std::to_string(box.x1) + ", " + std::to_string(box.y1) + ") is empty or outside the " +
                                std::to_string(in.width()) + "x" + std::to_string(in.height()) + " image");
  }
  return Status::OK();
}

// The checked resample into `out` (out_width x out_height x in.channels()
// samples of in's depth).
void ResampleChecked(ResampleImpl impl, const Image& in, const ResampleBox& box, int out_width, int out_height,
                     Filter filter, bool mirror, uint8_t* out) {
  const bool sixteen = in.bit_depth() == 16;
  if (filter == Filter::kNearest) {
    if (sixteen) {
      Nearest<uint16_t>(in, box, mirror, out_width, out_height, out);
    } else {
      Nearest<uint8_t>(in, box, mirror, out_width, out_height, out);
    }
    return;
  }
  const FilterDef f = GetFilter(filter);
  if (!in.has_alpha()) {
    Dispatch(impl, in, box, f, mirror, out_width, out_height, out);
    return;
  }
  const size_t in_px = static_cast<size_t>(in.width()) * in.height();
  const size_t out_px = static_cast<size_t>(out_width) * out_height;
  Image pre = in;
  if (sixteen) {
    Premultiply<uint16_t>(pre.data(), in_px, in.channels(), true);
    Dispatch(impl, pre, box, f, mirror, out_width, out_height, out);
    Premultiply<uint16_t>(out, out_px, in.channels(), false);
  } else {
    Premultiply<uint8_t>(pre.data(), in_px, in.channels(), true);
    Dispatch(impl, pre, box, f, mirror, out_width, out_height, out);
    Premultiply<uint8_t>(out, out_px, in.channels(), false);
  }
}

}  // namespace

StatusOr<Image> ResampleWith(ResampleImpl impl, const Image& in, const ResampleBox& box, int out_width, int out_height,
                             Filter filter, bool mirror) {
  LIBSHARD_RETURN_IF_ERROR(CheckResample(impl, in, box, out_width, out_height));
  Image out(out_width, out_height, in.channels(), in.bit_depth());
  ResampleChecked(impl, in, box, out_width, out_height, filter, mirror, out.data());
  return out;
}

Status ResampleInto(const Image& in, const ResampleBox& box, int out_width, int out_height, Filter filter, uint8_t* out,
                    bool mirror) {
  const ResampleImpl impl = ActiveResampleImpl();
  LIBSHARD_RETURN_IF_ERROR(CheckResample(impl, in, box, out_width, out_height));
  ResampleChecked(impl, in, box, out_width, out_height, filter, mirror, out);
  return Status::OK();
}

StatusOr<Image> Resample(const Image& in, const ResampleBox& box, int out_width, int out_height, Filter filter) {
  return ResampleWith(ActiveResampleImpl(), in, box, out_width, out_height, filter);
}

StatusOr<Image> Resize(const Image& in, int out_width, int out_height, Filter filter) {
  return Resample(in, ResampleBox{0, 0, static_cast<double>(in.width()), static_cast<double>(in.height())}, out_width,
                  out_height, filter);
}

}  // namespace libshard::image
