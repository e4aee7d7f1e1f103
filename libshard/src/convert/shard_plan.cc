#include "libshard/convert/shard_plan.h"

#include <cmath>
#include <cstdio>

#include "libshard/util/random.h"

namespace libshard::convert {

uint64_t ShardPlan::samples() const {
  uint64_t n = 0;
  for (const PlannedShard& s : shards) n += s.samples.size();
  return n;
}

std::vector<uint32_t> SeededPermutation(uint32_t n, uint64_t seed) {
  std::vector<uint32_t> p(n);
  for (uint32_t i = 0; i < n; ++i) p[i] = i;
  util::SplitMix64 rng(seed);
  for (uint32_t i = n; i > 1; --i) {
    const uint32_t j = rng.Below32(i);
    std::swap(p[i - 1], p[j]);
  }
  return p;
}

std::string ShardFileName(const std::string& prefix, const std::string& split, uint32_t index, uint32_t count) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "-%05u-of-%05u.tfrecord", index, count);
  return prefix + "-" + split + buf;
}

StatusOr<ShardPlan> MakeShardPlan(const Listing& listing, const PlanOptions& options) {
  if (Status bad = ValidateNamePart("shard prefix", options.prefix); !bad.ok()) {
    // The default is the input's name, which may be any bytes: say how to choose another.
    return InvalidArgumentError(bad.message() +
                                " (the default prefix is the input's name; --prefix NAME sets another)");
  }
  if (options.prefix[0] == '.') {
    return InvalidArgumentError("shard prefix '" + options.prefix +
                                "' starts with '.': its shards would be hidden files, which readers skip");
  }
  if (options.records_per_shard == 0 && options.shard_size_bytes == 0) {
    return InvalidArgumentError("shard size must be positive");
  }
  if (listing.samples.size() >= (uint64_t{1} << 32)) {
    return InvalidArgumentError("more than 2^32 samples");
  }
  ShardPlan plan;
  size_t begin = 0;
  while (begin < listing.samples.size()) {
    const std::string& split = listing.samples[begin].split;
    LIBSHARD_RETURN_IF_ERROR(ValidateNamePart("split name", split));
    size_t end = begin;
    uint64_t estimate = 0;
    while (end < listing.samples.size() && listing.samples[end].split == split) {
      const SourceSample& s = listing.samples[end];
      estimate += options.estimate ? options.estimate(s) : s.size;
      ++end;
    }
    const uint32_t n = static_cast<uint32_t>(end - begin);
    std::vector<uint32_t> order(n);
    if (options.shuffle) {
      order = SeededPermutation(n, options.seed ^ Fnv1a64(split));
    } else {
      for (uint32_t i = 0; i < n; ++i) order[i] = i;
    }
    uint64_t m;
    if (options.records_per_shard > 0) {
      // ceil(n / r) without n + r - 1, which wraps for r near 2^64.
      m = n / options.records_per_shard + (n % options.records_per_shard != 0 ? 1 : 0);
    } else {
      m = static_cast<uint64_t>(
          std::llround(static_cast<double>(estimate) / static_cast<double>(options.shard_size_bytes)));
      m = std::max<uint64_t>(1, std::min<uint64_t>(m, n));
    }
    if (m == 0) return InternalError("split '" + split + "': no shards planned for its samples");
    if (m > 99999) {
      return InvalidArgumentError("split '" + split + "' would need " + std::to_string(m) +
                                  " shards (at most 99999): raise the shard size");
    }
    const uint64_t base = n / m, extra = n % m;
    size_t pos = 0;
    for (uint64_t i = 0; i < m; ++i) {
      PlannedShard shard;
      shard.split = split;
      shard.index = static_cast<uint32_t>(i);
      shard.count = static_cast<uint32_t>(m);
      shard.file = ShardFileName(options.prefix, split, shard.index, shard.count);
      // The longest name written for it is .libshard/FILE.partial.idx.
      if (constexpr size_t kNameMax = 255, kLongestTail = 12; shard.file.size() + kLongestTail > kNameMax) {
        return InvalidArgumentError(
            "shard name " + shard.file + " is " + std::to_string(shard.file.size()) +
            " bytes; with its temporary name's '.partial.idx' it passes the file "
            "system's 255-byte limit: use a --prefix of at most " +
            std::to_string(kNameMax - kLongestTail - (shard.file.size() - options.prefix.size())) + " bytes (split '" +
            split + "')");
      }
      const uint64_t take = base + (i < extra ? 1 : 0);
      for (uint64_t k = 0; k < take; ++k) {
        shard.samples.push_back(static_cast<uint32_t>(begin + order[pos++]));
      }
      plan.shards.push_back(std::move(shard));
    }
    begin = end;
  }
  return plan;
}

StatusOr<std::vector<size_t>> TaskShards(const ShardPlan& plan, uint32_t num_tasks, uint32_t task_index) {
  if (num_tasks == 0) return InvalidArgumentError("number of tasks must be at least 1");
  if (task_index >= num_tasks) {
    return InvalidArgumentError("task index " + std::to_string(task_index) + " is out of range for " +
                                std::to_string(num_tasks) + " tasks (0.." + std::to_string(num_tasks - 1) + ")");
  }
  std::vector<size_t> mine;
  for (size_t g = task_index; g < plan.shards.size(); g += num_tasks) mine.push_back(g);
  return mine;
}

}  // namespace libshard::convert
