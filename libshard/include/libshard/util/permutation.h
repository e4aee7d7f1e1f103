// RandomPermutation: a seeded bijection of [0, n), evaluated at one point in
// O(1) memory and about a dozen multiplications -- an epoch's shuffled order
// of 10^8 samples without holding 10^8 numbers (reader/sample_order.h).
//
//   RandomPermutation p(n, MixSeed(seed, epoch, 0x5EED));
//   uint64_t sample = p(position);        // position < n; distinct for distinct positions
//   uint64_t back = p.Inverse(sample);    // == position
//
// The construction: an 8-round balanced Feistel network over the smallest
// even number of bits 2h with 2^(2h) >= n (round function: the splitmix64
// finaliser of the half xor a per-round key drawn from `key`), with cycle
// walking -- a value that lands at or past n is encrypted again until it is
// below n. The walk ends (the network is a permutation of [0, 2^(2h)), so
// the cycle through a value below n comes back below n) after fewer than 4
// steps on average, since 2^(2h) < 4n; the longest walk is bounded by the
// cycle's length, itself at most 2^(2h) < 4n. Every value of (n, key, i) is
// the same on every platform and release (tests/util/permutation_test.cc
// pins some), since saved training positions depend on them.
//
// Randomness: a Feistel network with 8 rounds of a good mixer is
// indistinguishable from a random permutation for these uses (no sample
// twice, every sample once, each position's sample uniform over keys; the
// tests check the three), not a cryptographic guarantee.
//
// Thread-safety: a value type; const methods are safe from any thread.
#ifndef LIBSHARD_UTIL_PERMUTATION_H_
#define LIBSHARD_UTIL_PERMUTATION_H_

#include <cstdint>

namespace libshard::util {

class RandomPermutation {
 public:
  // The identity of the empty domain.
  RandomPermutation() = default;
  // A permutation of [0, n) drawn from `key` (any n, 0 and 1 included).
  RandomPermutation(uint64_t n, uint64_t key);

  uint64_t size() const { return n_; }
  // The image of i, for i < size() (else: unspecified, but below 2^64).
  uint64_t operator()(uint64_t i) const;
  // The i with (*this)(i) == x, for x < size().
  uint64_t Inverse(uint64_t x) const;

  static constexpr int kRounds = 8;

 private:
  uint64_t Round(uint64_t half, int round) const;
  uint64_t Encrypt(uint64_t x) const;
  uint64_t Decrypt(uint64_t x) const;

  uint64_t n_ = 0;
  int half_bits_ = 0;
  uint64_t half_mask_ = 0;
  uint64_t keys_[kRounds] = {};
};

}  // namespace libshard::util

#endif  // LIBSHARD_UTIL_PERMUTATION_H_
