// Private: step 4 of the perceptual hash (libshard/image/perceptual_hash.h),
// the bits from the DCT's coefficients: each coefficient's key (an int32 in
// the float's order), the medians of the 63 and 255 keys other than DC by
// integer counts (exact: no float compare, no reordering that could differ),
// the bits of the keys above them, put in frequency order. Templates for the
// portable and AVX2 builds of perceptual_hash.cc (the same answers).
#ifndef LIBSHARD_SRC_IMAGE_PERCEPTUAL_HASH_BITS_H_
#define LIBSHARD_SRC_IMAGE_PERCEPTUAL_HASH_BITS_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "libshard/image/perceptual_hash.h"

namespace libshard::image::internal {

inline constexpr int kKeep = 8;         // lowest frequencies of the 64-bit hash, per axis
inline constexpr int kDetailKeep = 16;  // lowest frequencies of the 256-bit detail hash, per axis

// The DCT's coefficients come out with the even frequencies of each axis
// first: slot j < 8 is frequency 2j, slot j >= 8 frequency 2 (j - 8) + 1.
constexpr int FrequencyOfSlot(int j) { return j < kDetailKeep / 2 ? 2 * j : 2 * (j - kDetailKeep / 2) + 1; }

// An int32 in the order of the float (-0 taken as +0, so equal floats have
// equal keys): the bits of a non-negative float, the magnitude bits flipped
// for a negative one.
inline int32_t OrderKey(float f) {
  f += 0.0f;  // -0 + 0 = +0
  int32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b ^ ((b >> 31) & 0x7fffffff);
}

// The keys of the DCT's output (perceptual_hash.cc, LowFrequencies) in its
// slot order, DC's replaced by INT32_MAX (no float's key: never below a
// count's threshold, and cleared from the bits): `all` the 256 of the
// detail hash; `low` the 64 of the 64-bit hash, row r of 8 the slot row
// r < 4 ? r : r + 4 (frequency v = 2r or 2 (r - 4) + 1), of which slots
// 0..3 and 8..11 (u likewise). A median does not depend on the keys' order.
struct Keys {
  alignas(32) int32_t all[kDetailKeep * kDetailKeep];
  alignas(32) int32_t low[kKeep * kKeep];
};
__attribute__((always_inline)) inline void KeysOf(const float* __restrict coeff, Keys* __restrict k) {
  for (int i = 0; i < kDetailKeep * kDetailKeep; ++i) k->all[i] = OrderKey(coeff[i]);
  k->all[0] = std::numeric_limits<int32_t>::max();
  constexpr int kHalf = kKeep / 2;
  for (int r = 0; r < kKeep; ++r) {
    const int32_t* row = &k->all[(r < kHalf ? r : r + kHalf) * kDetailKeep];
    std::copy(row, row + kHalf, &k->low[r * kKeep]);
    std::copy(row + kDetailKeep / 2, row + kDetailKeep / 2 + kHalf, &k->low[r * kKeep + kHalf]);
  }
}

// The k-th smallest of the 16-bit values high[0, n): its bits from the
// highest down, each kept 1 when fewer than k + 1 values lie below the
// value so far with that bit set. 16 counts over the whole set, no branch
// on the data.
template <int n>
__attribute__((always_inline)) inline int16_t KthHigh(const int16_t* __restrict high, int k) {
  uint32_t r = 0;  // the answer, in offset binary
  for (int bit = 15; bit >= 0; --bit) {
    const uint32_t c = r | (uint32_t{1} << bit);
    const int16_t t = static_cast<int16_t>(c ^ 0x8000u);
    int16_t below = 0;  // n < 2^15: 16-bit lanes
    for (int i = 0; i < n; ++i) below = static_cast<int16_t>(below + (high[i] < t));
    r = below <= k ? c : r;
  }
  return static_cast<int16_t>(r ^ 0x8000u);
}

#if defined(__x86_64__)
// How many of high[0, n) (16 to a register) lie below t, counted in four
// accumulators, summed across the lanes.
template <int n>
__attribute__((target("avx2"), always_inline)) inline int CountBelowAvx2(const int16_t* high, __m256i t) {
  static_assert(n % 64 == 0, "whole groups of four vectors");
  const __m256i* v = reinterpret_cast<const __m256i*>(high);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (int i = 0; i < n / 16; i += 4) {  // -1 where a value < t
    a0 = _mm256_sub_epi16(a0, _mm256_cmpgt_epi16(t, _mm256_load_si256(v + i)));
    a1 = _mm256_sub_epi16(a1, _mm256_cmpgt_epi16(t, _mm256_load_si256(v + i + 1)));
    a2 = _mm256_sub_epi16(a2, _mm256_cmpgt_epi16(t, _mm256_load_si256(v + i + 2)));
    a3 = _mm256_sub_epi16(a3, _mm256_cmpgt_epi16(t, _mm256_load_si256(v + i + 3)));
  }
  const __m256i sum =
      _mm256_madd_epi16(_mm256_add_epi16(_mm256_add_epi16(a0, a1), _mm256_add_epi16(a2, a3)), _mm256_set1_epi16(1));
  __m128i h = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
  return _mm_cvtsi128_si32(h);
}

// KthHigh of two sets at once, a[0, n) and b[0, m) (each count the same as
// KthHigh's, so the same answers), their counts side by side: each step's
// sums across the lanes wait on each other less.
template <int n, int m>
__attribute__((target("avx2"), always_inline)) inline void KthHighPairAvx2(const int16_t* a, int ka, const int16_t* b,
                                                                           int kb, int16_t* ha, int16_t* hb) {
  uint32_t ra = 0, rb = 0;  // the answers, in offset binary
  for (int bit = 15; bit >= 0; --bit) {
    const uint32_t ca = ra | (uint32_t{1} << bit), cb = rb | (uint32_t{1} << bit);
    const int below_a = CountBelowAvx2<n>(a, _mm256_set1_epi16(static_cast<int16_t>(ca ^ 0x8000u)));
    const int below_b = CountBelowAvx2<m>(b, _mm256_set1_epi16(static_cast<int16_t>(cb ^ 0x8000u)));
    ra = below_a <= ka ? ca : ra;
    rb = below_b <= kb ? cb : rb;
  }
  *ha = static_cast<int16_t>(ra ^ 0x8000u);
  *hb = static_cast<int16_t>(rb ^ 0x8000u);
}
#endif

// The k-th smallest of the keys whose top 16 bits are h, `below` of the
// keys below those: the (k - below)-th of their low 16 bits.
inline int32_t KthWithHigh(int16_t h, uint16_t* low, int m, int below, int k) {
  std::nth_element(low, low + (k - below), low + m);
  return static_cast<int32_t>((static_cast<uint32_t>(static_cast<uint16_t>(h)) << 16) | low[k - below]);
}

#if defined(__x86_64__)
// KthKey's first step with AVX2: the keys' top bits packed two registers to
// one (in another order: a count does not depend on it).
template <int n>
__attribute__((target("avx2"), always_inline)) inline void PackHighAvx2(const int32_t* keys, int16_t* high) {
  const __m256i* key = reinterpret_cast<const __m256i*>(keys);
  for (int g = 0; g < n / 16; ++g) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(high) + g,
                       _mm256_packs_epi32(_mm256_srai_epi32(_mm256_load_si256(key + 2 * g), 16),
                                          _mm256_srai_epi32(_mm256_load_si256(key + 2 * g + 1), 16)));
  }
}

