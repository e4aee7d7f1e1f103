// Private: the per-ISA entry points behind crc32c::Extend(). Each takes and
// returns the finalized CRC (the public Extend() contract).
#ifndef LIBSHARD_SRC_CRC32C_CRC32C_INTERNAL_H_
#define LIBSHARD_SRC_CRC32C_CRC32C_INTERNAL_H_

#include <cstddef>
#include <cstdint>

namespace libshard::crc32c::internal {

constexpr uint32_t kPolyReflected = 0x82F63B78u;

uint32_t ExtendPortable(uint32_t crc, const uint8_t* data, size_t n);
// Defined only when built for x86-64; must only be called when the CPU has
// SSE4.2 and PCLMULQDQ.
uint32_t ExtendSse42(uint32_t crc, const uint8_t* data, size_t n);
bool CpuHasSse42();
// Defined only when built for x86-64; must only be called when
// CpuHasAvx512Clmul() (AVX-512F, VPCLMULQDQ and the SSE4.2 path's features).
uint32_t ExtendAvx512(uint32_t crc, const uint8_t* data, size_t n);
bool CpuHasAvx512Clmul();

// x^n mod P in the reflected 32-bit form (bit i holds the coefficient of
// x^(31-i)): the multipliers that shift a CRC over zero bytes.
uint32_t XPowModP(uint64_t n);
// a * b mod P, both in that form.
uint32_t MultModP(uint32_t a, uint32_t b);

}  // namespace libshard::crc32c::internal

#endif  // LIBSHARD_SRC_CRC32C_CRC32C_INTERNAL_H_
