#include "libshard/crc32c.h"

#include <array>
#include <cstring>

#include "crc32c/crc32c_internal.h"

namespace libshard::crc32c {
namespace internal {
namespace {

// Slice-by-8 tables: kTables[k][b] is the CRC register after byte b followed
// by k zero bytes.
struct Tables {
  uint32_t t[8][256];
};

constexpr Tables MakeTables() {
  Tables tables{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1u) ? kPolyReflected : 0u);
    tables.t[0][b] = c;
  }
  for (uint32_t b = 0; b < 256; ++b) {
    for (int k = 1; k < 8; ++k) {
      uint32_t prev = tables.t[k - 1][b];
      tables.t[k][b] = (prev >> 8) ^ tables.t[0][prev & 0xffu];
    }
  }
  return tables;
}

constexpr Tables kTables = MakeTables();

inline uint32_t LoadLE32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

}  // namespace

uint32_t ExtendPortable(uint32_t crc, const uint8_t* p, size_t n) {
  const auto& t = kTables.t;
  uint32_t c = ~crc;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7u) != 0) {
    c = (c >> 8) ^ t[0][(c ^ *p++) & 0xffu];
    --n;
  }
  while (n >= 8) {
    uint32_t lo = LoadLE32(p) ^ c;
    uint32_t hi = LoadLE32(p + 4);
    c = t[7][lo & 0xffu] ^ t[6][(lo >> 8) & 0xffu] ^ t[5][(lo >> 16) & 0xffu] ^ t[4][lo >> 24] ^ t[3][hi & 0xffu] ^
        t[2][(hi >> 8) & 0xffu] ^ t[1][(hi >> 16) & 0xffu] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = (c >> 8) ^ t[0][(c ^ *p++) & 0xffu];
    --n;
  }
  return ~c;
}

uint32_t XPowModP(uint64_t n) {
  uint32_t r = 0x80000000u;  // x^0
  for (uint64_t i = 0; i < n; ++i) r = (r >> 1) ^ ((r & 1u) ? kPolyReflected : 0u);
  return r;
}

// a * b mod P, both in the reflected form (zlib's multmodp).
uint32_t MultModP(uint32_t a, uint32_t b) {
  uint32_t m = 0x80000000u, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1u) ? (b >> 1) ^ kPolyReflected : b >> 1;
  }
  return p;
}

}  // namespace internal

uint32_t Combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
  // x^(8 len_b) mod P by squaring; the pre- and post-inversion of the CRC
  // cancel out of the sum (zlib's crc32_combine_op).
  uint32_t shift = 0x80000000u;             // x^0
  uint32_t square = internal::XPowModP(8);  // x^(8 * 2^k)
  for (uint64_t n = len_b; n != 0; n >>= 1) {
    if (n & 1u) shift = internal::MultModP(shift, square);
    square = internal::MultModP(square, square);
  }
  return internal::MultModP(shift, crc_a) ^ crc_b;
}

const char* ImplName(Impl impl) {
  switch (impl) {
    case Impl::kPortable:
      return "portable";
    case Impl::kSse42:
      return "sse4.2";
    case Impl::kAvx512:
      return "avx512-vpclmulqdq";
  }
  return "unknown";
}

bool ImplAvailable(Impl impl) {
  switch (impl) {
    case Impl::kPortable:
      return true;
    case Impl::kSse42:
      return internal::CpuHasSse42();
    case Impl::kAvx512:
      return internal::CpuHasAvx512Clmul();
  }
  return false;
}

Impl ActiveImpl() {
  static const Impl active = ImplAvailable(Impl::kAvx512)  ? Impl::kAvx512
                             : ImplAvailable(Impl::kSse42) ? Impl::kSse42
                                                           : Impl::kPortable;
  return active;
}

uint32_t ExtendWith(Impl impl, uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  switch (impl) {
    case Impl::kAvx512:
      return internal::ExtendAvx512(crc, p, n);
    case Impl::kSse42:
      return internal::ExtendSse42(crc, p, n);
    case Impl::kPortable:
      break;
  }
  return internal::ExtendPortable(crc, p, n);
}

uint32_t Extend(uint32_t crc, const void* data, size_t n) {
  static const auto fn = ActiveImpl() == Impl::kAvx512  ? &internal::ExtendAvx512
                         : ActiveImpl() == Impl::kSse42 ? &internal::ExtendSse42
                                                        : &internal::ExtendPortable;
  return fn(crc, static_cast<const uint8_t*>(data), n);
}

}  // namespace libshard::crc32c
