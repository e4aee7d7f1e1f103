#include "libshard/reader/sample_order.h"

#include <algorithm>
#include <memory>
#include <string>

#include "libshard/reader/global_order.h"

namespace libshard::reader {

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
  size_t window_span = 0;
  if (o.kind == OrderKind::kBlockShuffle && __builtin_mul_overflow(o.block_size, o.window_blocks, &window_span)) {
    return InvalidArgumentError("block_size " + std::to_string(o.block_size) + " x window_blocks " +
                                std::to_string(o.window_blocks) + " overflows");
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

EpochOrder SampleOrder::Epoch(uint64_t epoch) const {
  EpochOrder e;
  e.n_ = n_;
  if (options_.global_order != nullptr) {
    e.held_ = std::make_shared<const std::vector<uint64_t>>(options_.global_order->GlobalOrder(epoch, options_));
    e.n_ = e.held_->size();
    return e;
  }
  if (n_ < 2 || options_.kind == OrderKind::kSequential) return e;
  e.kind_ = options_.kind;
  e.seed_ = MixSeed(options_.seed, epoch, 0x5EED);
  if (options_.kind == OrderKind::kShuffle) {
    e.perm_ = util::RandomPermutation(n_, e.seed_);
    return e;
  }
  // Block shuffle: a permutation of the blocks, the last one short when the
  // block size does not divide n; it sits wherever the permutation puts it.
  e.block_size_ = options_.block_size;
  e.window_blocks_ = options_.window_blocks;
  const uint64_t blocks = (n_ + e.block_size_ - 1) / e.block_size_;
  e.perm_ = util::RandomPermutation(blocks, e.seed_);
  e.short_size_ = n_ - (blocks - 1) * e.block_size_;
  e.short_at_ = e.short_size_ == e.block_size_ ? blocks : e.perm_.Inverse(blocks - 1);
  return e;
}

uint64_t EpochOrder::At(uint64_t position) const {
  if (held_ != nullptr) return (*held_)[position];
  switch (kind_) {
    case OrderKind::kSequential:
      return position;
    case OrderKind::kShuffle:
      return perm_(position);
    case OrderKind::kBlockShuffle:
      return BlockShuffleAt(position);
  }
  return position;
}

// The samples of window j (permuted blocks [jW, jW + W)) are positions
// [start(j), start(j) + size(j)) of the epoch: W full blocks each, less what
// the short block lacks in the window that holds it (and in the starts of
// the windows after it). Within a window, one more permutation (keyed by the
// epoch and the window) shuffles its samples.
uint64_t EpochOrder::BlockShuffleAt(uint64_t position) const {
  const uint64_t bs = block_size_, w = window_blocks_, blocks = perm_.size();
  const uint64_t lack = bs - short_size_;  // 0 when no block is short
  const uint64_t windows = (blocks + w - 1) / w;
  auto start_of = [&](uint64_t j) {  // j <= windows; j * w * bs <= n + lack
    const uint64_t first = j * w;
    return first * bs - (short_at_ < first ? lack : 0);
  };
  uint64_t j = position / bs / w;  // never past the window; at most one short of it
  if (j + 1 < windows && position >= start_of(j + 1)) ++j;
  const uint64_t first = j * w, end = std::min(blocks, first + w);
  const bool holds_short = short_at_ >= first && short_at_ < end;
  const uint64_t size = (end - first) * bs - (holds_short ? lack : 0);
  const uint64_t q = util::RandomPermutation(size, MixSeed(seed_, j, 0xB10C))(position - start_of(j));
  // q: a place in the window's blocks laid end to end, the short one shorter.
  uint64_t block, within;
  const uint64_t before = holds_short ? (short_at_ - first) * bs : size;  // samples before the short block
  if (q < before) {
    block = first + q / bs;
    within = q % bs;
  } else if (q < before + short_size_) {
    block = short_at_;
    within = q - before;
  } else {
    const uint64_t r = q - before - short_size_;
    block = short_at_ + 1 + r / bs;
    within = r % bs;
  }
  return perm_(block) * bs + within;
}

std::vector<uint64_t> EpochOrder::ToVector() const {
  std::vector<uint64_t> v(n_);
  for (uint64_t i = 0; i < n_; ++i) v[i] = At(i);
  return v;
}

std::vector<uint64_t> SampleOrder::GlobalOrder(uint64_t epoch) const { return Epoch(epoch).ToVector(); }

std::vector<uint64_t> SampleOrder::EpochSamples(uint64_t epoch, uint64_t start) const {
  return RankSamples(Epoch(epoch), start);
}

std::vector<uint64_t> SampleOrder::RankSamples(const EpochOrder& global, uint64_t start) const {
  std::vector<uint64_t> mine;
  if (global.size() == 0) return mine;
  const uint64_t per = samples_per_rank(start);
  mine.reserve(per);
  // The index wraps for the padding.
  for (uint64_t i = 0; i < per; ++i) mine.push_back(global.At(GlobalIndex(i, start) % global.size()));
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
