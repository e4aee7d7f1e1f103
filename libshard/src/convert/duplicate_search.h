// The leak check's batch search (duplicates.h, FindDuplicates): the near
// pairs among fingerprints, band by band over flat sorted tables.
#ifndef LIBSHARD_SRC_CONVERT_DUPLICATE_SEARCH_H_
#define LIBSHARD_SRC_CONVERT_DUPLICATE_SEARCH_H_

#include <cstdint>
#include <vector>

#include "libshard/convert/duplicates.h"

namespace libshard::convert {

struct NearPair {
  uint32_t a = 0, b = 0;  // positions in the fingerprints, a < b
  int distance = 0;       // NearDistance
};

// Calls each(v) for the values v that differ from `value` (a `bits`-bit
// number) in 1..left more bits, all above bit `from`, each once.
template <typename F>
void FlipMore(uint32_t value, int bits, int left, int from, const F& each) {
  for (int bit = from; bit < bits; ++bit) {
    const uint32_t v = value ^ (uint32_t{1} << bit);
    each(v);
    if (left > 1) FlipMore(v, bits, left - 1, bit + 1, each);
  }
}

// The values within `radius` bits of `value`, itself first, each once.
template <typename F>
void ForEachWithin(uint32_t value, int bits, int radius, const F& each) {
  each(value);
  if (radius > 0) FlipMore(value, bits, radius, 0, each);
}

// sum_{k <= r} C(b, k): the values a query looks up in one band.
double Probes(int bits, int radius);

// The bits of band b of m (64 / m, the first 64 % m one more) and its
// radius: the radii add up to max_distance + 1 - m (none below 0; the extra
// ones on the last, narrowest bands), so two hashes within max_distance
// differ in at most r_b bits of some band b, since sum (r_b + 1) >
// max_distance (pigeonhole).
inline int BandBits(int bands, int band) { return 64 / bands + (band < 64 % bands ? 1 : 0); }
inline int BandRadius(int max_distance, int bands, int band) {
  const int extra = max_distance + 1 - bands;
  if (extra <= 0) return 0;
  return extra / bands + (band >= bands - extra % bands ? 1 : 0);
}

// Every pair of `prints` (none null) with NearDistance(a, b, max_distance)
// <= max_distance, each once, sorted by (a, b); the same for every band
// count (3..16, clamped), thread count and `vector` (false: one compare at
// a time, as on a CPU without AVX2). Runs on TBB's threads.
std::vector<NearPair> SearchNearPairs(const std::vector<const ImageFingerprint*>& prints, int max_distance, int bands,
                                      bool vector);

}  // namespace libshard::convert

#endif  // LIBSHARD_SRC_CONVERT_DUPLICATE_SEARCH_H_
