// Shard plan: the seeded permutation, shard counts and sizes, names, the
// canonical order without shuffle, and the task split.
#include "libshard/convert/shard_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace libshard::convert {
namespace {

Listing MakeListing(const std::vector<std::pair<std::string, int>>& splits, uint64_t size = 1000) {
  Listing l;
  l.root = "/data";
  for (const auto& [split, n] : splits) {
    for (int i = 0; i < n; ++i) {
      SourceSample s;
      char name[32];
      std::snprintf(name, sizeof(name), "%s/%05d.jpg", split.c_str(), i);
      s.path = name;
      s.split = split;
      s.label = i % 3;
      s.size = size;
      l.samples.push_back(s);
    }
    l.splits.push_back(split);
  }
  return l;
}

bool IsPermutation(const std::vector<uint32_t>& p) {
  std::vector<uint32_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != i) return false;
  }
  return true;
}

TEST(SeededPermutationTest, IsADeterministicPermutationThatDependsOnTheSeed) {
  for (uint32_t n : {0u, 1u, 2u, 3u, 10u, 1000u}) {
    std::vector<uint32_t> p = SeededPermutation(n, 42);
    ASSERT_EQ(p.size(), n);
    EXPECT_TRUE(IsPermutation(p)) << n;
    EXPECT_EQ(p, SeededPermutation(n, 42)) << n;
  }
  const std::vector<uint32_t> a = SeededPermutation(1000, 1), b = SeededPermutation(1000, 2);
  EXPECT_NE(a, b);
  std::vector<uint32_t> identity(1000);
  std::iota(identity.begin(), identity.end(), 0u);
  EXPECT_NE(a, identity);
  // Every position moves somewhere reasonably often: no value is stuck.
  int fixed = 0;
  for (uint32_t i = 0; i < 1000; ++i) fixed += a[i] == i;
  EXPECT_LT(fixed, 20);
  // Different seeds over many n all give distinct orders.
  std::set<std::vector<uint32_t>> seen;
  for (uint64_t seed = 0; seed < 50; ++seed) seen.insert(SeededPermutation(8, seed));
  EXPECT_GT(seen.size(), 45u);
}

TEST(ShardPlanTest, CoversEverySampleOnceWithSizesWithinOne) {
  const Listing l = MakeListing({{"train", 103}, {"val", 17}});
  PlanOptions o;
  o.prefix = "P";
  o.shard_size_bytes = 10 * 1000;  // 10 samples' estimate per shard
  StatusOr<ShardPlan> plan = MakeShardPlan(l, o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->samples(), 120u);
  std::vector<int> seen(l.samples.size(), 0);
  std::map<std::string, std::pair<size_t, size_t>> sizes;  // split -> min, max
  for (const PlannedShard& s : plan->shards) {
    auto& mm = sizes.try_emplace(s.split, SIZE_MAX, 0).first->second;
    mm.first = std::min(mm.first, s.samples.size());
    mm.second = std::max(mm.second, s.samples.size());
    for (uint32_t i : s.samples) {
      ASSERT_LT(i, l.samples.size());
      ++seen[i];
      EXPECT_EQ(l.samples[i].split, s.split);
    }
  }
  for (int c : seen) EXPECT_EQ(c, 1);
  for (const auto& [split, mm] : sizes) EXPECT_LE(mm.second - mm.first, 1u) << split;
  // 103 * 1000 / 10000 = 10.3 -> 10 shards; 1.7 -> 2.
  ASSERT_EQ(plan->shards.size(), 12u);
  EXPECT_EQ(plan->shards[0].count, 10u);
  EXPECT_EQ(plan->shards[0].samples.size(), 11u);  // 103 = 3 * 11 + 7 * 10
  EXPECT_EQ(plan->shards[2].samples.size(), 11u);
  EXPECT_EQ(plan->shards[3].samples.size(), 10u);
  EXPECT_EQ(plan->shards[10].split, "val");
  EXPECT_EQ(plan->shards[10].count, 2u);
  EXPECT_EQ(plan->shards[10].samples.size(), 9u);
  EXPECT_EQ(plan->shards[11].samples.size(), 8u);
}

TEST(ShardPlanTest, RecordsPerShardGivesExactCounts) {
  const Listing l = MakeListing({{"train", 50}});
  PlanOptions o;
  o.prefix = "P";
  o.records_per_shard = 16;
  StatusOr<ShardPlan> plan = MakeShardPlan(l, o);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->shards.size(), 4u);  // ceil(50 / 16)
  std::vector<size_t> got;
  for (const PlannedShard& s : plan->shards) got.push_back(s.samples.size());
  EXPECT_EQ(got, (std::vector<size_t>{13, 13, 12, 12}));
  o.records_per_shard = 10;
  plan = MakeShardPlan(l, o);
  ASSERT_EQ(plan->shards.size(), 5u);
  for (const PlannedShard& s : plan->shards) EXPECT_EQ(s.samples.size(), 10u);
}

