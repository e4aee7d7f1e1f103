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

// cos((2x + 1) u pi / 64) for u < 8, x < 32: the DCT-II basis, scaled by
// 1/sqrt(2) for u = 0 (the orthonormal DCT's ratio between frequency 0 and
// the others; the factor common to all is left out: it moves no comparison).
const std::array<std::array<double, kGrid>, kKeep>& Basis() {
  static const auto basis = [] {
    std::array<std::array<double, kGrid>, kKeep> b{};
    for (int u = 0; u < kKeep; ++u) {
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
  std::array<int, kGrid> lo{}, hi{}, step{};
};

Axis AxisOf(int offset, int size) {
  Axis a;
  for (int i = 0; i < kGrid; ++i) {
    a.lo[i] = offset + static_cast<int>(static_cast<int64_t>(i) * size / kGrid);
    a.hi[i] = std::max(offset + static_cast<int>(static_cast<int64_t>(i + 1) * size / kGrid), a.lo[i] + 1);
    a.step[i] = (a.hi[i] - a.lo[i] + kMaxSamples - 1) / kMaxSamples;
  }
  return a;
}

// Sums of luma * 256 and sample counts per cell.
template <int kChannels, typename T>
void SumCells(const Image& img, const Axis& xa, const Axis& ya, std::array<uint64_t, kGrid * kGrid>* sums,
              std::array<uint64_t, kGrid * kGrid>* counts) {
  for (int cy = 0; cy < kGrid; ++cy) {
    for (int y = ya.lo[cy]; y < ya.hi[cy]; y += ya.step[cy]) {
      const T* row = reinterpret_cast<const T*>(img.row(y));
      for (int cx = 0; cx < kGrid; ++cx) {
        uint64_t s = 0, n = 0;
        for (int x = xa.lo[cx]; x < xa.hi[cx]; x += xa.step[cx], ++n) {
          s += Luma256<kChannels>(row + static_cast<size_t>(x) * kChannels);
        }
        (*sums)[cy * kGrid + cx] += s;
        (*counts)[cy * kGrid + cx] += n;
      }
    }
  }
}

template <typename T>
void SumCellsOf(const Image& img, const Axis& xa, const Axis& ya, std::array<uint64_t, kGrid * kGrid>* sums,
                std::array<uint64_t, kGrid * kGrid>* counts) {
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

// The 32x32 gray grid of cell means (values 0..255 as doubles) of the
// region `r` of `img` (inside it, not empty).
std::array<double, kGrid * kGrid> GrayGrid(const Image& img, const PixelRect& r) {
  const Axis xa = AxisOf(r.x, r.width), ya = AxisOf(r.y, r.height);
  std::array<uint64_t, kGrid * kGrid> sums{}, counts{};
  if (img.bit_depth() == 16) {
    SumCellsOf<uint16_t>(img, xa, ya, &sums, &counts);
  } else {
    SumCellsOf<uint8_t>(img, xa, ya, &sums, &counts);
  }
  std::array<double, kGrid * kGrid> grid{};
  for (int i = 0; i < kGrid * kGrid; ++i) {
    grid[i] = static_cast<double>(sums[i]) / (256.0 * static_cast<double>(counts[i]));
  }
  return grid;
}

// The hash of the region `r` of `img`.
uint64_t HashOfRegion(const Image& img, const PixelRect& r) {
  const std::array<double, kGrid* kGrid> grid = GrayGrid(img, r);
  const auto& basis = Basis();
  // Rows first: for each grid row y, its 8 horizontal frequencies.
  std::array<double, kGrid * kKeep> rows{};
  for (int y = 0; y < kGrid; ++y) {
    for (int u = 0; u < kKeep; ++u) {
      double s = 0;
      for (int x = 0; x < kGrid; ++x) s += grid[y * kGrid + x] * basis[u][x];
      rows[y * kKeep + u] = s;
    }
  }
  std::array<double, kKeep * kKeep> coeff{};
  for (int v = 0; v < kKeep; ++v) {
    for (int u = 0; u < kKeep; ++u) {
      double s = 0;
      for (int y = 0; y < kGrid; ++y) s += rows[y * kKeep + u] * basis[v][y];
      coeff[v * kKeep + u] = s;
    }
  }
  std::array<double, kKeep * kKeep - 1> ac{};
  std::copy(coeff.begin() + 1, coeff.end(), ac.begin());
  std::nth_element(ac.begin(), ac.begin() + ac.size() / 2, ac.end());
  const double median = ac[ac.size() / 2];
  uint64_t hash = 0;
  for (int i = 1; i < kKeep * kKeep; ++i) {
    if (coeff[i] > median) hash |= uint64_t{1} << i;
  }
  return hash;
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

uint64_t CentrePerceptualHash(const Image& img) {
  if (img.empty()) return 0;
  return HashOfRegion(img, CentreRegionOf(img.width(), img.height()));
}

}  // namespace libshard::image
