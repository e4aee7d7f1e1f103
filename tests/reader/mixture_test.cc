#include "libshard/reader/mixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "libshard/reader/sample_order.h"

namespace libshard::reader {
namespace {

OrderOptions Shuffled(uint64_t seed) {
  OrderOptions o;
  o.kind = OrderKind::kShuffle;
  o.seed = seed;
  return o;
}

// The largest |picks of s in a window of L - w_s * L| over every window of
// every length up to max_len (prefix sums: O(n * max_len) per source).
double WorstWindowDeviation(const std::vector<uint32_t>& schedule, const std::vector<double>& w, size_t max_len) {
  double worst = 0;
  for (size_t s = 0; s < w.size(); ++s) {
    std::vector<uint64_t> prefix(schedule.size() + 1, 0);
    for (size_t i = 0; i < schedule.size(); ++i) prefix[i + 1] = prefix[i] + (schedule[i] == s ? 1 : 0);
    for (size_t len = 1; len <= max_len && len <= schedule.size(); ++len) {
      for (size_t a = 0; a + len <= schedule.size(); ++a) {
        const double got = static_cast<double>(prefix[a + len] - prefix[a]);
        worst = std::max(worst, std::fabs(got - w[s] * static_cast<double>(len)));
      }
    }
  }
  return worst;
}

TEST(MixtureOrderTest, EveryWindowFollowsTheWeights) {
  const std::vector<std::vector<double>> cases = {
      {0.6, 0.3, 0.1}, {0.7, 0.3}, {1, 1, 1, 1, 1}, {0.97, 0.02, 0.01}, {0.5, 0.25, 0.125, 0.125}};
  for (const auto& weights : cases) {
    auto mix = MixtureOrder::Create(std::vector<uint64_t>(weights.size(), 500), weights);
    ASSERT_TRUE(mix.ok()) << mix.status();
    for (uint64_t seed : {0, 1, 99}) {
      for (uint64_t epoch : {0, 3}) {
        const std::vector<uint32_t> schedule = (*mix)->Schedule(epoch, Shuffled(seed));
        ASSERT_EQ(schedule.size(), 500 * weights.size());
        const double worst = WorstWindowDeviation(schedule, (*mix)->weights(), 200);
        EXPECT_LT(worst, 2.0) << "weights[0] " << weights[0] << " seed " << seed << " epoch " << epoch;
      }
    }
  }
}

TEST(MixtureOrderTest, ShortRunsAreOnTarget) {
  // 60/30/10: every 10 consecutive samples hold 5..7, 2..4 and 0..2 of each.
  auto mix = MixtureOrder::Create({1000, 1000, 1000}, {0.6, 0.3, 0.1});
  ASSERT_TRUE(mix.ok());
  const std::vector<uint32_t> schedule = (*mix)->Schedule(5, Shuffled(3));
  for (size_t a = 0; a + 10 <= schedule.size(); ++a) {
    int count[3] = {0, 0, 0};
    for (size_t i = a; i < a + 10; ++i) ++count[schedule[i]];
    ASSERT_GE(count[0], 5);
    ASSERT_LE(count[0], 7);
    ASSERT_GE(count[1], 2);
    ASSERT_LE(count[1], 4);
    ASSERT_LE(count[2], 2);
  }
}

TEST(MixtureOrderTest, WithoutReplacementWithinAPassThenUpsampled) {
  // Source 1 (20 samples) has weight 0.5 of 200: 100 picks, five passes.
  const std::vector<uint64_t> sizes = {300, 20, 50};
  auto mix = MixtureOrder::Create(sizes, {0.25, 0.5, 0.25}, 200);
  ASSERT_TRUE(mix.ok());
  const std::vector<uint64_t> order = (*mix)->GlobalOrder(2, Shuffled(11));
  ASSERT_EQ(order.size(), 200u);
  std::map<size_t, std::vector<uint64_t>> per_source;
  for (uint64_t g : order) {
    const size_t s = (*mix)->SourceOf(g);
    ASSERT_LT(g - (*mix)->offset(s), sizes[s]);
    per_source[s].push_back(g - (*mix)->offset(s));
  }
  ASSERT_EQ(per_source[1].size(), 100u);
  for (size_t s = 0; s < sizes.size(); ++s) {
    const std::vector<uint64_t>& got = per_source[s];
    for (size_t pass = 0; pass * sizes[s] < got.size(); ++pass) {
      const size_t begin = pass * sizes[s], end = std::min(got.size(), begin + sizes[s]);
      std::set<uint64_t> distinct(got.begin() + begin, got.begin() + end);
      EXPECT_EQ(distinct.size(), end - begin) << "source " << s << " pass " << pass;
    }
  }
  // Source 1's five passes are each a permutation of its 20, and not all the same order.
  std::set<std::vector<uint64_t>> passes;
  for (size_t p = 0; p < 5; ++p) {
    std::vector<uint64_t> one(per_source[1].begin() + p * 20, per_source[1].begin() + p * 20 + 20);
    passes.insert(one);
    std::sort(one.begin(), one.end());
    for (uint64_t i = 0; i < 20; ++i) EXPECT_EQ(one[i], i);
  }
  EXPECT_GT(passes.size(), 1u);
}

TEST(MixtureOrderTest, DeterministicPerSeedAndEpoch) {
  auto mix = MixtureOrder::Create({40, 70, 9}, {0.6, 0.3, 0.1});
  ASSERT_TRUE(mix.ok());
  auto again = MixtureOrder::Create({40, 70, 9}, {6, 3, 1});  // the same weights, not normalised
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*mix)->epoch_length(), 119u);
  const auto e0 = (*mix)->GlobalOrder(0, Shuffled(5));
  EXPECT_EQ(e0, (*again)->GlobalOrder(0, Shuffled(5)));
  EXPECT_NE(e0, (*mix)->GlobalOrder(1, Shuffled(5)));
  EXPECT_NE(e0, (*mix)->GlobalOrder(0, Shuffled(6)));
  // Sequential: the same every epoch, each source in file order.
  OrderOptions seq;
  const auto s0 = (*mix)->GlobalOrder(0, seq);
  EXPECT_EQ(s0, (*mix)->GlobalOrder(4, seq));
  std::vector<uint64_t> first;
  for (uint64_t g : s0) {
    if ((*mix)->SourceOf(g) == 0) first.push_back(g);
  }
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i], i % 40);
}

