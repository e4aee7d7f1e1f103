// CRC-32C by carry-less folding with 512-bit VPCLMULQDQ. Compiled with
// -mavx512f -mvpclmulqdq in its own object library and reached only after a
// run-time CPU check.
//
// The `crc32` instruction retires 8 bytes per cycle at best (about 30 GB/s
// here), below what one core can read from the page cache. Folding instead
// keeps the message as 128-bit lanes and moves each lane D bytes forward with
// two carry-less multiplies (the method of Gopal et al., "Fast CRC
// Computation for Generic Polynomials Using PCLMULQDQ", Intel 2009):
//
// A lane holding bytes b0..b15 (loaded little-endian, so bit k is the k-th
// message bit) is the polynomial H*x^64 + L, where the low quadword holds H
// and the high quadword L. Moving it D bytes forward multiplies it by x^(8D):
//   H*x^(64+8D) + L*x^(8D)  ==  clmul(H, k_hi) ^ clmul(L, k_lo)   (mod P)
// with k_hi = x^(64+8D-33) mod P and k_lo = x^(8D-33) mod P in 32-bit reflected
// form: a 32-bit reflected constant in a 64-bit operand carries an extra x^32,
// and the reflected product an extra x^1. The result (< 128 bits) is XORed
// into the lane D bytes later. The initial CRC register is XORed into the
// first four bytes, and the last lane plus the tail (< 16 bytes) are hashed
// with the `crc32` instruction from a zero register, which gives the same
// remainder as the whole message.
#include "crc32c/crc32c_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace libshard::crc32c::internal {

#if defined(__x86_64__)

bool CpuHasAvx512Clmul() {
  static const bool has = CpuHasSse42() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq");
  return has;
}

namespace {

// The two multipliers that move a 128-bit lane `bytes` forward: for H (the
// low quadword) and for L (the high quadword).
long long ForH(size_t bytes) { return static_cast<long long>(XPowModP(64 + 8 * bytes - 33)); }
long long ForL(size_t bytes) { return static_cast<long long>(XPowModP(8 * bytes - 33)); }

// The same constants in every lane (built with set, not broadcast: GCC 12's
// broadcast intrinsics trip -Wmaybe-uninitialized).
__m512i FoldConstants512(size_t bytes) {
  const long long h = ForH(bytes), l = ForL(bytes);
  return _mm512_set_epi64(l, h, l, h, l, h, l, h);
}

inline __m512i Fold512(__m512i x, __m512i k, __m512i next) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11), next,
                                   0x96);  // a ^ b ^ c
}

inline __m128i Fold128(__m128i x, __m128i k, __m128i next) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

struct Constants {
  Constants() : by256(FoldConstants512(256)), by64(FoldConstants512(64)), by16(_mm_set_epi64x(ForL(16), ForH(16))) {}
  __m512i by256;
  __m512i by64;
  __m128i by16;
};

// The folds start from four full 512-bit lanes; shorter buffers take the
// three-stream path.
constexpr size_t kMinFoldBytes = 256;

// How far ahead to prefetch. Measured over a 420 MB shard in the page cache:
// none 33, 2 KiB 34, 4 KiB 36 GB/s (one core reads about 40 GB/s).
constexpr size_t kPrefetchDistance = 4096;

}  // namespace

uint32_t ExtendAvx512(uint32_t crc, const uint8_t* p, size_t n) {
  if (n < kMinFoldBytes) return ExtendSse42(crc, p, n);
  static const Constants k;

  __m512i x0 = _mm512_loadu_si512(p);
  __m512i x1 = _mm512_loadu_si512(p + 64);
  __m512i x2 = _mm512_loadu_si512(p + 128);
  __m512i x3 = _mm512_loadu_si512(p + 192);
  x0 = _mm512_xor_si512(x0, _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, static_cast<long long>(~crc)));
  p += 256;
  n -= 256;
  // Four independent 256-byte folds per iteration hide the multiply latency.
  while (n >= 256) {
    for (int i = 0; i < 4; ++i) {
      _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchDistance + 64 * i), _MM_HINT_T0);
    }
    x0 = Fold512(x0, k.by256, _mm512_loadu_si512(p));
    x1 = Fold512(x1, k.by256, _mm512_loadu_si512(p + 64));
    x2 = Fold512(x2, k.by256, _mm512_loadu_si512(p + 128));
    x3 = Fold512(x3, k.by256, _mm512_loadu_si512(p + 192));
    p += 256;
    n -= 256;
  }
  __m512i x = Fold512(x0, k.by64, x1);
  x = Fold512(x, k.by64, x2);
  x = Fold512(x, k.by64, x3);
  while (n >= 64) {
    x = Fold512(x, k.by64, _mm512_loadu_si512(p));
    p += 64;
    n -= 64;
  }
  // (Zero-masked extracts: GCC 12's plain ones trip -Wmaybe-uninitialized.)
  __m128i v = _mm512_maskz_extracti32x4_epi32(0xF, x, 0);
  v = Fold128(v, k.by16, _mm512_maskz_extracti32x4_epi32(0xF, x, 1));
  v = Fold128(v, k.by16, _mm512_maskz_extracti32x4_epi32(0xF, x, 2));
  v = Fold128(v, k.by16, _mm512_maskz_extracti32x4_epi32(0xF, x, 3));
  while (n >= 16) {
    v = Fold128(v, k.by16, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    p += 16;
    n -= 16;
  }
  uint64_t c = _mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(v)));
  c = _mm_crc32_u64(c, static_cast<uint64_t>(_mm_extract_epi64(v, 1)));
  // The tail continues from the register (un-finalize for ExtendSse42).
  return ExtendSse42(~static_cast<uint32_t>(c), p, n);
}

#else  // !__x86_64__

bool CpuHasAvx512Clmul() { return false; }
uint32_t ExtendAvx512(uint32_t crc, const uint8_t* p, size_t n) { return ExtendPortable(crc, p, n); }

#endif

}  // namespace libshard::crc32c::internal
