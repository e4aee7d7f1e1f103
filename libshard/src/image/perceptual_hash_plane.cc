// Step 1 of the perceptual hash: the blocks' sums of luma and their
// summed-area table (perceptual_hash_plane.h), built twice from one source:
// portable, and for AVX2 (target attributes, picked by perceptual_hash.cc
// after a run-time CPU check) with hand-written block sums for 8-bit RGB.
#include "image/perceptual_hash_plane.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace libshard::image::internal {
namespace {

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

#if defined(__x86_64__)
// Channel sums of blocks of 2 pixels: the 4 pixels at p (lane 0) and at q
// (lane 1), 16 bytes read at each: words R G B 0 per block.
__attribute__((target("avx2"), always_inline)) inline __m256i Rgb2x1Avx2(const uint8_t* p, const uint8_t* q,
                                                                         __m256i shuffle, __m256i ones) {
  const __m256i v =
      _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
                              _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)), 1);
  return _mm256_maddubs_epi16(_mm256_shuffle_epi8(v, shuffle), ones);
}

// The constants of Rgb2x2Avx2, made once per row.
struct RgbConstants {
  __m256i shuffle, ones, weights;
};
__attribute__((target("avx2"), always_inline)) inline RgbConstants RgbConstantsAvx2() {
  return {_mm256_setr_epi8(0, 3, 1, 4, 2, 5, -1, -1, 6, 9, 7, 10, 8, 11, -1, -1,  //
                           0, 3, 1, 4, 2, 5, -1, -1, 6, 9, 7, 10, 8, 11, -1, -1),
          _mm256_set1_epi8(1), _mm256_setr_epi16(77, 150, 29, 0, 77, 150, 29, 0, 77, 150, 29, 0, 77, 150, 29, 0)};
}

// 8 blocks' sums from 16 pixels of rows p0 and p1 (52 bytes readable):
// blocks 0 1 | 4 5 from pixels 0-3 | 8-11, blocks 2 3 | 6 7 from pixels
// 4-7 | 12-15, so that the horizontal add leaves them in order.
__attribute__((target("avx2"), always_inline)) inline __m256i Rgb2x2Avx2(const uint8_t* p0, const uint8_t* p1,
                                                                         const RgbConstants& k) {
  const __m256i a = _mm256_madd_epi16(
      _mm256_add_epi16(Rgb2x1Avx2(p0, p0 + 24, k.shuffle, k.ones), Rgb2x1Avx2(p1, p1 + 24, k.shuffle, k.ones)),
      k.weights);
  const __m256i b = _mm256_madd_epi16(_mm256_add_epi16(Rgb2x1Avx2(p0 + 12, p0 + 36, k.shuffle, k.ones),
                                                       Rgb2x1Avx2(p1 + 12, p1 + 36, k.shuffle, k.ones)),
                                      k.weights);
  return _mm256_hadd_epi32(a, b);
}

// Blocks b..b + 7 of a summed-area table row from their sums s: the prefix
// sums in the register (int32: at most 256 x 2 pixels of 65280), plus
// *carry (the sum before block b; then the sum to block b + 7), converted
// to double and added to the row above, into out[b + 1, b + 1 + stored).
__attribute__((target("avx2"), always_inline)) inline void SatStepAvx2(__m256i s, __m256i* carry, const double* above,
                                                                       double* out, int b, int stored) {
  s = _mm256_add_epi32(s, _mm256_slli_si256(s, 4));  // prefix sums within each 128-bit half
  s = _mm256_add_epi32(s, _mm256_slli_si256(s, 8));
  s = _mm256_add_epi32(
      s, _mm256_blend_epi32(_mm256_setzero_si256(), _mm256_permutevar8x32_epi32(s, _mm256_set1_epi32(3)), 0xF0));
  s = _mm256_add_epi32(s, *carry);
  *carry = _mm256_permutevar8x32_epi32(s, _mm256_set1_epi32(7));
  // above[b + 1, b + 9) stays inside the table (out's row follows above's).
  const __m256d lo = _mm256_add_pd(_mm256_loadu_pd(above + b + 1), _mm256_cvtepi32_pd(_mm256_castsi256_si128(s)));
  const __m256d hi = _mm256_add_pd(_mm256_loadu_pd(above + b + 5), _mm256_cvtepi32_pd(_mm256_extracti128_si256(s, 1)));
  if (stored == 8) {
    _mm256_storeu_pd(out + b + 1, lo);
    _mm256_storeu_pd(out + b + 5, hi);
  } else {
    alignas(32) double last[8];
    _mm256_store_pd(last, lo);
    _mm256_store_pd(last + 4, hi);
    std::copy(last, last + stored, out + b + 1);
  }
}

