#include "libshard/reader/sample_order.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "libshard/reader/global_order.h"

namespace libshard::reader {
namespace {

template <typename It>
void Shuffle(It first, It last, SplitMix64* rng) {
  const uint64_t n = static_cast<uint64_t>(last - first);
  for (uint64_t i = n; i > 1; --i) std::swap(first[i - 1], first[rng->Below(i)]);
}

}  // namespace

const char* OrderKindName(OrderKind kind) {
  switch (kind) {
    case OrderKind::kSequential:
      return "sequential";
    case OrderKind::kShuffle:
      return "shuffle";
    case OrderKind::kBlockShuffle:
      return "block-shuffle";
  }
  return "?";
}

StatusOr<OrderKind> ParseOrderKind(std::string_view name) {
  if (name == "sequential") return OrderKind::kSequential;
  if (name == "shuffle") return OrderKind::kShuffle;
  if (name == "block-shuffle") return OrderKind::kBlockShuffle;
  return InvalidArgumentError("unknown order \"" + std::string(name) +
                              "\" (expected sequential, shuffle or block-shuffle)");
}

StatusOr<SampleOrder> SampleOrder::Create(uint64_t dataset_size, const OrderOptions& o) {
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size) {
    return InvalidArgumentError("rank " + std::to_string(o.rank) + " is not in [0, world_size " +
                                std::to_string(o.world_size) + ")");
  }
  if (o.num_workers < 1 || o.worker < 0 || o.worker >= o.num_workers) {
    return InvalidArgumentError("worker " + std::to_string(o.worker) + " is not in [0, num_workers " +
                                std::to_string(o.num_workers) + ")");
  }
  if (o.batch_size == 0) return InvalidArgumentError("batch_size must be > 0");
  if (o.kind == OrderKind::kBlockShuffle && (o.block_size == 0 || o.window_blocks == 0)) {
    return InvalidArgumentError("block_size and window_blocks must be > 0");
  }
  size_t global_batch = 0;
  if (__builtin_mul_overflow(o.batch_size, static_cast<size_t>(o.world_size), &global_batch)) {
    return InvalidArgumentError("batch_size " + std::to_string(o.batch_size) + " x world_size " +
                                std::to_string(o.world_size) + " overflows");
  }
  SampleOrder s;
  s.options_ = o;
  s.n_ = o.global_order != nullptr ? o.global_order->epoch_length() : dataset_size;
  dataset_size = s.n_;
  if (o.drop_last && dataset_size > 0 && dataset_size < global_batch) {
    return InvalidArgumentError("drop_last: " + std::to_string(dataset_size) +
                                " samples cannot fill one global batch of " + std::to_string(global_batch) +
                                " (batch_size " + std::to_string(o.batch_size) + " x world_size " +
                                std::to_string(o.world_size) + ")");
  }
  return s;
}

uint64_t SampleOrder::Cut(uint64_t start) const {
  const uint64_t rest = start < n_ ? n_ - start : 0;
  const uint64_t w = static_cast<uint64_t>(options_.world_size);
  if (options_.drop_last) {
    const uint64_t gb = options_.batch_size * w;
    return rest / gb * gb;
  }
  return (rest + w - 1) / w * w;
}

uint64_t SampleOrder::samples_per_rank(uint64_t start) const {
  return Cut(start) / static_cast<uint64_t>(options_.world_size);
}

uint64_t SampleOrder::rank_batches(uint64_t start) const {
  const uint64_t b = options_.batch_size;
  return (samples_per_rank(start) + b - 1) / b;  // drop_last: a multiple of b
}

uint64_t SampleOrder::batches_per_epoch(uint64_t start) const {
  const uint64_t total = rank_batches(start);
  const uint64_t w = static_cast<uint64_t>(options_.num_workers);
  const uint64_t k = static_cast<uint64_t>(options_.worker);
  return total > k ? (total - k + w - 1) / w : 0;
}

