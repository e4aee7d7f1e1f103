#include "libshard/image/perceptual_hash.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace libshard::image {
namespace {

constexpr int kGrid = 32;        // a region's gray grid, cells a side
constexpr int kKeep = 8;         // lowest frequencies of the 64-bit hash, per axis
constexpr int kDetailKeep = 16;  // lowest frequencies of the 256-bit detail hash, per axis
constexpr int kPlane = kGrayPlaneCells;
constexpr int kMaxSamples = kGrayPlaneSamples;

// cos((2x + 1) u pi / 64) for u < 16, x < 16: the DCT-II basis, scaled by
// 1/sqrt(2) for u = 0 (the orthonormal DCT's ratio between frequency 0 and
// the others; the factor common to all is left out: it moves no comparison).
// It is even about the middle of the grid for even u and odd for odd u
// (B[31 - x][u] = +-B[x][u]), so only x < 16 is kept: even[x][k] is
// frequency u = 2k, odd[x][k] u = 2k + 1.
struct Basis {
  std::array<std::array<double, kDetailKeep / 2>, kGrid / 2> even{}, odd{};
};
const Basis& BasisTable() {
  static const Basis basis = [] {
    Basis b;
    for (int u = 0; u < kDetailKeep; ++u) {
      const double scale = u == 0 ? std::sqrt(0.5) : 1.0;
      for (int x = 0; x < kGrid / 2; ++x) {
        (u % 2 == 0 ? b.even : b.odd)[x][u / 2] = scale * std::cos((2 * x + 1) * u * M_PI / (2 * kGrid));
      }
    }
    return b;
  }();
  return basis;
}

// The coefficients come out with the even frequencies of each axis first:
// slot j < 8 is frequency 2j, slot j >= 8 frequency 2 (j - 8) + 1.
constexpr int FrequencyOfSlot(int j) { return j < kDetailKeep / 2 ? 2 * j : 2 * (j - kDetailKeep / 2) + 1; }

// One axis of the plane: blocks of k pixels (k = ceil(size / kPlane)),
// block i covering pixels [i k, min((i + 1) k, size)) (the last may be
// shorter), of which every step-th is read, step = ceil(k / kMaxSamples).
struct Axis {
  int size = 0, k = 1, n = 0, step = 1;
  int lo(int i) const { return i * k; }
  int hi(int i) const { return std::min((i + 1) * k, size); }
  int samples(int i) const { return (hi(i) - lo(i) + step - 1) / step; }
  // Block and fraction of pixel coordinate p (0..size).
  void Locate(double p, int* block, double* frac) const {
    *block = std::min(static_cast<int>(p / k), n - 1);
    *frac = (p - lo(*block)) / (hi(*block) - lo(*block));
  }
};
Axis AxisOf(int size) {
  Axis a;
  a.size = size;
  a.k = (size + kPlane - 1) / kPlane;
  a.n = (size + a.k - 1) / a.k;
  a.step = (a.k + kMaxSamples - 1) / kMaxSamples;
  return a;
}

// The plane as a summed-area table of its blocks: sat[y * (x_axis.n + 1) +
// x] is the luma * 256 summed over the pixels of blocks of rows < y and
// columns < x, each block's pixels counted at the mean of those read (the
// exact sum where every pixel is read, blocks of up to 4 pixels a side).
struct Plane {
  Axis x, y;
  std::array<double, (kPlane + 1) * (kPlane + 1)> sat{};
  size_t stride() const { return static_cast<size_t>(x.n) + 1; }
};

// Sums rows [lo, hi) (every step-th) of `img`, sample by sample (channels
// interleaved; 16-bit samples by their high byte), into acc.
template <typename T>
__attribute__((always_inline)) inline void SumRows(const Image& img, int lo, int hi, int step, size_t samples_per_row,
                                                   uint16_t* __restrict acc) {
  std::fill(acc, acc + samples_per_row, 0);
  constexpr int kShift = sizeof(T) == 2 ? 8 : 0;
  for (int y = lo; y < hi; y += step) {
    const T* __restrict p = reinterpret_cast<const T*>(img.row(y));
    for (size_t i = 0; i < samples_per_row; ++i) acc[i] = static_cast<uint16_t>(acc[i] + (p[i] >> kShift));
  }
}

// Luma * 256 of each pixel of a row of channel sums (alpha ignored).
template <int kChannels>
__attribute__((always_inline)) inline void LumaRow(const uint16_t* __restrict sums, int width,
                                                   uint32_t* __restrict luma) {
  for (int x = 0; x < width; ++x) {
    const uint16_t* p = sums + static_cast<size_t>(x) * kChannels;
    if constexpr (kChannels >= 3) {
      luma[x] = 77u * p[0] + 150u * p[1] + 29u * p[2];
    } else {
      luma[x] = 256u * p[0];
    }
  }
}

// The sums of the first `full` blocks of k pixels of `luma` (k a constant:
// the loop vectorizes).
template <int k>
__attribute__((always_inline)) inline void BlockSums(const uint32_t* __restrict luma, int full,
                                                     uint32_t* __restrict sums) {
  for (int i = 0; i < full; ++i) {
    uint32_t s = 0;
    for (int t = 0; t < k; ++t) s += luma[i * k + t];
    sums[i] = s;
  }
}

template <int kChannels, typename T>
__attribute__((always_inline)) inline void BuildPlane(const Image& img, Plane* plane) {
  const Axis xa = AxisOf(img.width()), ya = AxisOf(img.height());
  plane->x = xa;
  plane->y = ya;
  const size_t stride = plane->stride();
  const bool every_column = xa.step == 1;  // else blocks are sampled (k > kMaxSamples)
  const size_t samples_per_row = static_cast<size_t>(img.width()) * kChannels;
  thread_local std::vector<uint16_t> acc;
  thread_local std::vector<uint32_t> luma;
  acc.resize(samples_per_row);
  luma.resize(img.width());
  std::fill(plane->sat.begin(), plane->sat.begin() + stride, 0.0);
  uint32_t sums[kPlane];
  double scale[kPlane];  // block pixels / samples read, per column of blocks (1 where all are read)
  for (int i = 0; i < xa.n; ++i) scale[i] = static_cast<double>(xa.hi(i) - xa.lo(i)) / xa.samples(i);
  for (int by = 0; by < ya.n; ++by) {
    SumRows<T>(img, ya.lo(by), ya.hi(by), ya.step, samples_per_row, acc.data());
    if (every_column) {
      LumaRow<kChannels>(acc.data(), img.width(), luma.data());
      const int full = img.width() / xa.k;  // whole blocks; a shorter last one after them
      switch (xa.k) {                       // 1..kMaxSamples
        case 1:
          BlockSums<1>(luma.data(), full, sums);
          break;
        case 2:
          BlockSums<2>(luma.data(), full, sums);
          break;
        case 3:
          BlockSums<3>(luma.data(), full, sums);
          break;
        default:
          BlockSums<4>(luma.data(), full, sums);
          break;
      }
      if (full < xa.n) {
        sums[full] = 0;
        for (int x = xa.lo(full); x < img.width(); ++x) sums[full] += luma[x];
      }
    } else {
      for (int i = 0; i < xa.n; ++i) {
        uint32_t s = 0;
        for (int x = xa.lo(i); x < xa.hi(i); x += xa.step) {
          const uint16_t* p = &acc[static_cast<size_t>(x) * kChannels];
          s += kChannels >= 3 ? 77u * p[0] + 150u * p[1] + 29u * p[2 % kChannels] : 256u * p[0];
        }
        sums[i] = s;
      }
    }
    const double* above = &plane->sat[by * stride];
    double* out = &plane->sat[(by + 1) * stride];
    out[0] = 0;
    if (every_column && ya.step == 1) {
      // Every pixel read: whole sums (a chain of integer adds, not of
      // floating-point ones), exact in a double below 2^53.
      uint64_t row = 0;
      for (int i = 0; i < xa.n; ++i) {
        row += sums[i];
        out[i + 1] = above[i + 1] + static_cast<double>(row);
      }
    } else {
      const double row_scale = static_cast<double>(ya.hi(by) - ya.lo(by)) / ya.samples(by);
      double row = 0;
      for (int i = 0; i < xa.n; ++i) {
        row += static_cast<double>(sums[i]) * scale[i] * row_scale;
        out[i + 1] = above[i + 1] + row;
      }
    }
  }
}

template <typename T>
__attribute__((always_inline)) inline void BuildPlaneOf(const Image& img, Plane* plane) {
  switch (img.channels()) {
    case 1:
      return BuildPlane<1, T>(img, plane);
    case 2:
      return BuildPlane<2, T>(img, plane);
    case 3:
      return BuildPlane<3, T>(img, plane);
    default:
      return BuildPlane<4, T>(img, plane);
  }
}

// The gray plane of `img`; for 8-bit images compiled for AVX2 as well (the
// luma of interleaved sums needs its widening loads to vectorize), picked
// once, at load. Integer sums, then double in a fixed order: the same
// values on every CPU.
__attribute__((target_clones("avx2", "default"))) void GrayPlane8(const Image& img, Plane* plane) {
  BuildPlaneOf<uint8_t>(img, plane);
}

void GrayPlane(const Image& img, Plane* plane) {
  if (img.bit_depth() == 16) {
    BuildPlaneOf<uint16_t>(img, plane);
  } else {
    GrayPlane8(img, plane);
  }
}

using Grid = std::array<double, kGrid * kGrid>;

// Where the kGrid + 1 grid lines of pixels [lo, hi) of an axis fall: block
// and fraction, for a linear read of the summed-area table.
struct Lines {
  std::array<int, kGrid + 1> at;
  std::array<double, kGrid + 1> frac;
};
__attribute__((always_inline)) inline Lines LinesOf(const Axis& a, double lo, double hi) {
  Lines l;
  for (int i = 0; i <= kGrid; ++i) a.Locate(lo + (hi - lo) * i / kGrid, &l.at[i], &l.frac[i]);
  return l;
}

// The summed-area table read at a region's kGrid + 1 vertical grid lines
// (x = its left edge + i / 32 of its width, i = 0..32), on every row of the
// table: at[y][i]. The table is linear between its entries along a row (the
// blocks are constants), so this is exact. Regions with the same left and
// right edges share it.
struct Columns {
  int left = -1, right = -1;  // per mille; -1: not filled
  std::array<std::array<double, kGrid + 1>, kPlane + 1> at;
};
// How many regions' left and right edges differ (one Columns each).
constexpr int ColumnSetsOf(const RegionPerMille (&b)[kHashRegions]) {
  int sets = 0;
  for (int r = 0; r < kHashRegions; ++r) {
    bool seen = false;
    for (int q = 0; q < r; ++q) seen = seen || (b[q].left == b[r].left && b[q].right == b[r].right);
    sets += seen ? 0 : 1;
  }
  return sets;
}
constexpr int kColumnSets = ColumnSetsOf(kHashRegionBounds);
void FillColumns(const Plane& p, int left, int right, Columns* c) {
  const Lines xl = LinesOf(p.x, p.x.size * left / 1000.0, p.x.size * right / 1000.0);
  for (int y = 0; y <= p.y.n; ++y) {
    const double* row = &p.sat[y * p.stride()];
    for (int i = 0; i <= kGrid; ++i) {
      const double a = row[xl.at[i]], b = row[xl.at[i] + 1];
      c->at[y][i] = a + xl.frac[i] * (b - a);
    }
  }
  c->left = left;
  c->right = right;
}

// The 32x32 grid of the region `b` (`c`: its columns): the mean luma over
// each of 32x32 equal parts of the region, the blocks taken as constants
// (cut blocks weighted by the area inside).
__attribute__((always_inline)) inline Grid RegionGrid(const Plane& p, const Columns& c, const RegionPerMille& b) {
  const double top = p.y.size * b.top / 1000.0, bottom = p.y.size * b.bottom / 1000.0;
  const double left = p.x.size * b.left / 1000.0, right = p.x.size * b.right / 1000.0;
  const Lines yl = LinesOf(p.y, top, bottom);
  double corner[kGrid + 1][kGrid + 1];
  for (int j = 0; j <= kGrid; ++j) {
    const double* above = c.at[yl.at[j]].data();
    const double* below = c.at[yl.at[j] + 1].data();
    const double fy = yl.frac[j];
    for (int i = 0; i <= kGrid; ++i) corner[j][i] = above[i] + fy * (below[i] - above[i]);
  }
  // Means of luma (the table holds luma * 256) over parts of equal area.
  const double per_part = static_cast<double>(kGrid) * kGrid / ((right - left) * (bottom - top) * 256.0);
  Grid grid;
  for (int cy = 0; cy < kGrid; ++cy) {
    for (int cx = 0; cx < kGrid; ++cx) {
      grid[cy * kGrid + cx] =
          (corner[cy + 1][cx + 1] - corner[cy + 1][cx] - corner[cy][cx + 1] + corner[cy][cx]) * per_part;
    }
  }
  return grid;
}

// The 16x16 lowest frequencies of the 2-D DCT-II of a grid, into
// coeff[slot_v * 16 + slot_u] (FrequencyOfSlot), rows first. Each sum runs
// over 16 sums or differences of mirrored samples (the basis' symmetry: half
// the multiplications), in increasing order, its terms independent of the
// other frequencies'. No FMA: every CPU gives the same bits.
__attribute__((always_inline)) inline void LowFrequencies(const double* __restrict grid, double* __restrict coeff) {
  constexpr int kHalf = kGrid / 2, kSlots = kDetailKeep, kK = kDetailKeep / 2;
  const Basis& basis = BasisTable();
  alignas(32) double rows[kGrid][kSlots];
  for (int y = 0; y < kGrid; ++y) {
    const double* g = &grid[y * kGrid];
    double sum[kHalf], diff[kHalf];
    for (int x = 0; x < kHalf; ++x) {
      sum[x] = g[x] + g[kGrid - 1 - x];
      diff[x] = g[x] - g[kGrid - 1 - x];
    }
    double even[kK] = {}, odd[kK] = {};
    for (int x = 0; x < kHalf; ++x) {
      for (int k = 0; k < kK; ++k) even[k] += sum[x] * basis.even[x][k];
      for (int k = 0; k < kK; ++k) odd[k] += diff[x] * basis.odd[x][k];
    }
    for (int k = 0; k < kK; ++k) {
      rows[y][k] = even[k];
      rows[y][kK + k] = odd[k];
    }
  }
  alignas(32) double sums[kHalf][kSlots], diffs[kHalf][kSlots];
  for (int y = 0; y < kHalf; ++y) {
    for (int j = 0; j < kSlots; ++j) {
      sums[y][j] = rows[y][j] + rows[kGrid - 1 - y][j];
      diffs[y][j] = rows[y][j] - rows[kGrid - 1 - y][j];
    }
  }
  for (int k = 0; k < kK; ++k) {
    double even[kSlots] = {}, odd[kSlots] = {};
    for (int y = 0; y < kHalf; ++y) {
      const double be = basis.even[y][k], bo = basis.odd[y][k];
      for (int j = 0; j < kSlots; ++j) even[j] += sums[y][j] * be;
      for (int j = 0; j < kSlots; ++j) odd[j] += diffs[y][j] * bo;
    }
    std::copy(even, even + kSlots, &coeff[k * kSlots]);
    std::copy(odd, odd + kSlots, &coeff[(kK + k) * kSlots]);
  }
}

// Where coefficient (u, v) < (16, 16) sits in LowFrequencies' output.
struct SlotTable {
  std::array<uint16_t, kDetailKeep * kDetailKeep> of;  // [v * 16 + u] -> slot index
};
const SlotTable& Slots() {
  static const SlotTable t = [] {
    SlotTable s{};
    for (int sv = 0; sv < kDetailKeep; ++sv) {
      for (int su = 0; su < kDetailKeep; ++su) {
        s.of[FrequencyOfSlot(sv) * kDetailKeep + FrequencyOfSlot(su)] = static_cast<uint16_t>(sv * kDetailKeep + su);
      }
    }
    return s;
  }();
  return t;
}

// Slots (LowFrequencies' order) of the coefficients (u, v < keep) other
// than DC, in bit order (bit i = keep * v + u is entry i - 1).
template <int keep>
const std::array<uint16_t, keep * keep - 1>& AcSlots() {
  static const std::array<uint16_t, keep* keep - 1> slots = [] {
    std::array<uint16_t, keep * keep - 1> s{};
    for (int i = 1; i < keep * keep; ++i) s[i - 1] = Slots().of[(i / keep) * kDetailKeep + i % keep];
    return s;
  }();
  return slots;
}

// The k-th smallest of a[0, n) (n <= 255; a is reordered): quickselect
// whose partition has no data-dependent branch (each value is written at
// both ends of a scratch row and kept at the one its comparison picks), so
// the coefficients' random order costs no mispredicted branches, which were
// most of std::nth_element's time here.
double Select(double* a, int n, int k) {
  double tmp[kDetailKeep * kDetailKeep];
  int lo = 0, hi = n;  // the answer is in a[lo, hi)
  while (hi - lo > 8) {
    const double x = a[lo], y = a[(lo + hi) / 2], z = a[hi - 1];
    const double pivot = std::max(std::min(x, y), std::min(std::max(x, y), z));  // median of three
    const int size = hi - lo;
    int less = 0, greater = size;  // tmp[0, less) < pivot, tmp[greater, size) > pivot
    for (int i = lo; i < hi; ++i) {
      const double v = a[i];
      tmp[less] = v;
      tmp[greater - 1] = v;
      less += v < pivot;
      greater -= v > pivot;
    }
    if (k - lo < less) {
      std::copy(tmp, tmp + less, a + lo);
      hi = lo + less;
    } else if (k - lo >= greater) {
      std::copy(tmp + greater, tmp + size, a + lo + greater);
      lo += greater;
    } else {
      return pivot;  // the k-th is one of the values equal to the pivot
    }
  }
  std::sort(a + lo, a + hi);
  return a[k];
}

// Bit i (= keep * v + u, i >= 1) is 1 when coefficient (u, v) is above the
// median of the keep * keep - 1 others than DC; into `words`.
template <int keep>
void BitsOf(const double* coeff, uint64_t* words) {
  const std::array<uint16_t, keep* keep - 1>& slots = AcSlots<keep>();
  std::array<double, keep * keep - 1> ac;
  if constexpr (keep == kDetailKeep) {
    std::copy(coeff + 1, coeff + keep * keep, ac.begin());  // slot 0 is DC; the median needs no order
  } else {
    for (size_t i = 0; i < ac.size(); ++i) ac[i] = coeff[slots[i]];
  }
  const double median = Select(ac.data(), static_cast<int>(ac.size()), static_cast<int>(ac.size()) / 2);
  for (size_t i = 0; i < slots.size(); ++i) {
    if (coeff[slots[i]] > median) words[(i + 1) / 64] |= uint64_t{1} << ((i + 1) % 64);
  }
}

// RegionTone of LowFrequencies' output. Its coefficients are the
// orthonormal ones times 16 (the factor left out of the basis), DC is slot
// 0: the grid's mean is coeff[0] / 512, the low-passed grid's standard
// deviation the root of the AC squares over 512. The squares are summed in
// 8 lanes (independent chains, the same order on every CPU).
__attribute__((always_inline)) inline RegionTone ToneOf(const double* __restrict coeff) {
  constexpr int kLanes = 8;
  double lanes[kLanes] = {0};
  for (int j = 1; j < kLanes; ++j) lanes[j] = coeff[j] * coeff[j];  // slot 0 is DC
  for (int i = kLanes; i < kDetailKeep * kDetailKeep; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] += coeff[i + j] * coeff[i + j];
  }
  double squares = 0;
  for (double l : lanes) squares += l;
  RegionTone t;
  t.mean = static_cast<uint16_t>(std::clamp(std::lround(coeff[0] / 2), 0l, 65535l));
  t.contrast = static_cast<uint16_t>(std::clamp(std::lround(std::sqrt(squares) / 2), 0l, 65535l));
  return t;
}

