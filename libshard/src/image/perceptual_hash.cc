#include "libshard/image/perceptual_hash.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "image/perceptual_hash_bits.h"
#include "image/perceptual_hash_plane.h"

namespace libshard::image {
namespace {

constexpr int kGrid = 32;  // a region's gray grid, cells a side
using internal::Axis;
using internal::FrequencyOfSlot;
using internal::kDetailKeep;
using internal::Keys;
using internal::KeysOf;
using internal::kKeep;
using internal::kPlane;
using internal::KthKey;
using internal::Plane;

// cos((2x + 1) u pi / 64) for u < 16, x < 16: the DCT-II basis, scaled by
// 1/sqrt(2) for u = 0 (the orthonormal DCT's ratio between frequency 0 and
// the others; the factor common to all is left out: it moves no comparison).
// It is even about the middle of the grid for even u and odd for odd u
// (B[31 - x][u] = +-B[x][u]), so only x < 16 is kept: even[x][k] is
// frequency u = 2k, odd[x][k] u = 2k + 1.
struct Basis {
  std::array<std::array<float, kDetailKeep / 2>, kGrid / 2> even{}, odd{};
};
const Basis& BasisTable() {
  static const Basis basis = [] {
    Basis b;
    for (int u = 0; u < kDetailKeep; ++u) {
      const double scale = u == 0 ? std::sqrt(0.5) : 1.0;
      for (int x = 0; x < kGrid / 2; ++x) {
        (u % 2 == 0 ? b.even : b.odd)[x][u / 2] =
            static_cast<float>(scale * std::cos((2 * x + 1) * u * M_PI / (2 * kGrid)));
      }
    }
    return b;
  }();
  return basis;
}

using Grid = std::array<float, kGrid * kGrid>;

// Where the kGrid + 1 grid lines of pixels [lo, hi) of an axis fall: block
// and fraction, for a linear read of the summed-area table; padded to whole
// groups of 4 (AVX2 lanes of double) with copies of the last line, so that
// the loops over lines need no scalar tail (the copies' values are never
// used).
constexpr int kLinesPadded = (kGrid + 1 + 3) / 4 * 4;
struct Lines {
  std::array<int, kLinesPadded> at;
  std::array<double, kLinesPadded> frac;
};
__attribute__((always_inline)) inline Lines LinesOf(const Axis& a, double lo, double hi) {
  Lines l;
  for (int i = 0; i <= kGrid; ++i) a.Locate(lo + (hi - lo) * i / kGrid, &l.at[i], &l.frac[i]);
  for (int i = kGrid + 1; i < kLinesPadded; ++i) {
    l.at[i] = l.at[kGrid];
    l.frac[i] = l.frac[kGrid];
  }
  return l;
}

// The summed-area table read at a region's kGrid + 1 vertical grid lines
// (x = its left edge + i / 32 of its width, i = 0..32), on every row of the
// table: at[y][i]. The table is linear between its entries along a row (the
// blocks are constants), so this is exact. Regions with the same left and
// right edges share it.
struct Columns {
  int left = 0, right = 0;  // per mille
  alignas(32) std::array<std::array<double, kLinesPadded>, kPlane + 1> at;
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
// The rows of the table each Columns is read at (RegionGrid reads rows
// at[j] and at[j] + 1 of its regions' horizontal grid lines); the others
// are left unfilled.
using RowsUsed = std::array<std::array<bool, kPlane + 1>, kColumnSets>;
#if defined(__x86_64__)
// FillColumns' rows with four lines at a time: the two table entries around
// each line by one 128-bit load, regrouped by unpacks; the same operations.
__attribute__((target("avx2"))) void FillColumnsAvx2(const Plane& p, const Lines* lines, const RowsUsed& used, int sets,
                                                     Columns* c) {
  for (int y = 0; y <= p.y.n; ++y) {
    const double* row = &p.sat[y * p.stride()];
    for (int s = 0; s < sets; ++s) {
      if (!used[s][y]) continue;
      const Lines& xl = lines[s];
      double* out = c[s].at[y].data();
      for (int i = 0; i < kLinesPadded; i += 4) {
        const __m256d p02 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(row + xl.at[i])),
                                                 _mm_loadu_pd(row + xl.at[i + 2]), 1);  // a0 b0 | a2 b2
        const __m256d p13 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(row + xl.at[i + 1])),
                                                 _mm_loadu_pd(row + xl.at[i + 3]), 1);  // a1 b1 | a3 b3
        const __m256d a = _mm256_unpacklo_pd(p02, p13), b = _mm256_unpackhi_pd(p02, p13);
        _mm256_store_pd(out + i, _mm256_add_pd(a, _mm256_mul_pd(_mm256_loadu_pd(&xl.frac[i]), _mm256_sub_pd(b, a))));
      }
    }
  }
}
#endif

