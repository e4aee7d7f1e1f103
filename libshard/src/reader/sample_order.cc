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
  SampleOrder s;
  s.options_ = o;
  s.n_ = o.global_order != nullptr ? o.global_order->epoch_length() : dataset_size;
  dataset_size = s.n_;
  const uint64_t w = static_cast<uint64_t>(o.world_size);
  s.per_rank_ = o.drop_last ? dataset_size / w : (dataset_size + w - 1) / w;
  if (dataset_size > 0 && s.per_rank_ == 0) {
    return InvalidArgumentError("drop_last: " + std::to_string(dataset_size) + " samples cannot give each of " +
                                std::to_string(w) + " ranks one");
  }
  return s;
}

uint64_t SampleOrder::rank_batches() const {
  const uint64_t b = options_.batch_size;
  return options_.drop_last ? per_rank_ / b : (per_rank_ + b - 1) / b;
}

uint64_t SampleOrder::batches_per_epoch() const {
  const uint64_t total = rank_batches();
  const uint64_t w = static_cast<uint64_t>(options_.num_workers);
  const uint64_t k = static_cast<uint64_t>(options_.worker);
  return total > k ? (total - k + w - 1) / w : 0;
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

std::vector<uint64_t> SampleOrder::EpochSamples(uint64_t epoch) const {
  std::vector<uint64_t> all = GlobalOrder(epoch);
  std::vector<uint64_t> mine;
  if (n_ == 0) return mine;
  mine.reserve(per_rank_);
  const uint64_t begin = static_cast<uint64_t>(options_.rank) * per_rank_;
  for (uint64_t i = 0; i < per_rank_; ++i) mine.push_back(all[(begin + i) % n_]);  // wraps: padding
  return mine;
}

SampleOrder::Range SampleOrder::BatchRange(uint64_t b) const {
  const uint64_t rb = b * static_cast<uint64_t>(options_.num_workers) + static_cast<uint64_t>(options_.worker);
  Range r;
  r.begin = static_cast<size_t>(std::min(per_rank_, rb * options_.batch_size));
  r.end = static_cast<size_t>(std::min(per_rank_, r.begin + options_.batch_size));
  return r;
}

}  // namespace libshard::reader
