#include "libshard/image/perceptual_hash.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "image/perceptual_hash_plane.h"

namespace libshard::image {
namespace {

constexpr int kGrid = 32;        // a region's gray grid, cells a side
constexpr int kKeep = 8;         // lowest frequencies of the 64-bit hash, per axis
constexpr int kDetailKeep = 16;  // lowest frequencies of the 256-bit detail hash, per axis
using internal::Axis;
using internal::kPlane;
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

// The coefficients come out with the even frequencies of each axis first:
// slot j < 8 is frequency 2j, slot j >= 8 frequency 2 (j - 8) + 1.
constexpr int FrequencyOfSlot(int j) { return j < kDetailKeep / 2 ? 2 * j : 2 * (j - kDetailKeep / 2) + 1; }

using Grid = std::array<float, kGrid * kGrid>;

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
  int left = 0, right = 0;  // per mille
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
#if defined(__x86_64__)
// FillColumns' rows with four lines at a time: the two table entries around
// each line by one 128-bit load, regrouped by unpacks; the same operations.
__attribute__((target("avx2"))) void FillColumnsAvx2(const Plane& p, const Lines* lines, int sets, Columns* c) {
  for (int y = 0; y <= p.y.n; ++y) {
    const double* row = &p.sat[y * p.stride()];
    for (int s = 0; s < sets; ++s) {
      const Lines& xl = lines[s];
      double* out = c[s].at[y].data();
      for (int i = 0; i < kGrid; i += 4) {
        const __m256d p02 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(row + xl.at[i])),
                                                 _mm_loadu_pd(row + xl.at[i + 2]), 1);  // a0 b0 | a2 b2
        const __m256d p13 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(row + xl.at[i + 1])),
                                                 _mm_loadu_pd(row + xl.at[i + 3]), 1);  // a1 b1 | a3 b3
        const __m256d a = _mm256_unpacklo_pd(p02, p13), b = _mm256_unpackhi_pd(p02, p13);
        _mm256_storeu_pd(out + i, _mm256_add_pd(a, _mm256_mul_pd(_mm256_loadu_pd(&xl.frac[i]), _mm256_sub_pd(b, a))));
      }
      const double a = row[xl.at[kGrid]], b = row[xl.at[kGrid] + 1];
      out[kGrid] = a + xl.frac[kGrid] * (b - a);
    }
  }
}
#endif

// Fills columns c[0, sets) (their left and right set), all in one pass over
// the table (each row read once for all of them).
template <bool kAvx2>
__attribute__((always_inline)) inline void FillColumns(const Plane& p, int sets, Columns* c) {
  Lines lines[kColumnSets];
  for (int s = 0; s < sets; ++s) lines[s] = LinesOf(p.x, p.x.size * c[s].left / 1000.0, p.x.size * c[s].right / 1000.0);
#if defined(__x86_64__)
  if constexpr (kAvx2) {
    FillColumnsAvx2(p, lines, sets, c);
    return;
  }
#endif
  for (int y = 0; y <= p.y.n; ++y) {
    const double* row = &p.sat[y * p.stride()];
    for (int s = 0; s < sets; ++s) {
      for (int i = 0; i <= kGrid; ++i) {
        const double a = row[lines[s].at[i]], b = row[lines[s].at[i] + 1];
        c[s].at[y][i] = a + lines[s].frac[i] * (b - a);
      }
    }
  }
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
    float even[2][kSlots] = {}, odd[2][kSlots] = {};
    for (int y = 0; y < kHalf; ++y) {
#pragma GCC unroll 2
      for (int t = 0; t < 2; ++t) {
        const float be = basis.even[y][k0 + t], bo = basis.odd[y][k0 + t];
        for (int j = 0; j < kSlots; ++j) even[t][j] += sums[y][j] * be;
        for (int j = 0; j < kSlots; ++j) odd[t][j] += diffs[y][j] * bo;
      }
    }
    for (int t = 0; t < 2; ++t) {
      std::copy(even[t], even[t] + kSlots, &coeff[(k0 + t) * kSlots]);
      std::copy(odd[t], odd[t] + kSlots, &coeff[(kK + k0 + t) * kSlots]);
    }
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

// An int32 in the order of the float (-0 taken as +0, so equal floats have
// equal keys): the bits of a non-negative float, the magnitude bits flipped
// for a negative one.
inline int32_t OrderKey(float f) {
  f += 0.0f;  // -0 + 0 = +0
  int32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b ^ ((b >> 31) & 0x7fffffff);
}

// The k-th smallest of keys[0, n) (n a multiple of 8, any padding
// INT32_MAX): its bits from the highest down, each kept 1 when fewer than
// k + 1 keys lie below the value so far with that bit set. 32 counts over
// the whole set, no branch on the data and no reordering (a quickselect's
// comparisons of the coefficients' random order are mispredicted, and its
// moves cost more than these counts, which vectorize).
template <int n>
__attribute__((always_inline)) inline int32_t KthKey(const int32_t* __restrict keys, int k) {
  uint32_t r = 0;  // the answer, in offset binary
  for (int bit = 31; bit >= 0; --bit) {
    const uint32_t c = r | (uint32_t{1} << bit);
    const int32_t t = static_cast<int32_t>(c ^ 0x80000000u);
    int below = 0;
#pragma GCC unroll 8
    for (int i = 0; i < n; ++i) below += keys[i] < t;
    r = below <= k ? c : r;
  }
  return static_cast<int32_t>(r ^ 0x80000000u);
}

#if defined(__x86_64__)
// KthKey with the counts in four AVX2 accumulators (shorter chains of
// adds); the same counts, so the same answer.
template <int n>
__attribute__((target("avx2"))) int32_t KthKeyAvx2(const int32_t* keys, int k) {
  static_assert(n % 32 == 0, "whole groups of four vectors");
  uint32_t r = 0;
  for (int bit = 31; bit >= 0; --bit) {
    const uint32_t c = r | (uint32_t{1} << bit);
    const __m256i t = _mm256_set1_epi32(static_cast<int32_t>(c ^ 0x80000000u));
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    const __m256i* key = reinterpret_cast<const __m256i*>(keys);
    for (int v = 0; v < n / 8; v += 4) {  // -1 where a key < t
      a0 = _mm256_sub_epi32(a0, _mm256_cmpgt_epi32(t, _mm256_loadu_si256(key + v)));
      a1 = _mm256_sub_epi32(a1, _mm256_cmpgt_epi32(t, _mm256_loadu_si256(key + v + 1)));
      a2 = _mm256_sub_epi32(a2, _mm256_cmpgt_epi32(t, _mm256_loadu_si256(key + v + 2)));
      a3 = _mm256_sub_epi32(a3, _mm256_cmpgt_epi32(t, _mm256_loadu_si256(key + v + 3)));
    }
    const __m256i sum = _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3));
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
    r = _mm_cvtsi128_si32(h) <= k ? c : r;
  }
  return static_cast<int32_t>(r ^ 0x80000000u);
}

