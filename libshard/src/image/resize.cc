// Separable resampling after Pillow's libImaging/Resample.c (see resize.h):
// the same coefficient computation and fixed-point rounding, so 8-bit output
// matches PIL.Image.resize to within one level.
#include "libshard/image/resize.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace libshard::image {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;

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
    case Filter::kBox: return {BoxFilter, 0.5};
    case Filter::kBilinear: return {TriangleFilter, 1.0};
    case Filter::kBicubic: return {CubicFilter, 2.0};
    case Filter::kLanczos3: return {LanczosFilter, 3.0};
    case Filter::kNearest: break;
  }
  return {BoxFilter, 0.5};
}

// Per output sample: first source index, tap count, and ksize fixed-point
// weights.
struct Coeffs {
  int ksize = 0;
  std::vector<int> first;
  std::vector<int> count;
  std::vector<int32_t> weights;
};

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
      w[x] = static_cast<int32_t>(v < 0 ? -0.5 + v * (1 << kPrecisionBits)
                                        : 0.5 + v * (1 << kPrecisionBits));
    }
    c.first[xx] = xmin;
    c.count[xx] = std::max(xmax, 0);
  }
  return c;
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

// Vertical pass; cf.first is relative to the first row of `in`.
template <typename T, int C>
void Vertical(const T* in, int w, const Coeffs& cf, int row_offset, int out_h, T* out) {
  using A = typename Acc<T>::type;
  const size_t stride = static_cast<size_t>(w) * C;
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

template <typename T, int C>
void Separable(const Image& in, const ResampleBox& box, const FilterDef& f, Image* out) {
  const int out_w = out->width(), out_h = out->height();
  const bool need_h = out_w != in.width() || box.x0 != 0 || box.x1 != out_w;
  const bool need_v = out_h != in.height() || box.y0 != 0 || box.y1 != out_h;
  const Coeffs ch = Precompute(in.width(), box.x0, box.x1, out_w, f);
  const Coeffs cv = Precompute(in.height(), box.y0, box.y1, out_h, f);
  const T* src = reinterpret_cast<const T*>(in.data());
  T* dst = reinterpret_cast<T*>(out->data());
  if (need_h && need_v) {
    const int y_first = cv.first[0];
    const int y_last = cv.first[out_h - 1] + cv.count[out_h - 1];
    thread_local std::vector<T> tmp;
    tmp.resize(static_cast<size_t>(y_last - y_first) * out_w * C);
    Horizontal<T, C>(src, in.width(), y_first, y_last - y_first, ch, out_w, tmp.data());
    Vertical<T, C>(tmp.data(), out_w, cv, y_first, out_h, dst);
  } else if (need_h) {
    Horizontal<T, C>(src, in.width(), 0, out_h, ch, out_w, dst);
  } else if (need_v) {
    Vertical<T, C>(src, out_w, cv, 0, out_h, dst);
  } else {
    std::copy(in.data(), in.data() + in.byte_size(), out->data());
  }
}

template <typename T>
void Dispatch(const Image& in, const ResampleBox& box, const FilterDef& f, Image* out) {
  switch (in.channels()) {
    case 1: return Separable<T, 1>(in, box, f, out);
    case 2: return Separable<T, 2>(in, box, f, out);
    case 3: return Separable<T, 3>(in, box, f, out);
    default: return Separable<T, 4>(in, box, f, out);
  }
}

template <typename T>
void Nearest(const Image& in, const ResampleBox& box, Image* out) {
  const int c = in.channels();
  const double sx = (box.x1 - box.x0) / out->width();
  const double sy = (box.y1 - box.y0) / out->height();
  std::vector<int> xs(out->width());
  for (int x = 0; x < out->width(); ++x) {
    xs[x] = std::clamp(static_cast<int>(std::floor(box.x0 + (x + 0.5) * sx)), 0, in.width() - 1);
  }
  for (int y = 0; y < out->height(); ++y) {
    const int yy =
        std::clamp(static_cast<int>(std::floor(box.y0 + (y + 0.5) * sy)), 0, in.height() - 1);
    const T* s = reinterpret_cast<const T*>(in.row(yy));
    T* d = reinterpret_cast<T*>(out->row(y));
    for (int x = 0; x < out->width(); ++x) {
      for (int k = 0; k < c; ++k) d[x * c + k] = s[xs[x] * c + k];
    }
  }
}

// Straight <-> premultiplied alpha, in place.
template <typename T>
void Premultiply(Image* img, bool forward) {
  constexpr uint32_t kMax = sizeof(T) == 1 ? 255 : 65535;
  const int c = img->channels();
  T* p = reinterpret_cast<T*>(img->data());
  const size_t n = static_cast<size_t>(img->width()) * img->height();
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
    case Filter::kNearest: return "nearest";
    case Filter::kBox: return "area";
    case Filter::kBilinear: return "bilinear";
    case Filter::kBicubic: return "bicubic";
    case Filter::kLanczos3: return "lanczos3";
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

StatusOr<Image> Resample(const Image& in, const ResampleBox& box, int out_width, int out_height,
                         Filter filter) {
  if (out_width <= 0 || out_height <= 0) {
    return InvalidArgumentError("resize: target size " + std::to_string(out_width) + "x" +
                                std::to_string(out_height) + " is not positive");
  }
  if (in.empty() || in.channels() < 1 || in.channels() > 4) {
    return InvalidArgumentError("resize: empty input image");
  }
  if (!(box.x0 >= 0 && box.y0 >= 0 && box.x1 <= in.width() && box.y1 <= in.height() &&
        box.x1 > box.x0 && box.y1 > box.y0)) {
    return InvalidArgumentError("resize: box (" + std::to_string(box.x0) + ", " +
                                std::to_string(box.y0) + ", " + std::to_string(box.x1) + ", " +
                                std::to_string(box.y1) + ") is empty or outside the " +
                                std::to_string(in.width()) + "x" + std::to_string(in.height()) +
                                " image");
  }
  Image out(out_width, out_height, in.channels(), in.bit_depth());
  const bool sixteen = in.bit_depth() == 16;
  if (filter == Filter::kNearest) {
    if (sixteen) {
      Nearest<uint16_t>(in, box, &out);
    } else {
      Nearest<uint8_t>(in, box, &out);
    }
    return out;
  }
  const FilterDef f = GetFilter(filter);
  if (in.has_alpha()) {
    Image pre = in;
    if (sixteen) {
      Premultiply<uint16_t>(&pre, true);
      Dispatch<uint16_t>(pre, box, f, &out);
      Premultiply<uint16_t>(&out, false);
    } else {
      Premultiply<uint8_t>(&pre, true);
      Dispatch<uint8_t>(pre, box, f, &out);
      Premultiply<uint8_t>(&out, false);
    }
  } else if (sixteen) {
    Dispatch<uint16_t>(in, box, f, &out);
  } else {
    Dispatch<uint8_t>(in, box, f, &out);
  }
  return out;
}

StatusOr<Image> Resize(const Image& in, int out_width, int out_height, Filter filter) {
  return Resample(in, ResampleBox{0, 0, static_cast<double>(in.width()),
                                  static_cast<double>(in.height())},
                  out_width, out_height, filter);
}

}  // namespace libshard::image
