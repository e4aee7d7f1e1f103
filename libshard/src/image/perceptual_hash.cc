#include "libshard/image/perceptual_hash.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace libshard::image {
namespace {

constexpr int kGrid = 32;        // the gray thumbnail's side
constexpr int kKeep = 8;         // lowest frequencies kept per axis
constexpr int kMaxSamples = 16;  // per cell and axis: larger cells are sampled
constexpr int kDetailKeep = 16;  // HashRegions' detail hash: 16x16 frequencies
constexpr int kPlane = 256;      // HashRegions' gray plane: at most this many cells a side

// cos((2x + 1) u pi / 64) for u < 16, x < 32: the DCT-II basis, scaled by
// 1/sqrt(2) for u = 0 (the orthonormal DCT's ratio between frequency 0 and
// the others; the factor common to all is left out: it moves no comparison).
const std::array<std::array<double, kGrid>, kDetailKeep>& Basis() {
  static const auto basis = [] {
    std::array<std::array<double, kGrid>, kDetailKeep> b{};
    for (int u = 0; u < kDetailKeep; ++u) {
      const double scale = u == 0 ? std::sqrt(0.5) : 1.0;
      for (int x = 0; x < kGrid; ++x) b[u][x] = scale * std::cos((2 * x + 1) * u * M_PI / (2 * kGrid));
    }
    return b;
  }();
  return basis;
}

// Luma * 256 of one pixel (integer, exact).
template <int kChannels, typename T>
inline uint32_t Luma256(const T* p) {
  constexpr int kShift = sizeof(T) == 2 ? 8 : 0;  // 16-bit samples: their high byte
  if constexpr (kChannels >= 3) {
    return 77 * static_cast<uint32_t>(p[0] >> kShift) + 150 * static_cast<uint32_t>(p[1] >> kShift) +
           29 * static_cast<uint32_t>(p[2] >> kShift);
  } else {
    return 256 * static_cast<uint32_t>(p[0] >> kShift);
  }
}

// A grid axis: cell i covers [lo[i], hi[i]) (at least one pixel; cells of an
// axis shorter than the grid share pixels), sampled every step[i]-th pixel
// so that no cell takes more than kMaxSamples per axis.
struct Axis {
  std::vector<int> lo, hi, step;
};

Axis AxisOf(int offset, int size, int cells) {
  Axis a;
  for (int i = 0; i < cells; ++i) {
    a.lo.push_back(offset + static_cast<int>(static_cast<int64_t>(i) * size / cells));
    a.hi.push_back(std::max(offset + static_cast<int>(static_cast<int64_t>(i + 1) * size / cells), a.lo[i] + 1));
    a.step.push_back((a.hi[i] - a.lo[i] + kMaxSamples - 1) / kMaxSamples);
  }
  return a;
}

// Sums of luma * 256 and sample counts per cell (row-major, xa.lo.size()
// cells a row).
template <int kChannels, typename T>
void SumCells(const Image& img, const Axis& xa, const Axis& ya, uint64_t* sums, uint64_t* counts) {
  const size_t nx = xa.lo.size();
  for (size_t cy = 0; cy < ya.lo.size(); ++cy) {
    for (int y = ya.lo[cy]; y < ya.hi[cy]; y += ya.step[cy]) {
      const T* row = reinterpret_cast<const T*>(img.row(y));
      for (size_t cx = 0; cx < nx; ++cx) {
        uint64_t s = 0, n = 0;
        for (int x = xa.lo[cx]; x < xa.hi[cx]; x += xa.step[cx], ++n) {
          s += Luma256<kChannels>(row + static_cast<size_t>(x) * kChannels);
        }
        sums[cy * nx + cx] += s;
        counts[cy * nx + cx] += n;
      }
    }
  }
}

template <typename T>
void SumCellsOf(const Image& img, const Axis& xa, const Axis& ya, uint64_t* sums, uint64_t* counts) {
  switch (img.channels()) {
    case 1:
      return SumCells<1, T>(img, xa, ya, sums, counts);
    case 2:
      return SumCells<2, T>(img, xa, ya, sums, counts);
    case 3:
      return SumCells<3, T>(img, xa, ya, sums, counts);
    default:
      return SumCells<4, T>(img, xa, ya, sums, counts);
  }
}

// The cells_x x cells_y gray means (0..255) of the region `r` of `img`
// (inside it, not empty), row-major, into *means (the buffers are the
// thread's: a plane of 256x256 is past malloc's mmap threshold, and mapping
// it afresh for every image cost more than the hashes).
void GrayMeans(const Image& img, const PixelRect& r, int cells_x, int cells_y, std::vector<double>* means) {
  const Axis xa = AxisOf(r.x, r.width, cells_x), ya = AxisOf(r.y, r.height, cells_y);
  const size_t n = static_cast<size_t>(cells_x) * cells_y;
  thread_local std::vector<uint64_t> sums, counts;
  sums.assign(n, 0);
  counts.assign(n, 0);
  if (img.bit_depth() == 16) {
    SumCellsOf<uint16_t>(img, xa, ya, sums.data(), counts.data());
  } else {
    SumCellsOf<uint8_t>(img, xa, ya, sums.data(), counts.data());
  }
  means->resize(n);
  for (size_t i = 0; i < n; ++i) (*means)[i] = static_cast<double>(sums[i]) / (256.0 * static_cast<double>(counts[i]));
}

// The summed-area table of luma * 256 of every pixel of `img` (the plane is
// the pixels: no cell bookkeeping), (width + 1) x (height + 1).
template <int kChannels, typename T>
void PixelSat(const Image& img, std::vector<double>* sat) {
  const size_t stride = static_cast<size_t>(img.width()) + 1;
  sat->assign(stride * (img.height() + 1), 0.0);
  for (int y = 0; y < img.height(); ++y) {
    const T* p = reinterpret_cast<const T*>(img.row(y));
    const double* above = &(*sat)[y * stride];
    double* out = &(*sat)[(y + 1) * stride];
    uint64_t row = 0;
    for (int x = 0; x < img.width(); ++x, p += kChannels) {
      row += Luma256<kChannels>(p);
      out[x + 1] = above[x + 1] + static_cast<double>(row);
    }
  }
}

template <typename T>
void PixelSatOf(const Image& img, std::vector<double>* sat) {
  switch (img.channels()) {
    case 1:
      return PixelSat<1, T>(img, sat);
    case 2:
      return PixelSat<2, T>(img, sat);
    case 3:
      return PixelSat<3, T>(img, sat);
    default:
      return PixelSat<4, T>(img, sat);
  }
}

// The 32x32 gray grid of cell means (values 0..255 as doubles) of the
// region `r` of `img` (inside it, not empty).
std::array<double, kGrid * kGrid> GrayGrid(const Image& img, const PixelRect& r) {
  std::vector<double> means;
  GrayMeans(img, r, kGrid, kGrid, &means);
  std::array<double, kGrid * kGrid> grid{};
  std::copy(means.begin(), means.end(), grid.begin());
  return grid;
}

// The DCT-II coefficients (u, v < keep) of a 32x32 grid, coeff[v * keep + u].
// Basis() transposed: [x][u], so that the frequencies of one x are adjacent.
const std::array<std::array<double, kDetailKeep>, kGrid>& BasisByX() {
  static const auto t = [] {
    std::array<std::array<double, kDetailKeep>, kGrid> b{};
    for (int u = 0; u < kDetailKeep; ++u) {
      for (int x = 0; x < kGrid; ++x) b[x][u] = Basis()[u][x];
    }
    return b;
  }();
  return t;
}

template <int keep>
std::array<double, keep * keep> LowFrequencies(const std::array<double, kGrid * kGrid>& grid) {
  const auto& basis = Basis();
  const auto& by_x = BasisByX();
  // Rows first: for each grid row y, its `keep` horizontal frequencies. Each
  // sum runs over x (then y) in increasing order, its terms independent of
  // the other frequencies' (keeps the compiler's hands free, not the order).
  std::array<double, kGrid * keep> rows{};
  for (int y = 0; y < kGrid; ++y) {
    double* out = &rows[y * keep];
    for (int x = 0; x < kGrid; ++x) {
      const double g = grid[y * kGrid + x];
      for (int u = 0; u < keep; ++u) out[u] += g * by_x[x][u];
    }
  }
  std::array<double, keep * keep> coeff{};
  for (int v = 0; v < keep; ++v) {
    double* out = &coeff[v * keep];
    for (int y = 0; y < kGrid; ++y) {
      const double b = basis[v][y];
      for (int u = 0; u < keep; ++u) out[u] += rows[y * keep + u] * b;
    }
  }
  return coeff;
}

// The median of the coefficients (u, v < keep) of `coeff` (stride `stride`)
// other than DC.
double AcMedian(const double* coeff, int stride, int keep) {
  std::vector<double> ac;
  for (int v = 0; v < keep; ++v) {
    for (int u = 0; u < keep; ++u) {
      if (u != 0 || v != 0) ac.push_back(coeff[v * stride + u]);
    }
  }
  std::nth_element(ac.begin(), ac.begin() + ac.size() / 2, ac.end());
  return ac[ac.size() / 2];
}

// The hash of the region `r` of `img`.
uint64_t HashOfRegion(const Image& img, const PixelRect& r) {
  const std::array<double, kKeep* kKeep> coeff = LowFrequencies<kKeep>(GrayGrid(img, r));
  const double median = AcMedian(coeff.data(), kKeep, kKeep);
  uint64_t hash = 0;
  for (int i = 1; i < kKeep * kKeep; ++i) {
    if (coeff[i] > median) hash |= uint64_t{1} << i;
  }
  return hash;
}

// The 32x32 grid of the region `b` of a gray plane (pw x ph means, given
// as the summed-area table `sat` of 256 times them, (pw + 1) x (ph + 1)):
// cell means of the
// plane's cells, split as AxisOf splits pixels.
std::array<double, kGrid * kGrid> PlaneGrid(const std::vector<double>& sat, int pw, int ph, const RegionPerMille& b) {
  // Margins rounded down, as CentreRegionOf's.
  const int x0 = pw * b.left / 1000, x1 = pw - pw * (1000 - b.right) / 1000;
  const int y0 = ph * b.top / 1000, y1 = ph - ph * (1000 - b.bottom) / 1000;
  const Axis xa = AxisOf(x0, x1 - x0, kGrid), ya = AxisOf(y0, y1 - y0, kGrid);
  const size_t stride = static_cast<size_t>(pw) + 1;
  std::array<double, kGrid * kGrid> grid{};
  for (int cy = 0; cy < kGrid; ++cy) {
    const double* top = &sat[ya.lo[cy] * stride];
    const double* bottom = &sat[ya.hi[cy] * stride];
    for (int cx = 0; cx < kGrid; ++cx) {
      const double s = bottom[xa.hi[cx]] - bottom[xa.lo[cx]] - top[xa.hi[cx]] + top[xa.lo[cx]];
      grid[cy * kGrid + cx] = s / (256.0 * static_cast<double>((ya.hi[cy] - ya.lo[cy]) * (xa.hi[cx] - xa.lo[cx])));
    }
  }
  return grid;
}

}  // namespace

