#include "libshard/util/random.h"

namespace libshard::util {

uint64_t SplitMix64::Next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t SplitMix64::Below(uint64_t bound) {
  unsigned __int128 m = static_cast<unsigned __int128>(Next()) * bound;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < bound) {
    const uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(Next()) * bound;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

uint32_t SplitMix64::Below32(uint32_t bound) {
  uint64_t m = (Next() >> 32) * bound;
  uint32_t low = static_cast<uint32_t>(m);
  if (low < bound) {
    const uint32_t threshold = static_cast<uint32_t>(-bound) % bound;
    while (low < threshold) {
      m = (Next() >> 32) * bound;
      low = static_cast<uint32_t>(m);
    }
  }
  return static_cast<uint32_t>(m >> 32);
}

uint64_t MixSeed(uint64_t seed, uint64_t a, uint64_t b) {
  SplitMix64 s(seed);
  const uint64_t h1 = s.Next();
  SplitMix64 t(h1 ^ a);
  const uint64_t h2 = t.Next();
  SplitMix64 u(h2 ^ b);
  return u.Next();
}

}  // namespace libshard::util