TEST(MixtureOrderTest, SampleOrderCutsTheMixtureIntoRanks) {
  auto mix = MixtureOrder::Create({100, 50}, {0.5, 0.5}, 160);
  ASSERT_TRUE(mix.ok());
  OrderOptions o = Shuffled(1);
  o.global_order = *mix;
  o.world_size = 4;
  // Global-batch-major (sample_order.h): global batch k is rank 0's batch k,
  // then rank 1's, ...; together they are the mixture's order.
  std::vector<std::vector<uint64_t>> ranks;
  for (int r = 0; r < 4; ++r) {
    o.rank = r;
    auto order = SampleOrder::Create(150, o);
    ASSERT_TRUE(order.ok());
    EXPECT_EQ(order->dataset_size(), 160u);
    EXPECT_EQ(order->samples_per_rank(), 40u);
    ranks.push_back(order->EpochSamples(1));
  }
  std::vector<uint64_t> all;
  const size_t b = o.batch_size;
  for (size_t k = 0; k * b < 40; ++k) {
    for (const auto& mine : ranks) all.insert(all.end(), mine.begin() + k * b, mine.begin() + (k + 1) * b);
  }
  EXPECT_EQ(all, (*mix)->GlobalOrder(1, o));
}

TEST(MixtureOrderTest, RefusesBadWeights) {
  EXPECT_EQ(MixtureOrder::Create({10, 10}, {1}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MixtureOrder::Create({10, 10}, {1, -1}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MixtureOrder::Create({10, 10}, {0, 0}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MixtureOrder::Create({10, 10}, {1, NAN}).status().code(), StatusCode::kInvalidArgument);
  auto empty = MixtureOrder::Create({10, 0}, {1, 1});
  EXPECT_NE(std::string(empty.status().message()).find("source 1"), std::string::npos) << empty.status();
  EXPECT_TRUE(MixtureOrder::Create({10, 0}, {1, 0}).ok());  // a source switched off
  EXPECT_EQ(MixtureOrder::Create({10}, {1}, MixtureOrder::kMaxEpochLength + 1).status().code(),
            StatusCode::kInvalidArgument);
  // Sources that hold more together than an epoch may (their passes are held whole too), even with a short epoch.
  auto large = MixtureOrder::Create({MixtureOrder::kMaxEpochLength, 1}, {1, 1}, 100);
  EXPECT_EQ(large.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(large.status().message()).find("the sources hold more than 134217728 samples together"),
            std::string::npos)
      << large.status();
  EXPECT_TRUE(MixtureOrder::Create({MixtureOrder::kMaxEpochLength - 1, 1}, {1, 1}, 100).ok());
}

}  // namespace
}  // namespace libshard::reader