uint64_t PerceptualHash(const Image& img) {
  if (img.empty()) return 0;
  return HashOfRegion(img, PixelRect{0, 0, img.width(), img.height()});
}

PixelRect CentreRegionOf(int width, int height) {
  const int mx = static_cast<int>(int64_t{width} * kCentreMarginPerMille / 1000);
  const int my = static_cast<int>(int64_t{height} * kCentreMarginPerMille / 1000);
  return PixelRect{mx, my, width - 2 * mx, height - 2 * my};
}

RegionHashes HashRegions(const Image& img) {
  RegionHashes h;
  if (img.empty()) return h;
  const int pw = std::min(img.width(), kPlane), ph = std::min(img.height(), kPlane);
  thread_local std::vector<double> plane, sat;    // summed-area table of luma * 256
  if (pw == img.width() && ph == img.height()) {  // the plane is the pixels
    if (img.bit_depth() == 16) {
      PixelSatOf<uint16_t>(img, &sat);
    } else {
      PixelSatOf<uint8_t>(img, &sat);
    }
  } else {
    GrayMeans(img, PixelRect{0, 0, img.width(), img.height()}, pw, ph, &plane);
    sat.assign(static_cast<size_t>(pw + 1) * (ph + 1), 0.0);
    for (int y = 0; y < ph; ++y) {
      double row = 0;
      for (int x = 0; x < pw; ++x) {
        row += 256.0 * plane[static_cast<size_t>(y) * pw + x];
        sat[(y + 1) * static_cast<size_t>(pw + 1) + x + 1] = sat[y * static_cast<size_t>(pw + 1) + x + 1] + row;
      }
    }
  }
  for (int r = 0; r < kHashRegions; ++r) {
    const std::array<double, kDetailKeep* kDetailKeep> coeff =
        LowFrequencies<kDetailKeep>(PlaneGrid(sat, pw, ph, kHashRegionBounds[r]));
    const double median64 = AcMedian(coeff.data(), kDetailKeep, kKeep);
    for (int v = 0; v < kKeep; ++v) {
      for (int u = 0; u < kKeep; ++u) {
        if ((u != 0 || v != 0) && coeff[v * kDetailKeep + u] > median64) h.phash[r] |= uint64_t{1} << (v * kKeep + u);
      }
    }
    const double median256 = AcMedian(coeff.data(), kDetailKeep, kDetailKeep);
    for (int i = 1; i < kDetailKeep * kDetailKeep; ++i) {
      if (coeff[i] > median256) h.detail[r][i / 64] |= uint64_t{1} << (i % 64);
    }
  }
  return h;
}

uint64_t CentrePerceptualHash(const Image& img) {
  if (img.empty()) return 0;
  return HashOfRegion(img, CentreRegionOf(img.width(), img.height()));
}

}  // namespace libshard::image