// The hashes of region `r` of the plane: *phash, and *detail and *tone when
// given. Compiled for AVX2 as well, picked once at load where the CPU has
// it (the same arithmetic in wider registers, no FMA: the same bits).
__attribute__((target_clones("avx2", "default"))) void HashRegion(const Plane& plane, const Columns& columns, int r,
                                                                  uint64_t* phash, DetailHash* detail,
                                                                  RegionTone* tone) {
  alignas(32) double coeff[kDetailKeep * kDetailKeep];
  LowFrequencies(RegionGrid(plane, columns, kHashRegionBounds[r]).data(), coeff);
  BitsOf<kKeep>(coeff, phash);
  if (detail != nullptr) BitsOf<kDetailKeep>(coeff, detail->data());
  if (tone != nullptr) *tone = ToneOf(coeff);
}

uint64_t RegionHash(const Image& img, int r) {
  uint64_t hash = 0;
  if (img.empty()) return hash;
  thread_local Plane plane;
  thread_local Columns columns;
  GrayPlane(img, &plane);
  FillColumns(plane, kHashRegionBounds[r].left, kHashRegionBounds[r].right, &columns);
  HashRegion(plane, columns, r, &hash, nullptr, nullptr);
  return hash;
}

}  // namespace

uint64_t PerceptualHash(const Image& img) { return RegionHash(img, 0); }

uint64_t CentrePerceptualHash(const Image& img) { return RegionHash(img, 1); }

RegionHashes HashRegions(const Image& img) {
  RegionHashes h;
  if (img.empty()) return h;
  thread_local Plane plane;
  thread_local std::array<Columns, kColumnSets> columns;  // one per left/right pair
  GrayPlane(img, &plane);
  for (Columns& c : columns) c.left = -1;
  for (int r = 0; r < kHashRegions; ++r) {
    const RegionPerMille& b = kHashRegionBounds[r];
    Columns* c = &columns[0];
    while (c->left != -1 && (c->left != b.left || c->right != b.right)) ++c;
    if (c->left == -1) FillColumns(plane, b.left, b.right, c);
    HashRegion(plane, *c, r, &h.phash[r], &h.detail[r], &h.tone[r]);
  }
  return h;
}

}  // namespace libshard::image