// Fills the rows `used` of columns c[0, sets) (their left and right set),
// all in one pass over the table (each row read once for all of them).
template <bool kAvx2>
__attribute__((always_inline)) inline void FillColumns(const Plane& p, const RowsUsed& used, int sets, Columns* c) {
  Lines lines[kColumnSets];
  for (int s = 0; s < sets; ++s) lines[s] = LinesOf(p.x, p.x.size * c[s].left / 1000.0, p.x.size * c[s].right / 1000.0);
#if defined(__x86_64__)
  if constexpr (kAvx2) {
    FillColumnsAvx2(p, lines, used, sets, c);
    return;
  }
#endif
  for (int y = 0; y <= p.y.n; ++y) {
    const double* row = &p.sat[y * p.stride()];
    for (int s = 0; s < sets; ++s) {
      if (!used[s][y]) continue;
      for (int i = 0; i < kLinesPadded; ++i) {
        const double a = row[lines[s].at[i]], b = row[lines[s].at[i] + 1];
        c[s].at[y][i] = a + lines[s].frac[i] * (b - a);
      }
    }
  }
}

// The horizontal grid lines of the region `b`.
__attribute__((always_inline)) inline Lines RowLinesOf(const Plane& p, const RegionPerMille& b) {
  return LinesOf(p.y, p.y.size * b.top / 1000.0, p.y.size * b.bottom / 1000.0);
}

// The 32x32 grid of the region `b` (`c`: its columns, `yl`: its
// RowLinesOf): the mean luma over each of 32x32 equal parts of the region,
// the blocks taken as constants (cut blocks weighted by the area inside).
__attribute__((always_inline)) inline Grid RegionGrid(const Plane& p, const Columns& c, const Lines& yl,
                                                      const RegionPerMille& b) {
  const double top = p.y.size * b.top / 1000.0, bottom = p.y.size * b.bottom / 1000.0;
  const double left = p.x.size * b.left / 1000.0, right = p.x.size * b.right / 1000.0;
  alignas(32) double corner[kGrid + 1][kLinesPadded];
  for (int j = 0; j <= kGrid; ++j) {
    const double* __restrict above = c.at[yl.at[j]].data();
    const double* __restrict below = c.at[yl.at[j] + 1].data();
    const double fy = yl.frac[j];
#pragma GCC unroll 36
    for (int i = 0; i < kLinesPadded; ++i) corner[j][i] = above[i] + fy * (below[i] - above[i]);
  }
  // Means of luma (the table holds luma * 256) over parts of equal area:
  // differences of large sums, so in double, then rounded to float.
  const double per_part = static_cast<double>(kGrid) * kGrid / ((right - left) * (bottom - top) * 256.0);
  Grid grid;
  for (int cy = 0; cy < kGrid; ++cy) {
    for (int cx = 0; cx < kGrid; ++cx) {
      grid[cy * kGrid + cx] = static_cast<float>(
          (corner[cy + 1][cx + 1] - corner[cy + 1][cx] - corner[cy][cx + 1] + corner[cy][cx]) * per_part);
    }
  }
  return grid;
}

