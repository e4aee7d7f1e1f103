// Shard plan: which samples go to which shard, in which order. A pure
// function of the listing and the options, computed identically by every
// task of a distributed conversion (each then writes only its own shards).
//
// Per split, in the listing's canonical order:
//   1. with `shuffle`, the split's samples are permuted by Fisher-Yates driven
//      by SplitMix64 seeded with seed ^ Fnv1a64(split) (bounded draws by
//      Lemire's unbiased multiply-and-reject), so the order is defined here,
//      not by a standard library;
//   2. the number of shards M is ceil(n / records_per_shard) when that is
//      set, else max(1, round(estimated bytes / shard_size_bytes)), the
//      estimate being the sum of `estimate(sample)` (the shard count must be
//      known before writing: it is in every file name);
//   3. the samples are cut into M contiguous runs whose sizes differ by at
//      most one (the first n mod M shards get one more).
// Shard files are named PREFIX-SPLIT-NNNNN-of-MMMMM.tfrecord (at least five
// digits). Tasks: shard number g (counting over all splits, in plan order)
// belongs to task g mod num_tasks.
//
//   PlanOptions po;
//   po.prefix = "oct";
//   StatusOr<ShardPlan> plan = MakeShardPlan(listing, po);
//
// Errors: kInvalidArgument for a bad option (a prefix that is empty, contains
// '/' or a control character or starts with '.'; a split name that is empty,
// "." or "..", or contains '/' or a control character; zero sizes; a task
// index out of range). Any records_per_shard from 1 to 2^64-1 is valid.
// Thread-safety: pure functions.
#ifndef LIBSHARD_CONVERT_SHARD_PLAN_H_
#define LIBSHARD_CONVERT_SHARD_PLAN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "libshard/convert/source_listing.h"
#include "libshard/status.h"

namespace libshard::convert {

struct PlanOptions {
  // File name prefix. Default: "" (must be set).
  std::string prefix;
  // Target shard size, used when records_per_shard is 0. Default: 128 MiB.
  uint64_t shard_size_bytes = uint64_t{128} << 20;
  // At most this many samples planned per shard: a split of n samples gets
  // M = ceil(n / records_per_shard) shards of floor(n / M) or ceil(n / M)
  // samples each (so 250 samples at 20 give 13 shards of 19 or 20); a
  // rejected sample leaves its shard one record short. Default: 0 (use
  // shard_size_bytes).
  uint64_t records_per_shard = 0;
  // Shuffle seed. Default: 0.
  uint64_t seed = 0;
  // Shuffle globally (per split) before sharding. Default: true.
  bool shuffle = true;
  // Estimated output bytes of a sample. Default (unset): its source size.
  std::function<uint64_t(const SourceSample&)> estimate;
};

struct PlannedShard {
  std::string split;
  uint32_t index = 0;             // NNNNN
  uint32_t count = 0;             // MMMMM
  std::string file;               // file name in the output folder
  std::vector<uint32_t> samples;  // indices into Listing::samples, write order
};

struct ShardPlan {
  std::vector<PlannedShard> shards;  // splits in sorted order, then by index
  uint64_t samples() const;
};

StatusOr<ShardPlan> MakeShardPlan(const Listing& listing, const PlanOptions& options);

// "PREFIX-SPLIT-00003-of-00010.tfrecord"
std::string ShardFileName(const std::string& prefix, const std::string& split, uint32_t index, uint32_t count);

// Positions in plan.shards that task `task_index` of `num_tasks` writes.
StatusOr<std::vector<size_t>> TaskShards(const ShardPlan& plan, uint32_t num_tasks, uint32_t task_index);

// The permutation MakeShardPlan applies to n samples for this seed and split
// (exposed for tests and for readers that want the same order).
std::vector<uint32_t> SeededPermutation(uint32_t n, uint64_t seed);

}  // namespace libshard::convert

#endif  // LIBSHARD_CONVERT_SHARD_PLAN_H_