// A row of the summed-area table from 8-bit RGB rows r0 and r1 (`width`
// pixels each): out[i + 1] = above[i + 1] + the sums of luma * 256 over
// the 2x2 blocks 0..i (the last block may be 1 wide), i < n. Per 16 pixels
// of a row: two 128-bit loads per 8 pixels, a byte shuffle to R0 R1 G0 G1
// B0 B1 0 0 per block and horizontal pair sums (maddubs by 1), the two rows
// added, the luma weights by madd, the halves of each block added, then
// SatStepAvx2. The loads read 4 bytes past the 16 pixels (r1's next row,
// or r0's for r0): 8 blocks at a time read in place while 16 whole pixels
// are left in the row and those bytes lie before `end`, the end of the
// image's bytes; the last pixels copied to zeroed buffers first. Integer
// sums, then the portable build's one double add: the same values.
__attribute__((target("avx2"))) void RgbSatRow2Avx2(const uint8_t* r0, const uint8_t* r1, const uint8_t* end, int width,
                                                    int n, const double* above, double* out) {
  const int bytes = 3 * width;
  // The largest b with 6 b <= v (-1 for none).
  auto most = [](ptrdiff_t v) { return v < 0 ? ptrdiff_t{-1} : v / 6; };
  const ptrdiff_t last = std::min({static_cast<ptrdiff_t>(n) - 8, most(bytes - 48), most(end - r1 - 52)});
  const int in_place = last < 0 ? 0 : static_cast<int>(last / 8 * 8 + 8);  // blocks [0, in_place)
  const RgbConstants k = RgbConstantsAvx2();
  __m256i carry = _mm256_setzero_si256();
  int b = 0;
  for (; b < in_place; b += 8) {
    // The rows of the block after next (r0's + 4 and + 5: the rows are
    // contiguous) asked for while these are summed, early enough to hide a
    // miss of the cache (the next block's come too late: 2 us more per
    // 224x224 image read from memory), and these rows' bytes 6 steps on;
    // a prefetch never faults.
    _mm_prefetch(reinterpret_cast<const char*>(r0 + 4 * bytes + 6 * b), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(r0 + 5 * bytes + 6 * b), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(r0 + 6 * b + 384), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(r1 + 6 * b + 384), _MM_HINT_T0);
    SatStepAvx2(Rgb2x2Avx2(r0 + 6 * b, r1 + 6 * b, k), &carry, above, out, b, 8);
  }
  for (; b < n; b += 8) {
    alignas(32) uint8_t t0[64] = {}, t1[64] = {};
    const int left = std::min(bytes - 6 * b, 48);
    std::memcpy(t0, r0 + 6 * b, left);
    std::memcpy(t1, r1 + 6 * b, left);
    SatStepAvx2(Rgb2x2Avx2(t0, t1, k), &carry, above, out, b, std::min(n - b, 8));
  }
}
#endif

template <int kChannels, typename T, bool kAvx2>
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
#if defined(__x86_64__)
    if constexpr (kAvx2 && kChannels == 3 && sizeof(T) == 1) {
      if (xa.k == 2 && ya.k == 2 && ya.hi(by) - ya.lo(by) == 2) {
        plane->sat[(by + 1) * stride] = 0;
        RgbSatRow2Avx2(img.row(ya.lo(by)), img.row(ya.lo(by) + 1), img.data() + img.byte_size(), img.width(), xa.n,
                       &plane->sat[by * stride], &plane->sat[(by + 1) * stride]);
        continue;
      }
    }
#endif
    if (every_column) {
      SumRows<T>(img, ya.lo(by), ya.hi(by), ya.step, samples_per_row, acc.data());
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
      SumRows<T>(img, ya.lo(by), ya.hi(by), ya.step, samples_per_row, acc.data());
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
      // floating-point ones; below 2^31: at most 512 x 4 pixels of 65280),
      // exact in a double.
      int32_t prefix[kPlane];
      int32_t row = 0;
      for (int i = 0; i < xa.n; ++i) {
        row += static_cast<int32_t>(sums[i]);
        prefix[i] = row;
      }
      for (int i = 0; i < xa.n; ++i) out[i + 1] = above[i + 1] + static_cast<double>(prefix[i]);
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

template <typename T, bool kAvx2>
__attribute__((always_inline)) inline void BuildPlaneOf(const Image& img, Plane* plane) {
  switch (img.channels()) {
    case 1:
      return BuildPlane<1, T, kAvx2>(img, plane);
    case 2:
      return BuildPlane<2, T, kAvx2>(img, plane);
    case 3:
      return BuildPlane<3, T, kAvx2>(img, plane);
    default:
      return BuildPlane<4, T, kAvx2>(img, plane);
  }
}

// The gray plane of `img`: integer sums, then double in a fixed order (the
// same values on every CPU).
template <bool kAvx2>
__attribute__((always_inline)) inline void GrayPlane(const Image& img, Plane* plane) {
  if (img.bit_depth() == 16) {
    BuildPlaneOf<uint16_t, kAvx2>(img, plane);
  } else {
    BuildPlaneOf<uint8_t, kAvx2>(img, plane);
  }
}

}  // namespace

void GrayPlanePortable(const Image& img, Plane* plane) { GrayPlane<false>(img, plane); }

#if defined(__x86_64__)
__attribute__((target("avx2"))) void GrayPlaneAvx2(const Image& img, Plane* plane) { GrayPlane<true>(img, plane); }
#else
void GrayPlaneAvx2(const Image& img, Plane* plane) { GrayPlane<false>(img, plane); }
#endif

}  // namespace libshard::image::internal