// The 16x16 lowest frequencies of the 2-D DCT-II of a grid, into
// coeff[slot_v * 16 + slot_u] (FrequencyOfSlot), rows first. Each sum runs
// over 16 sums or differences of mirrored samples (the basis' symmetry: half
// the multiplications), in increasing order, its terms independent of the
// other frequencies'. In float (the grid's means of 0..255 need no more;
// 8 lanes to an AVX2 register), no FMA: every CPU gives the same bits.
__attribute__((always_inline)) inline void LowFrequencies(const float* __restrict grid, float* __restrict coeff) {
  constexpr int kHalf = kGrid / 2, kSlots = kDetailKeep, kK = kDetailKeep / 2;
  const Basis& basis = BasisTable();
  alignas(32) float rows[kGrid][kSlots];
  // Four rows at a time and two frequencies at a time below: independent
  // sums side by side, so that the adds' latency overlaps.
  constexpr int kRows = 4;
  for (int y0 = 0; y0 < kGrid; y0 += kRows) {
    float sum[kRows][kHalf], diff[kRows][kHalf];
    for (int r = 0; r < kRows; ++r) {
      const float* g = &grid[(y0 + r) * kGrid];
      for (int x = 0; x < kHalf; ++x) {
        sum[r][x] = g[x] + g[kGrid - 1 - x];
        diff[r][x] = g[x] - g[kGrid - 1 - x];
      }
    }
    float even[kRows][kK] = {}, odd[kRows][kK] = {};
    for (int x = 0; x < kHalf; ++x) {
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        for (int k = 0; k < kK; ++k) even[r][k] += sum[r][x] * basis.even[x][k];
        for (int k = 0; k < kK; ++k) odd[r][k] += diff[r][x] * basis.odd[x][k];
      }
    }
    for (int r = 0; r < kRows; ++r) {
      for (int k = 0; k < kK; ++k) {
        rows[y0 + r][k] = even[r][k];
        rows[y0 + r][kK + k] = odd[r][k];
      }
    }
  }
  alignas(32) float sums[kHalf][kSlots], diffs[kHalf][kSlots];
  for (int y = 0; y < kHalf; ++y) {
    for (int j = 0; j < kSlots; ++j) {
      sums[y][j] = rows[y][j] + rows[kGrid - 1 - y][j];
      diffs[y][j] = rows[y][j] - rows[kGrid - 1 - y][j];
    }
  }
  for (int k0 = 0; k0 < kK; k0 += 2) {
    float* __restrict even[2] = {&coeff[k0 * kSlots], &coeff[(k0 + 1) * kSlots]};
    float* __restrict odd[2] = {&coeff[(kK + k0) * kSlots], &coeff[(kK + k0 + 1) * kSlots]};
    for (int t = 0; t < 2; ++t) {
      std::fill(even[t], even[t] + kSlots, 0.0f);
      std::fill(odd[t], odd[t] + kSlots, 0.0f);
    }
    for (int y = 0; y < kHalf; ++y) {
#pragma GCC unroll 2
      for (int t = 0; t < 2; ++t) {
        const float be = basis.even[y][k0 + t], bo = basis.odd[y][k0 + t];
        for (int j = 0; j < kSlots; ++j) even[t][j] += sums[y][j] * be;
        for (int j = 0; j < kSlots; ++j) odd[t][j] += diffs[y][j] * bo;
      }
    }
  }
}

