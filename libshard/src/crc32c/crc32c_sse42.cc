// CRC-32C with the SSE4.2 `crc32` instruction. Compiled with -msse4.2 -mpclmul
// in its own object library and reached only after a run-time CPU check.
//
// The instruction has a latency of 3 cycles but a throughput of 1 per cycle,
// so one dependency chain runs at a third of the possible speed. Long buffers
// are therefore cut into kStreams blocks of B bytes hashed as independent
// chains, which are then recombined:
//   crc(A || B || C) = shift(crc_A, 2B) ^ shift(crc_B, B) ^ crc_C
// where crc_B and crc_C start from a zero register and shift(c, n) = c * x^(8n)
// mod P. The shift is one carry-less multiply by the constant x^(8n-33) mod P
// followed by a `crc32` of the 64-bit product (which multiplies by x^32 and
// reduces mod P); the extra x^1 comes from the reflected bit order.
#include <cstring>

#include "crc32c/crc32c_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <nmmintrin.h>
#include <wmmintrin.h>
#endif

namespace libshard::crc32c::internal {

#if defined(__x86_64__)

bool CpuHasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul");
  return has;
}

namespace {

// Multiplier constants for recombining three streams of `block` bytes.
struct ShiftConstants {
  explicit ShiftConstants(size_t block) : by_one(XPowModP(8 * block - 33)), by_two(XPowModP(16 * block - 33)) {}
  uint32_t by_one;  // shifts a CRC over `block` zero bytes
  uint32_t by_two;  // shifts a CRC over 2 * `block` zero bytes
};

inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline uint64_t ClMul(uint32_t a, uint32_t b) {
  __m128i prod =
      _mm_clmulepi64_si128(_mm_cvtsi32_si128(static_cast<int>(a)), _mm_cvtsi32_si128(static_cast<int>(b)), 0x00);
  return static_cast<uint64_t>(_mm_cvtsi128_si64(prod));
}

// How far ahead of each stream to prefetch (prefetches past the block's end
// are harmless hints).
constexpr size_t kPrefetchDistance = 1024;

// Hashes three consecutive blocks of B bytes as independent chains and
// recombines them into `crc` (the running register, not finalized).
template <size_t B>
inline uint64_t ThreeStreams(uint64_t crc, const uint8_t* p, const ShiftConstants& k) {
  uint64_t c0 = crc, c1 = 0, c2 = 0;
  const uint8_t* p1 = p + B;
  const uint8_t* p2 = p + 2 * B;
  static_assert(B % 64 == 0, "blocks are whole cache lines");
  for (size_t i = 0; i < B; i += 64) {
    // Three streams B bytes apart defeat the hardware prefetcher when the
    // data comes from DRAM; fetch each stream's next lines explicitly.
    _mm_prefetch(reinterpret_cast<const char*>(p + i + kPrefetchDistance), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(p1 + i + kPrefetchDistance), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(p2 + i + kPrefetchDistance), _MM_HINT_T0);
    for (size_t j = i; j < i + 64; j += 8) {
      c0 = _mm_crc32_u64(c0, Load64(p + j));
      c1 = _mm_crc32_u64(c1, Load64(p1 + j));
      c2 = _mm_crc32_u64(c2, Load64(p2 + j));
    }
  }
  uint64_t shifted = ClMul(static_cast<uint32_t>(c0), k.by_two) ^ ClMul(static_cast<uint32_t>(c1), k.by_one);
  return _mm_crc32_u64(0, shifted) ^ c2;
}

constexpr size_t kLongBlock = 4096;
constexpr size_t kShortBlock = 256;

}  // namespace

uint32_t ExtendSse42(uint32_t crc, const uint8_t* p, size_t n) {
  static const ShiftConstants kLong(kLongBlock);
  static const ShiftConstants kShort(kShortBlock);

  uint64_t c = static_cast<uint32_t>(~crc);
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7u) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  while (n >= 3 * kLongBlock) {
    c = ThreeStreams<kLongBlock>(c, p, kLong);
    p += 3 * kLongBlock;
    n -= 3 * kLongBlock;
  }
  while (n >= 3 * kShortBlock) {
    c = ThreeStreams<kShortBlock>(c, p, kShort);
    p += 3 * kShortBlock;
    n -= 3 * kShortBlock;
  }
  while (n >= 8) {
    c = _mm_crc32_u64(c, Load64(p));
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  return ~static_cast<uint32_t>(c);
}

#else  // !__x86_64__

bool CpuHasSse42() { return false; }
uint32_t ExtendSse42(uint32_t crc, const uint8_t* p, size_t n) { return ExtendPortable(crc, p, n); }

#endif

}  // namespace libshard::crc32c::internal
