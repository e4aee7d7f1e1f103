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
  // The order is part of the resume contract (a saved position continues in
  // a later release): pin the values of both shuffles.
  OrderOptions opt;
  opt.kind = OrderKind::kShuffle;
  opt.seed = 7;
  EXPECT_EQ(SampleOrder::Create(8, opt)->GlobalOrder(3), (std::vector<uint64_t>{7, 1, 0, 4, 5, 2, 3, 6}));
  opt.kind = OrderKind::kBlockShuffle;
  opt.block_size = 3;
  opt.window_blocks = 2;
  EXPECT_EQ(SampleOrder::Create(11, opt)->GlobalOrder(3), (std::vector<uint64_t>{8, 3, 6, 5, 7, 4, 10, 2, 1, 0, 9}));
  EXPECT_STREQ(kPermutationName, "feistel8/1");
}

TEST(SampleOrderTest, EpochOrderIsTheGlobalOrderAsAFunction) {
  for (OrderKind kind : {OrderKind::kSequential, OrderKind::kShuffle, OrderKind::kBlockShuffle}) {
    OrderOptions opt;
    opt.kind = kind;
    opt.seed = 5;
    opt.block_size = 7;
    opt.window_blocks = 3;
    auto o = SampleOrder::Create(1001, opt);
    const EpochOrder e = o->Epoch(2);
    ASSERT_EQ(e.size(), 1001u);
    const std::vector<uint64_t> all = o->GlobalOrder(2);
    for (uint64_t p = 0; p < e.size(); ++p) ASSERT_EQ(e.At(p), all[p]) << OrderKindName(kind) << " at " << p;
  }
}

TEST(SampleOrderTest, AnEpochOf10To12SamplesNeedsNoMemory) {
  // 10^12 samples (8 TB as an array): any position evaluates at once; the
  // positions of one stretch give distinct samples, a block shuffle's stay
  // within its window's blocks.
  OrderOptions opt;
  opt.kind = OrderKind::kShuffle;
  opt.seed = 1;
  const uint64_t n = 1000000000000;
  auto o = SampleOrder::Create(n, opt);
  ASSERT_TRUE(o.ok());
  const EpochOrder e = o->Epoch(9);
  std::set<uint64_t> seen;
  for (uint64_t p = n - 10000; p < n; ++p) {
    const uint64_t s = e.At(p);
    ASSERT_LT(s, n);
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 10000u);
  opt.kind = OrderKind::kBlockShuffle;
  opt.block_size = 1000;
  opt.window_blocks = 2;
  const EpochOrder b = SampleOrder::Create(n + 17, opt)->Epoch(9);  // the short last block somewhere
  std::set<uint64_t> blocks;
  for (uint64_t p = 4000; p < 6000; ++p) blocks.insert(b.At(p) / 1000);  // window 2, whole
  EXPECT_LE(blocks.size(), 2u);
}