// RegionTone of LowFrequencies' output. Its coefficients are the
// orthonormal ones times 16 (the factor left out of the basis), DC in slot
// 0: the grid's mean is coeff[0] / 512, the low-passed grid's standard
// deviation the root of the AC squares over 512. The squares are summed in
// double, in 8 lanes (independent chains, the same order on every CPU and
// in both builds; no FMA).
__attribute__((always_inline)) inline RegionTone ToneOf(const float* __restrict coeff) {
  constexpr int kLanes = 8;
  double lanes[kLanes] = {0};
  for (int j = 1; j < kLanes; ++j) lanes[j] = static_cast<double>(coeff[j]) * coeff[j];  // slot 0 is DC
  for (int i = kLanes; i < kDetailKeep * kDetailKeep; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] += static_cast<double>(coeff[i + j]) * coeff[i + j];
  }
  double squares = 0;
  for (double l : lanes) squares += l;
  RegionTone t;
  t.mean = static_cast<uint16_t>(std::clamp(std::lround(static_cast<double>(coeff[0]) / 2), 0l, 65535l));
  t.contrast = static_cast<uint16_t>(std::clamp(std::lround(std::sqrt(squares) / 2), 0l, 65535l));
  return t;
}

// The 64-bit and detail hashes of LowFrequencies' output `coeff`: the
// medians of the 63 and 255 coefficients other than DC (both are found
// where the 64-bit hash alone is asked for: a median costs less than a call
// apart).
template <bool kAvx2>
__attribute__((always_inline)) inline void BitsOf(const float* __restrict coeff, uint64_t* phash,
                                                  DetailHash* detail) {
  Keys keys;
  KeysOf(coeff, &keys);
  constexpr int kLowK = (kKeep * kKeep - 1) / 2, kAllK = (kDetailKeep * kDetailKeep - 1) / 2;
  int32_t median_low, median_all;
#if defined(__x86_64__)
  if constexpr (kAvx2) {
    internal::KthKeyPairAvx2<kKeep * kKeep, kDetailKeep * kDetailKeep>(keys.low, kLowK, keys.all, kAllK, &median_low,
                                                                       &median_all);
  } else  // NOLINT(readability/braces)
#endif
  {
    median_low = KthKey<kKeep * kKeep>(keys.low, kLowK);
    median_all = detail != nullptr ? KthKey<kDetailKeep * kDetailKeep>(keys.all, kAllK) : 0;
  }
  *phash = internal::PhashBits<kAvx2>(keys, median_low);
  if (detail != nullptr) internal::DetailBits<kAvx2>(keys, median_all, detail);
}

// The hashes of region `r` of the plane: *phash, and *detail and *tone when
// given; with `mirror`, the same region's hashes of the grid mirrored left
// to right too (RegionHashes::mirror): the DCT-II of g(31 - x) is (-1)^u
// times that of g(x), so the odd horizontal frequencies (slots kDetailKeep
// / 2 and up of each row, FrequencyOfSlot) negated, exactly.
template <bool kAvx2>
__attribute__((always_inline)) inline void HashRegion(const Plane& plane, const Columns& columns, const Lines& yl,
                                                      int r, uint64_t* phash, DetailHash* detail, RegionTone* tone,
                                                      uint64_t* mirror = nullptr,
                                                      DetailHash* mirror_detail = nullptr) {
  alignas(32) float coeff[kDetailKeep * kDetailKeep];
  LowFrequencies(RegionGrid(plane, columns, yl, kHashRegionBounds[r]).data(), coeff);
  BitsOf<kAvx2>(coeff, phash, detail);
  if (tone != nullptr) *tone = ToneOf(coeff);
  if (mirror != nullptr) {
    for (int v = 0; v < kDetailKeep; ++v) {
      for (int u = kDetailKeep / 2; u < kDetailKeep; ++u) coeff[v * kDetailKeep + u] = -coeff[v * kDetailKeep + u];
    }
    BitsOf<kAvx2>(coeff, mirror, mirror_detail);
  }
}

