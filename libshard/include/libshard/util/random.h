// The one random generator of libshard: splitmix64 with Lemire's unbiased
// bounded draws. Its outputs define the shard plan (convert/shard_plan.h),
// the sample order (reader/sample_order.h) and the loader's augmentation, so
// they are the same numbers on every platform and in every release
// (tests/util/random_test.cc pins them); never std:: distributions.
//
//   SplitMix64 rng(MixSeed(seed, epoch, sample));
//   uint64_t i = rng.Below(n);        // uniform in [0, n)
//   double u = rng.Uniform();         // uniform in [0, 1)
//
// Thread-safety: a SplitMix64 is a plain value; one per thread.
#ifndef LIBSHARD_UTIL_RANDOM_H_
#define LIBSHARD_UTIL_RANDOM_H_

#include <cstdint>

namespace libshard::util {

// splitmix64 (Steele, Lea, Flood 2014): state += 0x9E3779B97F4A7C15, then
// the output mix of the new state.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t state) : state_(state) {}
  uint64_t Next();
  // Uniform in [0, bound) for bound > 0: Lemire's multiply-high of a full
  // 64-bit draw, rejecting the biased low range.
  uint64_t Below(uint64_t bound);
  // Uniform in [0, bound) for bound > 0 from the draw's high 32 bits
  // (Lemire's 32-bit variant). The shard plan's permutation uses this one.
  uint32_t Below32(uint32_t bound);
  // Uniform in [0, 1): the draw's high 53 bits / 2^53.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

// A 64-bit mix of (seed, a, b): splitmix64 over the three. Derives
// per-epoch and per-sample streams that do not depend on threads.
uint64_t MixSeed(uint64_t seed, uint64_t a, uint64_t b);

}  // namespace libshard::util

#endif  // LIBSHARD_UTIL_RANDOM_H_