uint64_t SampleOrder::GlobalConsumed(uint64_t start, uint64_t rank_batch) const {
  const uint64_t rest = start < n_ ? n_ - start : 0;
  const uint64_t gb = options_.batch_size * static_cast<uint64_t>(options_.world_size);
  uint64_t done = 0;
  if (__builtin_mul_overflow(rank_batch, gb, &done)) done = rest;
  return std::min(start, n_) + std::min(rest, done);
}

std::vector<uint64_t> SampleOrder::GlobalOrder(uint64_t epoch) const {
  if (options_.global_order != nullptr) return options_.global_order->GlobalOrder(epoch, options_);
  std::vector<uint64_t> order(n_);
  std::iota(order.begin(), order.end(), uint64_t{0});
  if (options_.kind == OrderKind::kSequential || n_ < 2) return order;
  SplitMix64 rng(MixSeed(options_.seed, epoch, 0x5EED));
  if (options_.kind == OrderKind::kShuffle) {
    Shuffle(order.begin(), order.end(), &rng);
    return order;
  }
  // Block shuffle: permute the blocks, then shuffle within windows of them.
  const uint64_t bs = options_.block_size;
  const uint64_t blocks = (n_ + bs - 1) / bs;
  std::vector<uint64_t> perm(blocks);
  std::iota(perm.begin(), perm.end(), uint64_t{0});
  Shuffle(perm.begin(), perm.end(), &rng);
  size_t pos = 0;
  for (uint64_t b : perm) {
    const uint64_t begin = b * bs, end = std::min(n_, begin + bs);
    for (uint64_t i = begin; i < end; ++i) order[pos++] = i;
  }
  // Window boundaries follow the permuted blocks (a short block may sit anywhere).
  size_t start = 0;
  uint64_t in_window = 0;
  size_t cursor = 0;
  for (uint64_t b : perm) {
    cursor += std::min(n_, b * bs + bs) - b * bs;
    if (++in_window == options_.window_blocks) {
      Shuffle(order.begin() + start, order.begin() + cursor, &rng);
      start = cursor;
      in_window = 0;
    }
  }
  Shuffle(order.begin() + start, order.begin() + cursor, &rng);
  return order;
}

std::vector<uint64_t> SampleOrder::EpochSamples(uint64_t epoch, uint64_t start) const {
  return RankSamples(GlobalOrder(epoch), start);
}

std::vector<uint64_t> SampleOrder::RankSamples(const std::vector<uint64_t>& global, uint64_t start) const {
  std::vector<uint64_t> mine;
  if (global.empty()) return mine;
  const uint64_t per = samples_per_rank(start);
  mine.reserve(per);
  for (uint64_t i = 0; i < per; ++i) mine.push_back(global[GlobalIndex(i, start) % global.size()]);  // wraps: padding
  return mine;
}

uint64_t SampleOrder::GlobalIndex(uint64_t i, uint64_t start) const {
  // Rank batch j of the cut is the r-th slice of global batch j; every global
  // batch but the last is full (GB), the last is cut evenly among the ranks.
  const uint64_t b = options_.batch_size, w = static_cast<uint64_t>(options_.world_size);
  const uint64_t gb = b * w, j = i / b, within = i % b;
  const uint64_t rest = Cut(start) - std::min(Cut(start), j * gb);
  const uint64_t slice = std::min(b, rest / w);
  return start + j * gb + static_cast<uint64_t>(options_.rank) * slice + within;
}

SampleOrder::Range SampleOrder::BatchRange(uint64_t b, uint64_t start) const {
  const uint64_t per = samples_per_rank(start);
  const uint64_t rb = b * static_cast<uint64_t>(options_.num_workers) + static_cast<uint64_t>(options_.worker);
  Range r;
  r.begin = static_cast<size_t>(std::min(per, rb * options_.batch_size));
  r.end = static_cast<size_t>(std::min(per, r.begin + options_.batch_size));
  return r;
}

}  // namespace libshard::reader
