// The leak check's batch search (duplicates.h, FindDuplicates): the near
// pairs among fingerprints, band by band over flat sorted tables.
#ifndef LIBSHARD_SRC_CONVERT_DUPLICATE_SEARCH_H_
#define LIBSHARD_SRC_CONVERT_DUPLICATE_SEARCH_H_

#include <cstdint>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

// The band layout of m bands (BandBits, BandRadius), as both searches use it.
struct BandLayout {
  int bands = 0;
  int shift[kMaxSearchBands] = {}, bits[kMaxSearchBands] = {}, radius[kMaxSearchBands] = {};
  uint32_t Band(uint64_t hash, int band) const {
    return static_cast<uint32_t>((hash >> shift[band]) & ((uint64_t{1} << bits[band]) - 1));
  }
  // Whether the two are within the radius in a band before `band`: the pair
  // was taken there.
  bool TakenBefore(uint64_t a, uint64_t b, int band) const {
    for (int o = 0; o < band; ++o) {
      if (__builtin_popcount(Band(a, o) ^ Band(b, o)) <= radius[o]) return true;
    }
    return false;
  }
};
// `bands` clamped to kMinSearchBands..kMaxSearchBands.
BandLayout MakeBandLayout(int max_distance, int bands);

#if defined(__x86_64__)
// The bits set in each byte of x (AVX2), counted by nibbles (a 16-entry
// table). Inlined into callers built for AVX2 (target "avx2"), which
// dispatch on the CPU.
__attribute__((target("avx2"), always_inline)) inline __m256i ByteBitCounts(__m256i x) {
  const __m256i table =
      _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  return _mm256_add_epi8(_mm256_shuffle_epi8(table, _mm256_and_si256(x, nibble)),
                         _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(x, 4), nibble)));
}

// Four Hamming distances at once (AVX2): bit k of the result is set when
// hashes[k] is within `limit` (each 64-bit lane: the distance) bits of
// `query` (the query in every lane): the XORs' bits counted per byte and
// summed per 64-bit lane.
__attribute__((target("avx2"), always_inline)) inline int WithinMask4(const uint64_t* hashes, __m256i query,
                                                                      __m256i limit) {
  const __m256i x = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(hashes)), query);
  const __m256i bits = _mm256_sad_epu8(ByteBitCounts(x), _mm256_setzero_si256());
  return ~_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(bits, limit))) & 0xf;
}
#endif

// Every pair of `prints` (none null) with NearDistance(a, b, max_distance)
// <= max_distance, each once, sorted by (a, b); the same for every band
// count (3..16, clamped), thread count and `vector` (false: one compare at
// a time, as on a CPU without AVX2). Runs on TBB's threads. At most
// `max_pairs` hits are held (a pair can be hit by several pairs of
// regions): past them the search stops and *cut is set (the pairs found
// so far returned); otherwise *cut is false.
std::vector<NearPair> SearchNearPairs(const std::vector<const ImageFingerprint*>& prints, int max_distance, int bands,
                                      bool vector, size_t max_pairs, bool* cut);
// The same by colour, for nearly plain pictures (IsNearlyPlain; none null):
// every pair whose colours are within kColourLevels a channel (cells of
// kColourLevels + 1 levels, each looked up with its 26 neighbours) and
// NearDistance within max_distance. A plain picture's pairs are all among
// these (NearDistance's plain rule), whatever its hashes. The work is the
// pairs of pictures in neighbouring cells.
std::vector<NearPair> SearchPlainPairs(const std::vector<const ImageFingerprint*>& prints, int max_distance,
                                       size_t max_pairs, bool* cut);

}  // namespace libshard::convert

#endif  // LIBSHARD_SRC_CONVERT_DUPLICATE_SEARCH_H_
