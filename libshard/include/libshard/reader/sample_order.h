// SampleOrder: which samples a data-parallel rank (and a loader worker) sees
// in an epoch, and in which batches. A pure function of the options and the
// epoch number, so every rank computes its own part without talking to the
// others, and a saved position (epoch, batch) restores exactly.
//
//   OrderOptions o;
//   o.kind = OrderKind::kShuffle; o.seed = 42;
//   o.rank = 1; o.world_size = 4; o.batch_size = 32;
//   LIBSHARD_ASSIGN_OR_RETURN(SampleOrder order, SampleOrder::Create(dataset_size, o));
//   std::vector<uint64_t> epoch3 = order.EpochSamples(3);      // this rank's samples
//   for (size_t b = 0; b < order.batches_per_epoch(); ++b) Batch(order.BatchSamples(epoch3, b));
//
// Orders, over the dataset's global sample numbers 0..n-1 (shards in the
// dataset's order, records in file order):
//   kSequential    0, 1, ..., n-1 every epoch.
//   kShuffle       a full permutation (Fisher-Yates) drawn from (seed, epoch):
//                  no shuffle buffer, every sample equally likely anywhere.
//   kBlockShuffle  quasi-random, as FFCV's: the samples are cut into blocks of
//                  `block_size` consecutive records, the blocks are permuted,
//                  and the samples within each window of `window_blocks`
//                  consecutive (permuted) blocks are shuffled together. Reads
//                  stay within a few blocks at a time (good for disks and
//                  pread), at some cost in randomness.
//
// Partitioning (the same rule as PyTorch's DistributedSampler, contiguous):
// the epoch's order is cut into world_size equal parts; rank r takes part r.
//   drop_last = false: each part has ceil(n / world_size) samples; the order
//     is padded by repeating its first samples, so up to world_size - 1
//     samples are seen twice in an epoch. The last batch of a part may be
//     short.
//   drop_last = true: each part has floor(n / world_size) samples; the (at
//     most world_size - 1) samples at the end of the epoch's order are not
//     seen in that epoch (a different set each shuffled epoch), and a short
//     last batch is dropped. Parts are then disjoint.
// Loader workers (num_workers > 1, e.g. PyTorch DataLoader workers) split a
// rank's batches round-robin: worker w takes batches w, w + W, w + 2W, ...
//
// Another global order (reader/global_order.h, e.g. a weighted mixture,
// reader/mixture.h): with OrderOptions::global_order set, the epoch's order
// and its length come from it instead of the orders above; the partition
// below is the same.
//
// Thread-safety: a value type; const methods are safe from any thread.
#ifndef LIBSHARD_READER_SAMPLE_ORDER_H_
#define LIBSHARD_READER_SAMPLE_ORDER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "libshard/status.h"
#include "libshard/util/random.h"

namespace libshard::reader {

class GlobalOrderSource;  // reader/global_order.h

enum class OrderKind { kSequential, kShuffle, kBlockShuffle };
// "sequential", "shuffle", "block-shuffle".
const char* OrderKindName(OrderKind kind);
StatusOr<OrderKind> ParseOrderKind(std::string_view name);

struct OrderOptions {
  // Default: kSequential.
  OrderKind kind = OrderKind::kSequential;
  // Shuffle seed; the epoch number is mixed in. Default: 0.
  uint64_t seed = 0;
  // kBlockShuffle: consecutive records per block. Default: 256.
  size_t block_size = 256;
  // kBlockShuffle: blocks shuffled together. Default: 4.
  size_t window_blocks = 4;
  // Data-parallel rank, 0 <= rank < world_size. Default: 0.
  int rank = 0;
  // Number of data-parallel ranks. Default: 1.
  int world_size = 1;
  // See the file comment. Default: false.
  bool drop_last = false;
  // Samples per batch (> 0). Default: 1.
  size_t batch_size = 1;
  // This loader worker, 0 <= worker < num_workers. Default: 0.
  int worker = 0;
  // Loader workers splitting this rank's batches. Default: 1.
  int num_workers = 1;
  // Where the epoch's global order and its length come from when not null
  // (reader/global_order.h): its samples must be < the dataset size. Null:
  // `kind` over 0..n-1. Default: null.
  std::shared_ptr<const GlobalOrderSource> global_order;
};

// The generator and seed mix of util/random.h, under the names this API
// has always used.
using util::MixSeed;
using util::SplitMix64;

class SampleOrder {
 public:
  // InvalidArgument for a bad rank / world_size / worker / batch size, or
  // for a dataset too small to give every rank a sample with drop_last.
  static StatusOr<SampleOrder> Create(uint64_t dataset_size, const OrderOptions& options);

  const OrderOptions& options() const { return options_; }
  // Samples in the epoch's global order: the dataset size, or
  // global_order->epoch_length().
  uint64_t dataset_size() const { return n_; }
  // Samples this rank sees per epoch (before the worker split).
  uint64_t samples_per_rank() const { return per_rank_; }
  // Batches of this rank per epoch (before the worker split).
  uint64_t rank_batches() const;
  // Batches this worker yields per epoch.
  uint64_t batches_per_epoch() const;

  // The whole epoch's order over all ranks (a permutation of 0..n-1 for the
  // shuffles; options().global_order's when set).
  std::vector<uint64_t> GlobalOrder(uint64_t epoch) const;
  // This rank's samples in the epoch, in order.
  std::vector<uint64_t> EpochSamples(uint64_t epoch) const;
  // Batch `b` (0 <= b < batches_per_epoch()) of this worker, from
  // EpochSamples(): a subrange of it.
  struct Range {
    size_t begin = 0;
    size_t end = 0;
  };
  Range BatchRange(uint64_t b) const;

 private:
  OrderOptions options_;
  uint64_t n_ = 0;
  uint64_t per_rank_ = 0;
};

}  // namespace libshard::reader

#endif  // LIBSHARD_READER_SAMPLE_ORDER_H_