TEST(SampleOrderTest, BlockShuffleCoversEveryGeometryOnce) {
  // The short last block lands in any window (first, middle, last, alone):
  // every sample still once, and each window a run of whole blocks.
  for (uint64_t n : {1, 2, 10, 11, 31, 32, 33, 97, 1000}) {
    for (size_t bs : {1, 3, 8, 32}) {
      for (size_t w : {1, 2, 5}) {
        for (uint64_t seed : {0, 1, 2, 3}) {
          OrderOptions opt;
          opt.kind = OrderKind::kBlockShuffle;
          opt.block_size = bs;
          opt.window_blocks = w;
          opt.seed = seed;
          auto v = SampleOrder::Create(n, opt)->GlobalOrder(seed);
          auto sorted = v;
          std::sort(sorted.begin(), sorted.end());
          ASSERT_EQ(sorted, Iota(n)) << n << " " << bs << " " << w << " " << seed;
          // Walk the windows: each is a run of w whole blocks (the last one
          // fewer), closed once all their samples are taken.
          const uint64_t blocks = (n + bs - 1) / bs;
          std::set<uint64_t> window;
          uint64_t taken = 0, closed_blocks = 0;
          for (uint64_t s : v) {
            window.insert(s / bs);
            ++taken;
            ASSERT_LE(window.size(), w) << n << " " << bs << " " << w << " " << seed;
            uint64_t held = 0;
            for (uint64_t blk : window) held += std::min<uint64_t>(n, (blk + 1) * bs) - blk * bs;
            if (taken == held && window.size() == std::min<uint64_t>(w, blocks - closed_blocks)) {
              closed_blocks += window.size();
              window.clear();
              taken = 0;
            }
          }
          EXPECT_EQ(closed_blocks, blocks) << n << " " << bs << " " << w << " " << seed;
        }
      }
    }
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

// Rank r's batch j is the r-th batch_size slice of global batch j (the
// epoch's global order in consecutive runs of batch_size * world_size).
TEST(SampleOrderTest, RanksTakeSlicesOfEachGlobalBatch) {
  // 20 samples, 3 ranks x 2: global batches of 6; padded to 21 (sample 0
  // again); the last global batch (positions 18..20) is cut 1 + 1 + 1.
  std::vector<std::vector<uint64_t>> want = {
      {0, 1, 6, 7, 12, 13, 18}, {2, 3, 8, 9, 14, 15, 19}, {4, 5, 10, 11, 16, 17, 0}};
  for (int r = 0; r < 3; ++r) {
    OrderOptions opt;
    opt.rank = r;
    opt.world_size = 3;
    opt.batch_size = 2;
    auto o = SampleOrder::Create(20, opt);
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_EQ(o->EpochSamples(0), want[r]) << "rank " << r;
    EXPECT_EQ(o->batches_per_epoch(), 4u);
    EXPECT_EQ(o->BatchRange(3).end - o->BatchRange(3).begin, 1u);  // the short last global batch, cut evenly
    EXPECT_EQ(o->GlobalIndex(6), 18u + r);
  }
  // drop_last: the incomplete global batch (18, 19) is dropped.
  OrderOptions opt;
  opt.rank = 2;
  opt.world_size = 3;
  opt.batch_size = 2;
  opt.drop_last = true;
  auto o = SampleOrder::Create(20, opt);
  EXPECT_EQ(o->EpochSamples(0), (std::vector<uint64_t>{4, 5, 10, 11, 16, 17}));
  EXPECT_EQ(o->batches_per_epoch(), 3u);
  EXPECT_EQ(o->GlobalConsumed(0, 3), 18u);
}

std::vector<std::vector<uint64_t>> GlobalBatches(uint64_t n, int world, size_t batch, uint64_t epoch,
                                                 uint64_t start = 0) {
  std::vector<SampleOrder> ranks;
  for (int r = 0; r < world; ++r) {
    OrderOptions opt;
    opt.kind = OrderKind::kShuffle;
    opt.seed = 5;
    opt.rank = r;
    opt.world_size = world;
    opt.batch_size = batch;
    ranks.push_back(SampleOrder::Create(n, opt).value());
  }
  std::vector<std::vector<uint64_t>> out;
  std::vector<std::vector<uint64_t>> samples;
  for (const auto& o : ranks) samples.push_back(o.EpochSamples(epoch, start));
  for (uint64_t b = 0; b < ranks[0].batches_per_epoch(start); ++b) {
    out.emplace_back();
    for (int r = 0; r < world; ++r) {
      const SampleOrder::Range range = ranks[r].BatchRange(b, start);
      out.back().insert(out.back().end(), samples[r].begin() + range.begin, samples[r].begin() + range.end);
    }
  }
  return out;
}

TEST(SampleOrderTest, SameGlobalBatchSameBatchesOnAnyWorldSize) {
  // 8 ranks x 32 and 4 x 64 (and 1 x 256): the same global batches, sample
  // for sample (1024 samples: no padding difference at the end).
  const auto eight = GlobalBatches(1024, 8, 32, 3);
  ASSERT_EQ(eight.size(), 4u);
  EXPECT_EQ(GlobalBatches(1024, 4, 64, 3), eight);
  EXPECT_EQ(GlobalBatches(1024, 1, 256, 3), eight);
  const auto order = SampleOrder::Create(1024,
                                         [] {
                                           OrderOptions o;
                                           o.kind = OrderKind::kShuffle;
                                           o.seed = 5;
                                           return o;
                                         }())
                         ->GlobalOrder(3);
  EXPECT_EQ(eight[1], std::vector<uint64_t>(order.begin() + 256, order.begin() + 512));
}

TEST(SampleOrderTest, AnEpochStartsAtAGlobalOffset) {
  // 1000 samples; 8 ranks x 10 consume 3 global batches (240), then 3 ranks
  // x 7 take the rest from there: global_order[240:], each sample once, in
  // order, padded to 762 with the epoch's first samples.
  const uint64_t n = 1000;
  OrderOptions opt;
  opt.kind = OrderKind::kBlockShuffle;
  opt.block_size = 16;
  opt.seed = 11;
  opt.world_size = 8;
  opt.batch_size = 10;
  const auto before = SampleOrder::Create(n, opt).value();
  const std::vector<uint64_t> global = before.GlobalOrder(4);
  EXPECT_EQ(before.GlobalConsumed(0, 3), 240u);
  std::vector<uint64_t> seen;
  std::vector<std::vector<uint64_t>> per_rank;
  for (int r = 0; r < 3; ++r) {
    OrderOptions o3 = opt;
    o3.rank = r;
    o3.world_size = 3;
    o3.batch_size = 7;
    const auto o = SampleOrder::Create(n, o3).value();
    EXPECT_EQ(o.samples_per_rank(240), 254u);  // ceil(760 / 3)
    EXPECT_EQ(o.rank_batches(240), 37u);       // 36 of 7, then 2
    per_rank.push_back(o.EpochSamples(4, 240));
    EXPECT_EQ(o.GlobalConsumed(240, 36), 240u + 36 * 21);
    EXPECT_EQ(o.GlobalConsumed(240, 37), n);
    EXPECT_EQ(o.batches_per_epoch(n), 0u);  // nothing left: the epoch is over
  }
  for (uint64_t j = 0; j < 37; ++j) {
    for (int r = 0; r < 3; ++r) {
      const uint64_t k = j < 36 ? 7 : 2;
      for (uint64_t i = 0; i < k; ++i) seen.push_back(per_rank[r][j * 7 + i]);
    }
  }
  std::vector<uint64_t> want(global.begin() + 240, global.end());
  want.push_back(global[0]);
  want.push_back(global[1]);
  EXPECT_EQ(seen, want);
}

TEST(SampleOrderTest, ElasticChangesCoverTheEpochOnce) {
  // 8 -> 4 -> 6 -> 1 ranks (batch 5) within one epoch of 997 samples.
  const uint64_t n = 997;
  std::vector<uint64_t> seen;
  uint64_t consumed = 0;
  const int worlds[] = {8, 4, 6, 1};
  const uint64_t steps[] = {3, 7, 4, ~uint64_t{0}};
  for (int c = 0; c < 4; ++c) {
    std::vector<std::vector<uint64_t>> samples;
    std::vector<SampleOrder> ranks;
    for (int r = 0; r < worlds[c]; ++r) {
      OrderOptions o;
      o.kind = OrderKind::kShuffle;
      o.seed = 3;
      o.rank = r;
      o.world_size = worlds[c];
      o.batch_size = 5;
      ranks.push_back(SampleOrder::Create(n, o).value());
      samples.push_back(ranks.back().EpochSamples(0, consumed));
    }
    const uint64_t take = std::min(steps[c], ranks[0].rank_batches(consumed));
    for (uint64_t b = 0; b < take; ++b) {
      for (int r = 0; r < worlds[c]; ++r) {
        const auto range = ranks[r].BatchRange(b, consumed);
        seen.insert(seen.end(), samples[r].begin() + range.begin, samples[r].begin() + range.end);
      }
    }
    const uint64_t next = ranks[0].GlobalConsumed(consumed, take);
    for (const auto& o : ranks) EXPECT_EQ(o.GlobalConsumed(consumed, take), next);  // every rank says the same
    consumed = next;
  }
  EXPECT_EQ(consumed, n);
  ASSERT_EQ(seen.size(), n);  // world size 1 at the end: no padding
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, Iota(n));
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
  // A window of blocks past 2^64 samples: refused by name, not wrapped into a small one.
  opt = {};
  opt.kind = OrderKind::kBlockShuffle;
  opt.block_size = size_t{1} << 40;
  opt.window_blocks = size_t{1} << 30;
  StatusOr<SampleOrder> wide = SampleOrder::Create(10, opt);
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(wide.status().message(), "block_size 1099511627776 x window_blocks 1073741824 overflows");
}

}  // namespace
}  // namespace libshard::reader