// words[i / 64] bit i % 64 set for each key i - 1 above the median (i >= 1;
// the padding's bit falls off the end): 8 compares to a movemask at a time.
template <int n>
__attribute__((target("avx2"))) void AboveAvx2(const int32_t* keys, int32_t median, uint64_t* words) {
  const __m256i m = _mm256_set1_epi32(median);
  const __m256i* key = reinterpret_cast<const __m256i*>(keys);
  uint64_t carry = 0;
  for (int w = 0; w < n / 64; ++w) {
    uint64_t bits = 0;
    for (int v = 0; v < 8; ++v) {
      const __m256i above = _mm256_cmpgt_epi32(_mm256_loadu_si256(key + 8 * w + v), m);
      bits |= static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(above)))) << (8 * v);
    }
    words[w] |= (bits << 1) | carry;
    carry = bits >> 63;
  }
}
#endif

// Bit i (= keep * v + u, i >= 1) is 1 when coefficient (u, v) is above the
// median of the keep * keep - 1 others than DC; into `words`.
template <int keep, bool kAvx2>
__attribute__((always_inline)) inline void BitsOf(const float* coeff, uint64_t* words) {
  constexpr int kAc = keep * keep - 1, kPadded = (kAc + 7) / 8 * 8;
  const std::array<uint16_t, kAc>& slots = AcSlots<keep>();
  alignas(32) int32_t keys[kPadded];
  for (int i = 0; i < kAc; ++i) keys[i] = OrderKey(coeff[slots[i]]);
  std::fill(keys + kAc, keys + kPadded, std::numeric_limits<int32_t>::max());
#if defined(__x86_64__)
  if constexpr (kAvx2) {
    AboveAvx2<kPadded>(keys, KthKeyAvx2<kPadded>(keys, kAc / 2), words);
    return;
  }
#endif
  const int32_t median = KthKey<kPadded>(keys, kAc / 2);
  for (int w = 0; w < (kAc + 1) / 64; ++w) {  // no branch on the data: half of them would be mispredicted
    uint64_t bits = 0;
    for (int i = w == 0 ? 1 : 0; i < 64; ++i) bits |= static_cast<uint64_t>(keys[w * 64 + i - 1] > median) << i;
    words[w] |= bits;
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

// The hashes of region `r` of the plane: *phash, and *detail and *tone when
// given.
template <bool kAvx2>
__attribute__((always_inline)) inline void HashRegion(const Plane& plane, const Columns& columns, int r,
                                                      uint64_t* phash, DetailHash* detail, RegionTone* tone) {
  alignas(32) float coeff[kDetailKeep * kDetailKeep];
  LowFrequencies(RegionGrid(plane, columns, kHashRegionBounds[r]).data(), coeff);
  BitsOf<kKeep, kAvx2>(coeff, phash);
  if (detail != nullptr) BitsOf<kDetailKeep, kAvx2>(coeff, detail->data());
  if (tone != nullptr) *tone = ToneOf(coeff);
}

// The hashes of regions [first, last) of `img` into *h (detail hashes when
// `detail`).
template <bool kAvx2>
__attribute__((always_inline)) inline void HashAll(const Image& img, int first, int last, bool detail,
                                                   RegionHashes* h) {
  thread_local Plane plane;
  thread_local std::array<Columns, kColumnSets> columns;  // one per left/right pair
#if defined(__x86_64__)
  if constexpr (kAvx2) {
    internal::GrayPlaneAvx2(img, &plane);
  } else  // NOLINT(readability/braces)
#endif
  {
    internal::GrayPlanePortable(img, &plane);
  }
  int sets = 0, set_of[kHashRegions];
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
  }
  FillColumns<kAvx2>(plane, sets, columns.data());
  for (int r = first; r < last; ++r) {
    HashRegion<kAvx2>(plane, columns[set_of[r]], r, &h->phash[r], detail ? &h->detail[r] : nullptr,
                      detail ? &h->tone[r] : nullptr);
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
