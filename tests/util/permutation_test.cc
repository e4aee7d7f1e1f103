#include "libshard/util/permutation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "libshard/util/random.h"

namespace libshard::util {
namespace {

std::vector<uint64_t> All(const RandomPermutation& p) {
  std::vector<uint64_t> v;
  for (uint64_t i = 0; i < p.size(); ++i) v.push_back(p(i));
  return v;
}

TEST(RandomPermutationTest, EverySampleOnceAtAnySize) {
  for (uint64_t n : {0, 1, 2, 3, 4, 5, 16, 17, 255, 1000, 4097, (1 << 16) + 3}) {
    for (uint64_t key : {0ull, 1ull, 0xDEADBEEFull}) {
      RandomPermutation p(n, key);
      ASSERT_EQ(p.size(), n);
      std::vector<uint64_t> v = All(p);
      for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(p.Inverse(v[i]), i) << "n " << n << " key " << key;
      std::sort(v.begin(), v.end());
      for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(v[i], i) << "n " << n << " key " << key;  // no sample twice
    }
  }
}

TEST(RandomPermutationTest, HugeDomainsWithoutMemory) {
  // 10^12 + 7 and close to 2^64: points evaluate and invert without a table.
  for (uint64_t n : {uint64_t{1000000000007}, ~uint64_t{0} - 58}) {
    RandomPermutation p(n, 42);
    for (uint64_t i = 0; i < 2000; ++i) {
      const uint64_t at = i * (n / 2000);
      const uint64_t y = p(at);
      ASSERT_LT(y, n);
      ASSERT_EQ(p.Inverse(y), at);
    }
  }
}

TEST(RandomPermutationTest, StableAcrossReleases) {
  // Saved training positions depend on these values: they never change.
  RandomPermutation p(10, 7);
  EXPECT_EQ(All(p), (std::vector<uint64_t>{6, 8, 4, 5, 7, 3, 1, 9, 2, 0}));
  RandomPermutation q(1000000, MixSeed(42, 3, 0x5EED));
  EXPECT_EQ(q(0), 819179u);
  EXPECT_EQ(q(999999), 215203u);
}

TEST(RandomPermutationTest, EachPositionIsUniformOverKeys) {
  // Chi-square of (position, value) counts over 16,000 keys, n = 8: 64 cells
  // of 2,000 expected; 49 degrees of freedom, so a sound permutation stays
  // far below 110 (p < 1e-5), and a biased one (identity, a rotation, a
  // weak round function) lands in the thousands.
  constexpr uint64_t n = 8, keys = 16000;
  std::vector<std::vector<double>> count(n, std::vector<double>(n, 0));
  for (uint64_t k = 0; k < keys; ++k) {
    RandomPermutation p(n, MixSeed(k, 1, 2));
    for (uint64_t i = 0; i < n; ++i) count[i][p(i)] += 1;
  }
  const double expected = static_cast<double>(keys) / n;
  double chi2 = 0;
  for (const auto& row : count) {
    for (double c : row) chi2 += (c - expected) * (c - expected) / expected;
  }
  EXPECT_LT(chi2, 110.0);
}

TEST(RandomPermutationTest, NeighboursAreUncorrelated) {
  // One key, n = 10^5: the order keeps nothing of the input order --
  // Spearman's rho of (i, p(i)) and of (p(i), p(i + 1)) near 0 (|rho| <
  // 0.02: 6 standard errors), and the mean displacement near n / 3.
  constexpr uint64_t n = 100000;
  RandomPermutation p(n, 99);
  const double mean = (n - 1) / 2.0, var = (static_cast<double>(n) * n - 1) / 12.0;
  double rho_in = 0, rho_next = 0, displacement = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const double y = static_cast<double>(p(i));
    rho_in += (static_cast<double>(i) - mean) * (y - mean);
    if (i + 1 < n) rho_next += (y - mean) * (static_cast<double>(p(i + 1)) - mean);
    displacement += std::fabs(y - static_cast<double>(i));
  }
  EXPECT_LT(std::fabs(rho_in / (n * var)), 0.02);
  EXPECT_LT(std::fabs(rho_next / (n * var)), 0.02);
  EXPECT_NEAR(displacement / n / n, 1.0 / 3, 0.01);
}

TEST(RandomPermutationTest, KeysGiveDifferentOrders) {
  EXPECT_NE(All(RandomPermutation(1000, 1)), All(RandomPermutation(1000, 2)));
  EXPECT_EQ(All(RandomPermutation(1000, 1)), All(RandomPermutation(1000, 1)));
}

}  // namespace
}  // namespace libshard::util
