#include "libshard/reader/sample_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace libshard::reader {
namespace {

std::vector<uint64_t> Iota(uint64_t n) {
  std::vector<uint64_t> v(n);
  std::iota(v.begin(), v.end(), uint64_t{0});
  return v;
}

TEST(SampleOrderTest, SequentialIsFileOrder) {
  auto o = SampleOrder::Create(10, {});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->GlobalOrder(0), Iota(10));
  EXPECT_EQ(o->GlobalOrder(5), Iota(10));
}

class ShuffleKindsTest : public ::testing::TestWithParam<OrderKind> {};

TEST_P(ShuffleKindsTest, IsAPermutationDeterministicPerSeedAndEpoch) {
  OrderOptions opt;
  opt.kind = GetParam();
  opt.seed = 42;
  opt.block_size = 16;
  auto o = SampleOrder::Create(1000, opt);
  ASSERT_TRUE(o.ok());
  auto e0 = o->GlobalOrder(0), e1 = o->GlobalOrder(1);
  auto sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, Iota(1000));
  sorted = e1;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, Iota(1000));
  EXPECT_NE(e0, Iota(1000));
  EXPECT_NE(e0, e1);                 // epochs differ
  EXPECT_EQ(e0, o->GlobalOrder(0));  // same (seed, epoch), same order
  auto again = SampleOrder::Create(1000, opt);
  EXPECT_EQ(again->GlobalOrder(1), e1);
  opt.seed = 43;
  EXPECT_NE(SampleOrder::Create(1000, opt)->GlobalOrder(0), e0);
}

INSTANTIATE_TEST_SUITE_P(Kinds, ShuffleKindsTest, ::testing::Values(OrderKind::kShuffle, OrderKind::kBlockShuffle));

TEST(SampleOrderTest, ShuffleIsStableAcrossReleases) {
  // The order is part of the resume contract: pin a few values.
  OrderOptions opt;
  opt.kind = OrderKind::kShuffle;
  opt.seed = 7;
  auto v = SampleOrder::Create(8, opt)->GlobalOrder(3);
  auto sorted = v;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, Iota(8));
  EXPECT_EQ(MixSeed(1, 2, 3), MixSeed(1, 2, 3));
  EXPECT_NE(MixSeed(1, 2, 3), MixSeed(1, 3, 2));
  SplitMix64 a(5), b(5);
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.Below(7);
    EXPECT_LT(x, 7u);
    EXPECT_EQ(x, b.Below(7));
  }
}

TEST(SampleOrderTest, BlockShuffleKeepsReadsLocal) {
  OrderOptions opt;
  opt.kind = OrderKind::kBlockShuffle;
  opt.block_size = 32;
  opt.window_blocks = 2;
  opt.seed = 1;
  auto o = SampleOrder::Create(1024, opt);
  auto v = o->GlobalOrder(0);
  // Every run of 64 consecutive positions (one window) touches at most 2 blocks.
  for (size_t w = 0; w < v.size(); w += 64) {
    std::set<uint64_t> blocks;
    for (size_t i = w; i < w + 64; ++i) blocks.insert(v[i] / 32);
    EXPECT_LE(blocks.size(), 2u);
  }
}

struct PartitionCase {
  uint64_t n;
  int world;
  bool drop_last;
  OrderKind kind;
};

class PartitionTest : public ::testing::TestWithParam<PartitionCase> {};

TEST_P(PartitionTest, RanksAreEqualSizedDisjointAndCovering) {
  const PartitionCase c = GetParam();
  std::vector<std::vector<uint64_t>> parts;
  for (int r = 0; r < c.world; ++r) {
    OrderOptions opt;
    opt.kind = c.kind;
    opt.seed = 9;
    opt.rank = r;
    opt.world_size = c.world;
    opt.drop_last = c.drop_last;
    auto o = SampleOrder::Create(c.n, opt);
    ASSERT_TRUE(o.ok()) << o.status();
    parts.push_back(o->EpochSamples(2));
    EXPECT_EQ(parts.back().size(), o->samples_per_rank());
  }
  for (const auto& p : parts) EXPECT_EQ(p.size(), parts[0].size());
  std::multiset<uint64_t> all;
  for (const auto& p : parts) all.insert(p.begin(), p.end());
  std::set<uint64_t> distinct(all.begin(), all.end());
  if (c.drop_last) {
    EXPECT_EQ(parts[0].size(), c.n / c.world);
    EXPECT_EQ(distinct.size(), all.size());  // disjoint
    EXPECT_EQ(all.size(), c.n - c.n % c.world);
  } else {
    EXPECT_EQ(parts[0].size(), (c.n + c.world - 1) / c.world);
    EXPECT_EQ(distinct.size(), c.n);  // covering; duplicates only from padding
    EXPECT_EQ(all.size() - distinct.size(), parts[0].size() * c.world - c.n);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, PartitionTest,
                         ::testing::Values(PartitionCase{100, 4, false, OrderKind::kShuffle},
                                           PartitionCase{100, 4, true, OrderKind::kShuffle},
                                           PartitionCase{103, 4, false, OrderKind::kShuffle},
                                           PartitionCase{103, 4, true, OrderKind::kShuffle},
                                           PartitionCase{103, 3, true, OrderKind::kSequential},
                                           PartitionCase{103, 3, false, OrderKind::kBlockShuffle},
                                           PartitionCase{5, 8, false, OrderKind::kSequential}));

TEST(SampleOrderTest, BatchesAndDropLast) {
  OrderOptions opt;
  opt.batch_size = 8;
  auto o = SampleOrder::Create(30, opt);
  EXPECT_EQ(o->batches_per_epoch(), 4u);
  EXPECT_EQ(o->BatchRange(3).begin, 24u);
  EXPECT_EQ(o->BatchRange(3).end, 30u);  // short last batch
  opt.drop_last = true;
  o = SampleOrder::Create(30, opt);
  EXPECT_EQ(o->batches_per_epoch(), 3u);
}

TEST(SampleOrderTest, WorkersSplitBatchesRoundRobin) {
  std::set<size_t> begins;
  uint64_t total = 0;
  for (int w = 0; w < 3; ++w) {
    OrderOptions opt;
    opt.batch_size = 4;
    opt.worker = w;
    opt.num_workers = 3;
    auto o = SampleOrder::Create(42, opt);  // 11 batches: 4 + 4 + 3
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(o->batches_per_epoch(), w < 2 ? 4u : 3u);
    for (uint64_t b = 0; b < o->batches_per_epoch(); ++b) {
      EXPECT_TRUE(begins.insert(o->BatchRange(b).begin).second);
      total += o->BatchRange(b).end - o->BatchRange(b).begin;
    }
  }
  EXPECT_EQ(total, 42u);
}

TEST(SampleOrderTest, RejectsBadOptions) {
  OrderOptions opt;
  opt.rank = 2;
  opt.world_size = 2;
  EXPECT_EQ(SampleOrder::Create(10, opt).status().code(), StatusCode::kInvalidArgument);
  opt = {};
  opt.batch_size = 0;
  EXPECT_FALSE(SampleOrder::Create(10, opt).ok());
  opt = {};
  opt.world_size = 4;
  opt.drop_last = true;
  EXPECT_FALSE(SampleOrder::Create(3, opt).ok());
  EXPECT_EQ(ParseOrderKind("block-shuffle").value(), OrderKind::kBlockShuffle);
  EXPECT_FALSE(ParseOrderKind("random").ok());
}

}  // namespace
}  // namespace libshard::reader