// A thread's tables (too large for a stack), reached through a plain
// reference: an access to a thread_local itself is a call where the code
// may be in a shared library, which the compiler repeats inside loops.
struct Scratch {
  Plane plane;
  std::array<Columns, kColumnSets> columns;  // one per left/right pair
};
__attribute__((noinline)) Scratch& ThisThreadsScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// The hashes of regions [first, last) of `img` into *h (detail hashes when
// `detail`).
template <bool kAvx2>
__attribute__((always_inline)) inline void HashAll(const Image& img, int first, int last, bool detail,
                                                   RegionHashes* h) {
  Scratch& scratch = ThisThreadsScratch();
  Plane& plane = scratch.plane;
  std::array<Columns, kColumnSets>& columns = scratch.columns;
#if defined(__x86_64__)
  if constexpr (kAvx2) {
    internal::GrayPlaneAvx2(img, &plane);
  } else  // NOLINT(readability/braces)
#endif
  {
    internal::GrayPlanePortable(img, &plane);
  }
  int sets = 0, set_of[kHashRegions];
  Lines ylines[kHashRegions];
  RowsUsed used{};
  for (int r = first; r < last; ++r) {
    const RegionPerMille& b = kHashRegionBounds[r];
    int s = 0;
    while (s < sets && (columns[s].left != b.left || columns[s].right != b.right)) ++s;
    if (s == sets) {
      columns[s].left = b.left;
      columns[s].right = b.right;
      ++sets;
    }
    set_of[r] = s;
    ylines[r] = RowLinesOf(plane, b);
    for (int j = 0; j <= kGrid; ++j) used[s][ylines[r].at[j]] = used[s][ylines[r].at[j] + 1] = true;
  }
  FillColumns<kAvx2>(plane, used, sets, columns.data());
  for (int r = first; r < last; ++r) {
    const bool mirror = detail && r == 0;  // the whole image's mirror, with the rest of the leak check's hashes
    HashRegion<kAvx2>(plane, columns[set_of[r]], ylines[r], r, &h->phash[r], detail ? &h->detail[r] : nullptr,
                      detail ? &h->tone[r] : nullptr, mirror ? &h->mirror : nullptr,
                      mirror ? &h->mirror_detail : nullptr);
  }
}

// The two builds of the whole computation: the same source, the same
// operations in the same order (no FMA; integer sums), so the same bits.
void HashAllPortable(const Image& img, int first, int last, bool detail, RegionHashes* h) {
  HashAll<false>(img, first, last, detail, h);
}
#if defined(__x86_64__)
__attribute__((target("avx2"))) void HashAllAvx2(const Image& img, int first, int last, bool detail, RegionHashes* h) {
  HashAll<true>(img, first, last, detail, h);
}
#endif

void Hash(HashImpl impl, const Image& img, int first, int last, bool detail, RegionHashes* h) {
  if (img.empty()) return;
#if defined(__x86_64__)
  if (impl == HashImpl::kAvx2) return HashAllAvx2(img, first, last, detail, h);
#endif
  HashAllPortable(img, first, last, detail, h);
}

}  // namespace

bool HashImplAvailable(HashImpl impl) {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return impl == HashImpl::kPortable || avx2;
#else
  return impl == HashImpl::kPortable;
#endif
}

HashImpl ActiveHashImpl() {
  static const HashImpl active = HashImplAvailable(HashImpl::kAvx2) ? HashImpl::kAvx2 : HashImpl::kPortable;
  return active;
}

uint64_t PerceptualHash(const Image& img) {
  RegionHashes h;
  Hash(ActiveHashImpl(), img, 0, 1, false, &h);
  return h.phash[0];
}

uint64_t CentrePerceptualHash(const Image& img) {
  RegionHashes h;
  Hash(ActiveHashImpl(), img, 1, 2, false, &h);
  return h.phash[1];
}

RegionHashes HashRegions(const Image& img) { return HashRegionsWith(ActiveHashImpl(), img); }

RegionHashes HashRegionsWith(HashImpl impl, const Image& img) {
  RegionHashes h;
  Hash(HashImplAvailable(impl) ? impl : HashImpl::kPortable, img, 0, kHashRegions, true, &h);
  return h;
}

}  // namespace libshard::image