TEST(ShardPlanTest, HugeRecordsPerShardIsOneShardNotADivisionByZero) {
  // ceil(n / r) computed as (n + r - 1) / r wrapped to 0 shards for r near
  // 2^64 (--records-per-shard -1 parsed as unsigned): SIGFPE.
  const Listing l = MakeListing({{"train", 5}, {"val", 2}});
  PlanOptions o;
  o.prefix = "P";
  for (uint64_t r : {~uint64_t{0}, ~uint64_t{0} - 1, uint64_t{1} << 63, uint64_t{5}, uint64_t{6}}) {
    o.records_per_shard = r;
    StatusOr<ShardPlan> plan = MakeShardPlan(l, o);
    ASSERT_TRUE(plan.ok()) << r << ": " << plan.status();
    ASSERT_EQ(plan->shards.size(), 2u) << r;
    EXPECT_EQ(plan->shards[0].samples.size(), 5u) << r;
    EXPECT_EQ(plan->shards[1].samples.size(), 2u) << r;
  }
  o.records_per_shard = 4;
  EXPECT_EQ(MakeShardPlan(l, o)->shards.size(), 3u);  // train 2 (3 + 2), val 1
}

TEST(ShardPlanTest, PrefixAndSplitNamesMustBeSafeFileNameParts) {
  const Listing good = MakeListing({{"train", 3}});
  PlanOptions o;
  o.records_per_shard = 1;
  const std::vector<std::pair<std::string, std::string>> bad_prefixes = {
      {"", "shard prefix is empty"},
      {"a/b", "shard prefix 'a/b' contains '/'"},
      {"..", "shard prefix '..' is not a name"},
      {".x", "shard prefix '.x' starts with '.'"},
  };
  for (const auto& [prefix, message] : bad_prefixes) {
    o.prefix = prefix;
    StatusOr<ShardPlan> plan = MakeShardPlan(good, o);
    ASSERT_FALSE(plan.ok()) << prefix;
    EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(plan.status().message().find(message), std::string::npos) << plan.status();
  }
  o.prefix = "a\tb";
  StatusOr<ShardPlan> tab = MakeShardPlan(good, o);
  ASSERT_FALSE(tab.ok());
  EXPECT_EQ(tab.status().message(),
            "shard prefix contains the control character 0x09 (tab, newline, ...) (the default prefix is the input's "
            "name; --prefix NAME sets another)");
  o.prefix = "P";
  for (const std::string& split : {std::string("../x"), std::string(".."), std::string("a\nb")}) {
    Listing l = good;
    for (SourceSample& s : l.samples) s.split = split;
    StatusOr<ShardPlan> plan = MakeShardPlan(l, o);
    ASSERT_FALSE(plan.ok()) << split;
    EXPECT_NE(plan.status().message().find("split name"), std::string::npos) << plan.status();
  }
}

TEST(ShardPlanTest, ShardSizeEstimateDecidesTheCount) {
  const Listing l = MakeListing({{"train", 100}}, 1000);
  PlanOptions o;
  o.prefix = "P";
  o.shard_size_bytes = 1 << 30;  // tiny dataset: one shard
  EXPECT_EQ(MakeShardPlan(l, o)->shards.size(), 1u);
  o.shard_size_bytes = 25 * 1000;
  EXPECT_EQ(MakeShardPlan(l, o)->shards.size(), 4u);
  o.shard_size_bytes = 1;  // never more shards than samples
  EXPECT_EQ(MakeShardPlan(l, o)->shards.size(), 100u);
  // A custom estimate replaces the file size.
  o.shard_size_bytes = 1000;
  o.estimate = [](const SourceSample&) -> uint64_t { return 100; };
  EXPECT_EQ(MakeShardPlan(l, o)->shards.size(), 10u);
}

TEST(ShardPlanTest, FileNames) {
  EXPECT_EQ(ShardFileName("P", "train", 3, 10), "P-train-00003-of-00010.tfrecord");
  EXPECT_EQ(ShardFileName("oct", "val", 0, 1), "oct-val-00000-of-00001.tfrecord");
  const Listing l = MakeListing({{"train", 30}});
  PlanOptions o;
  o.prefix = "P";
  o.records_per_shard = 3;
  StatusOr<ShardPlan> plan = MakeShardPlan(l, o);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->shards.size(), 10u);
  EXPECT_EQ(plan->shards[3].file, "P-train-00003-of-00010.tfrecord");
  EXPECT_EQ(plan->shards[3].index, 3u);
  EXPECT_EQ(plan->shards[3].count, 10u);
}

