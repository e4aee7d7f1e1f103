// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) and TensorFlow's CRC
// mask, as used by the TFRecord framing.
//
//   uint32_t crc = libshard::crc32c::Value(data, n);
//   uint32_t stored = libshard::crc32c::Mask(crc);      // what TFRecord stores
//
// Extend() picks the fastest implementation this CPU supports once, at first
// use: on x86-64 with AVX-512 and VPCLMULQDQ, carry-less folding of 256 bytes
// per step (faster than one core reads the page cache); else SSE4.2 `crc32`
// over three independent streams (hiding the instruction's latency)
// recombined with PCLMULQDQ; else a portable slice-by-8 table. All
// implementations give identical results; the named ones are exposed so tests
// and benchmarks can run each.
//
// Thread-safety: all functions are pure and may be called concurrently.
#ifndef LIBSHARD_CRC32C_H_
#define LIBSHARD_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace libshard::crc32c {

// Returns the CRC-32C of data[0, n) appended to a message whose CRC-32C is
// `crc` (0 for an empty message).
uint32_t Extend(uint32_t crc, const void* data, size_t n);

// The CRC-32C of data[0, n).
inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }

// The CRC-32C of A followed by B, from crc_a = Value(A), crc_b = Value(B)
// and B's length (zlib's crc32_combine method: crc_a times x^(8 len_b) mod P,
// plus crc_b). Lets parts of one object be checked as they arrive, in any
// order, and then as a whole. O(log len_b).
uint32_t Combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

// TensorFlow's masking: CRCs of data that itself holds CRCs are weak, so
// TFRecord stores the CRC rotated right by 15 bits plus a constant.
constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

// The individual implementations, for tests and benchmarks.
enum class Impl { kPortable, kSse42, kAvx512 };
const char* ImplName(Impl impl);
// Whether `impl` can run on this CPU.
bool ImplAvailable(Impl impl);
// The implementation Extend() uses.
Impl ActiveImpl();
// Extend() with a chosen implementation; `impl` must be available.
uint32_t ExtendWith(Impl impl, uint32_t crc, const void* data, size_t n);

}  // namespace libshard::crc32c

#endif  // LIBSHARD_CRC32C_H_