// KthKey's second step with AVX2: the keys with top bits h picked by 8-lane
// compares to a movemask.
template <int n>
__attribute__((target("avx2"), always_inline)) inline int32_t PickAvx2(const int32_t* keys, int16_t h, int k) {
  const __m256i* key = reinterpret_cast<const __m256i*>(keys);
  const __m256i hv = _mm256_set1_epi32(h);
  uint16_t low[n];
  int m = 0, below = 0;
  for (int g = 0; g < n / 8; ++g) {
    const __m256i top = _mm256_srai_epi32(_mm256_load_si256(key + g), 16);
    below += __builtin_popcount(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(hv, top))));
    for (uint32_t eq = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(top, hv))); eq != 0; eq &= eq - 1) {
      low[m++] = static_cast<uint16_t>(keys[8 * g + __builtin_ctz(eq)]);  // few: mostly no turn
    }
  }
  return KthWithHigh(h, low, m, below, k);
}

// KthKey of two sets of keys, a[0, n) (the ka-th) and b[0, m) (the kb-th),
// with AVX2, their counts side by side.
template <int n, int m>
__attribute__((target("avx2"))) void KthKeyPairAvx2(const int32_t* a, int ka, const int32_t* b, int kb, int32_t* out_a,
                                                    int32_t* out_b) {
  alignas(32) int16_t high_a[n], high_b[m];
  PackHighAvx2<n>(a, high_a);
  PackHighAvx2<m>(b, high_b);
  int16_t ha, hb;
  KthHighPairAvx2<n, m>(high_a, ka, high_b, kb, &ha, &hb);
  *out_a = PickAvx2<n>(a, ha, ka);
  *out_b = PickAvx2<m>(b, hb, kb);
}
#endif