TEST(ShardPlanTest, NoShuffleKeepsCanonicalOrderAndShuffleUsesTheSplitSeed) {
  const Listing l = MakeListing({{"train", 20}, {"val", 7}});
  PlanOptions o;
  o.prefix = "P";
  o.records_per_shard = 6;
  o.shuffle = false;
  StatusOr<ShardPlan> plan = MakeShardPlan(l, o);
  ASSERT_TRUE(plan.ok());
  std::vector<uint32_t> order;
  for (const PlannedShard& s : plan->shards) order.insert(order.end(), s.samples.begin(), s.samples.end());
  std::vector<uint32_t> identity(27);
  std::iota(identity.begin(), identity.end(), 0u);
  EXPECT_EQ(order, identity);

  o.shuffle = true;
  o.seed = 1234;
  plan = MakeShardPlan(l, o);
  ASSERT_TRUE(plan.ok());
  order.clear();
  for (const PlannedShard& s : plan->shards) {
    if (s.split == "train") order.insert(order.end(), s.samples.begin(), s.samples.end());
  }
  // The documented order: SeededPermutation(n, seed ^ Fnv1a64(split)).
  EXPECT_EQ(order, SeededPermutation(20, 1234 ^ Fnv1a64("train")));
  StatusOr<ShardPlan> again = MakeShardPlan(l, o);
  for (size_t i = 0; i < plan->shards.size(); ++i) EXPECT_EQ(plan->shards[i].samples, again->shards[i].samples);
  o.seed = 1235;
  StatusOr<ShardPlan> other = MakeShardPlan(l, o);
  EXPECT_NE(plan->shards[0].samples, other->shards[0].samples);
}

TEST(ShardPlanTest, TasksPartitionTheShards) {
  const Listing l = MakeListing({{"train", 40}, {"val", 13}});
  PlanOptions o;
  o.prefix = "P";
  o.records_per_shard = 4;
  StatusOr<ShardPlan> plan = MakeShardPlan(l, o);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->shards.size(), 14u);
  for (uint32_t n : {1u, 2u, 3u, 7u}) {
    std::vector<int> owner(plan->shards.size(), -1);
    for (uint32_t t = 0; t < n; ++t) {
      StatusOr<std::vector<size_t>> mine = TaskShards(*plan, n, t);
      ASSERT_TRUE(mine.ok()) << mine.status();
      for (size_t g : mine.value()) {
        ASSERT_LT(g, owner.size());
        EXPECT_EQ(owner[g], -1) << "shard " << g << " in two tasks of " << n;
        owner[g] = static_cast<int>(t);
        EXPECT_EQ(g % n, t);  // documented: shard g belongs to task g mod N
      }
    }
    for (size_t g = 0; g < owner.size(); ++g) EXPECT_NE(owner[g], -1) << g << " of " << n;
  }
  // The plan does not depend on tasks at all: computing it again gives the same.
  StatusOr<ShardPlan> again = MakeShardPlan(l, o);
  ASSERT_EQ(again->shards.size(), plan->shards.size());
  for (size_t i = 0; i < plan->shards.size(); ++i) {
    EXPECT_EQ(plan->shards[i].file, again->shards[i].file);
    EXPECT_EQ(plan->shards[i].samples, again->shards[i].samples);
  }
}

TEST(ShardPlanTest, Errors) {
  const Listing l = MakeListing({{"train", 5}});
  PlanOptions o;
  EXPECT_EQ(MakeShardPlan(l, o).status().code(), StatusCode::kInvalidArgument);  // empty prefix
  o.prefix = "a/b";
  EXPECT_EQ(MakeShardPlan(l, o).status().code(), StatusCode::kInvalidArgument);
  o.prefix = "P";
  o.shard_size_bytes = 0;
  EXPECT_EQ(MakeShardPlan(l, o).status().code(), StatusCode::kInvalidArgument);
  o.records_per_shard = 1;
  StatusOr<ShardPlan> plan = MakeShardPlan(l, o);
  ASSERT_TRUE(plan.ok());
  StatusOr<std::vector<size_t>> t = TaskShards(*plan, 3, 3);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("task index 3"), std::string::npos) << t.status();
  EXPECT_FALSE(TaskShards(*plan, 0, 0).ok());
  // More tasks than shards: the extra tasks have nothing to do.
  StatusOr<std::vector<size_t>> idle = TaskShards(*plan, 9, 7);
  ASSERT_TRUE(idle.ok());
  EXPECT_TRUE(idle->empty());
  // Too many shards for five digits.
  const Listing big = MakeListing({{"train", 100000}}, 1);
  EXPECT_EQ(MakeShardPlan(big, o).status().code(), StatusCode::kInvalidArgument);
  // An empty listing is an empty plan.
  StatusOr<ShardPlan> empty = MakeShardPlan(Listing{}, o);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->shards.empty());
}

}  // namespace
}  // namespace libshard::convert
