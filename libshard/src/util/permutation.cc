#include "libshard/util/permutation.h"

#include "libshard/util/random.h"

namespace libshard::util {
namespace {

// The splitmix64 output mix (random.cc's SplitMix64::Next without the step).
uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

RandomPermutation::RandomPermutation(uint64_t n, uint64_t key) : n_(n) {
  // The smallest h with 2^(2h) >= n, at least 1 (so n = 2..4 still shuffle).
  half_bits_ = 1;
  while (half_bits_ < 32 && (uint64_t{1} << (2 * half_bits_)) < n) ++half_bits_;
  half_mask_ = half_bits_ >= 32 ? 0xFFFFFFFFull : (uint64_t{1} << half_bits_) - 1;
  SplitMix64 rng(key);
  for (uint64_t& k : keys_) k = rng.Next();
}

uint64_t RandomPermutation::Round(uint64_t half, int round) const { return Mix(half ^ keys_[round]) & half_mask_; }

uint64_t RandomPermutation::Encrypt(uint64_t x) const {
  uint64_t left = (x >> half_bits_) & half_mask_, right = x & half_mask_;
  for (int r = 0; r < kRounds; ++r) {
    const uint64_t next = left ^ Round(right, r);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

uint64_t RandomPermutation::Decrypt(uint64_t x) const {
  uint64_t left = (x >> half_bits_) & half_mask_, right = x & half_mask_;
  for (int r = kRounds - 1; r >= 0; --r) {
    const uint64_t prev = right ^ Round(left, r);
    right = left;
    left = prev;
  }
  return (left << half_bits_) | right;
}

uint64_t RandomPermutation::operator()(uint64_t i) const {
  if (n_ < 2) return i;
  uint64_t y = Encrypt(i);
  while (y >= n_) y = Encrypt(y);  // cycle walking: ends below n (header)
  return y;
}

uint64_t RandomPermutation::Inverse(uint64_t x) const {
  if (n_ < 2) return x;
  uint64_t y = Decrypt(x);
  while (y >= n_) y = Decrypt(y);
  return y;
}

}  // namespace libshard::util