// The k-th smallest of keys[0, n) (n a multiple of 64), exactly, in two
// steps: the k-th smallest h of the keys' top 16 bits (KthHigh: half the
// counts of 32-bit keys, twice the keys to a register), then, of the keys
// with top bits h (usually one or a few), the (k - those below h)-th
// smallest of their low 16 bits.
template <int n>
__attribute__((always_inline)) inline int32_t KthKey(const int32_t* __restrict keys, int k) {
  alignas(32) int16_t high[n];
  for (int i = 0; i < n; ++i) high[i] = static_cast<int16_t>(keys[i] >> 16);
  const int16_t h = KthHigh<n>(high, k);
  int below = 0;
  for (int i = 0; i < n; ++i) below += high[i] < h;
  uint16_t low[n];
  int m = 0;
  for (int i = 0; i < n; ++i) {  // few are equal: the branch is mostly not taken
    if (high[i] == h) low[m++] = static_cast<uint16_t>(keys[i]);
  }
  return KthWithHigh(h, low, m, below, k);
}

#if defined(__x86_64__)
// Above's masks, 8 compares to a movemask at a time.
template <int n>
__attribute__((target("avx2"))) void AboveAvx2(const int32_t* keys, int32_t median, uint8_t* mask) {
  const __m256i m = _mm256_set1_epi32(median);
  const __m256i* key = reinterpret_cast<const __m256i*>(keys);
  for (int g = 0; g < n / 8; ++g) {
    mask[g] = static_cast<uint8_t>(
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_load_si256(key + g), m))));
  }
}
#endif

// mask[g] bit j set for each key 8 g + j of keys[0, n) above `median`.
template <int n, bool kAvx2>
__attribute__((always_inline)) inline void Above(const int32_t* __restrict keys, int32_t median, uint8_t* mask) {
#if defined(__x86_64__)
  if constexpr (kAvx2) {
    AboveAvx2<n>(keys, median, mask);
    return;
  }
#endif
  for (int g = 0; g < n / 8; ++g) {  // no branch on the data: half of them would be mispredicted
    uint32_t bits = 0;
    for (int j = 0; j < 8; ++j) bits |= static_cast<uint32_t>(keys[8 * g + j] > median) << j;
    mask[g] = static_cast<uint8_t>(bits);
  }
}

// Bits 0..7 of x at the even bits 0..14.
constexpr uint32_t Spread(uint32_t x) {
  x = (x | x << 4) & 0x0F0Fu;
  x = (x | x << 2) & 0x3333u;
  return (x | x << 1) & 0x5555u;
}

// The bits of both hashes from `k` (KeysOf): bit keep * v + u is 1 when
// coefficient (u, v) is above the median of the keep * keep - 1 others than
// DC. A slot row's bits, slots in frequency order 0, 2, ..., 1, 3, ...,
// interleave to frequency order.
template <bool kAvx2>
__attribute__((always_inline)) inline uint64_t PhashBits(const Keys& k, int32_t median) {
  uint8_t mask[kKeep];
  Above<kKeep * kKeep, kAvx2>(k.low, median, mask);
  uint64_t bits = 0;
  for (int r = 0; r < kKeep; ++r) {
    const int v = r < kKeep / 2 ? 2 * r : 2 * (r - kKeep / 2) + 1;
    bits |= static_cast<uint64_t>(Spread(mask[r] & 0xFu) | Spread(mask[r] >> 4u) << 1) << (kKeep * v);
  }
  return bits & ~uint64_t{1};
}
template <bool kAvx2>
__attribute__((always_inline)) inline void DetailBits(const Keys& k, int32_t median, DetailHash* detail) {
  uint8_t mask[kDetailKeep * 2];
  Above<kDetailKeep * kDetailKeep, kAvx2>(k.all, median, mask);
  DetailHash words{};
  for (int sv = 0; sv < kDetailKeep; ++sv) {
    const int v = FrequencyOfSlot(sv);
    words[v / 4] |= static_cast<uint64_t>(Spread(mask[2 * sv]) | Spread(mask[2 * sv + 1]) << 1)
                    << (kDetailKeep * (v % 4));
  }
  words[0] &= ~uint64_t{1};
  *detail = words;
}

}  // namespace libshard::image::internal

#endif  // LIBSHARD_SRC_IMAGE_PERCEPTUAL_HASH_BITS_H_
