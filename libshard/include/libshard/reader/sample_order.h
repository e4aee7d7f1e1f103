// SampleOrder: which samples a data-parallel rank (and a loader worker) sees
// in an epoch, and in which batches. A pure function of the options and the
// epoch number, so every rank computes its own part without talking to the
// others, and a saved position restores exactly -- also on another number of
// ranks, workers or another batch size (elastic resume, below).
//
//   OrderOptions o;
//   o.kind = OrderKind::kShuffle; o.seed = 42;
//   o.rank = 1; o.world_size = 4; o.batch_size = 32;
//   LIBSHARD_ASSIGN_OR_RETURN(SampleOrder order, SampleOrder::Create(dataset_size, o));
//   EpochOrder epoch3 = order.Epoch(3);       // the global order, as a function
//   uint64_t first = epoch3.At(0);            // O(1) time and memory, any n
//   std::vector<uint64_t> mine = order.EpochSamples(3);      // this rank's samples
//   for (size_t b = 0; b < order.batches_per_epoch(); ++b) Batch(order.BatchRange(b));
//
// Orders, over the dataset's global sample numbers 0..n-1 (shards in the
// dataset's order, records in file order):
//   kSequential    0, 1, ..., n-1 every epoch.
//   kShuffle       a full permutation drawn from (seed, epoch): no shuffle
//                  buffer, every sample equally likely anywhere. A seeded
//                  bijection of [0, n) (util/permutation.h), so an epoch's
//                  order costs O(1) memory and its start O(1) work at any n.
//   kBlockShuffle  quasi-random, as FFCV's: the samples are cut into blocks of
//                  `block_size` consecutive records, the blocks are permuted,
//                  and the samples within each window of `window_blocks`
//                  consecutive (permuted) blocks are shuffled together. Reads
//                  stay within a few blocks at a time (good for disks and
//                  pread), at some cost in randomness. Bijections too (one of
//                  the blocks, one per window), O(1) memory.
// The values are pinned (tests/reader/sample_order_test.cc): a saved position
// continues in the same order in any later release. (Releases before the
// bijections drew kShuffle and kBlockShuffle by Fisher-Yates; their saved
// states carry no "permutation" (kPermutationName) and are refused.)
//
// Partitioning, global-batch-major (NOT PyTorch DistributedSampler's
// contiguous parts): with GB = batch_size * world_size, global batch k of the
// epoch is positions [k*GB, (k+1)*GB) of the epoch's global order, and rank r
// takes the r-th batch_size slice of it. So all ranks together consume the
// global order front to back, and after k batches per rank exactly k*GB
// samples of it are consumed whatever the shape: 8 ranks x 32 and 4 x 64 give
// the same global batches, sample for sample.
//   drop_last = false: the order is padded to a multiple of world_size by
//     repeating its first samples (up to world_size - 1 of them seen twice in
//     an epoch), so every rank has the same number of batches; the last
//     global batch may be short, and is cut evenly (each rank gets the same
//     number of its samples).
//   drop_last = true: the incomplete last global batch (up to GB - 1 samples
//     at the end of the epoch's order, a different set each shuffled epoch)
//     is dropped. Ranks' samples are then disjoint and every batch is full.
// Loader workers (num_workers > 1, e.g. PyTorch DataLoader workers) split a
// rank's batches round-robin: worker w takes batches w, w + W, w + 2W, ...
//
// Elastic resume: an epoch may start at a global offset `start` (the samples
// of its global order already consumed, by a run of any shape): the rest of
// the order, global_order[start:], is cut by the rule above as if it were the
// whole epoch (padding, when drop_last = false, repeats the epoch's first
// samples), so each remaining sample is seen once among the new ranks and
// workers. The methods taking `start` default to 0, the whole epoch; the next
// epoch always starts at 0.
//
// Another global order (reader/global_order.h, e.g. a weighted mixture,
// reader/mixture.h): with OrderOptions::global_order set, the epoch's order
// and its length come from it instead of the orders above; the partition
// and the elastic start are the same.
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
#include "libshard/util/permutation.h"
#include "libshard/util/random.h"

namespace libshard::reader {

class GlobalOrderSource;  // reader/global_order.h
class SampleOrder;

enum class OrderKind { kSequential, kShuffle, kBlockShuffle };
// The name of the shuffles' permutation, which saved positions carry
// ("permutation") so that a position saved under another one is refused
// instead of continuing in an order that is not the saved run's.
inline constexpr char kPermutationName[] = "feistel8/1";
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

// One epoch's global order as a function of the position: At(p) is the
// global sample number at position p of the epoch, in O(1) time and memory
// for the orders above; a GlobalOrderSource's order (a mixture's) is held
// whole, shared between copies. A value type, cheap to copy; safe from any
// thread.
class EpochOrder {
 public:
  EpochOrder() = default;
  // Positions in the epoch: SampleOrder::dataset_size().
  uint64_t size() const { return n_; }
  // The sample at `position` < size().
  uint64_t At(uint64_t position) const;
  // All of them, in order (size() values: for tests and small sets).
  std::vector<uint64_t> ToVector() const;

 private:
  friend class SampleOrder;
  uint64_t BlockShuffleAt(uint64_t position) const;
  OrderKind kind_ = OrderKind::kSequential;
  uint64_t n_ = 0;
  uint64_t seed_ = 0;           // kBlockShuffle: the windows' keys derive from it
  uint64_t block_size_ = 1;     // kBlockShuffle
  uint64_t window_blocks_ = 1;  // kBlockShuffle
  uint64_t short_at_ = 0;       // kBlockShuffle: the permuted place of the short last block
  uint64_t short_size_ = 0;     // kBlockShuffle: its records (block_size_ when none is short)
  util::RandomPermutation perm_;  // kShuffle: of the samples; kBlockShuffle: of the blocks
  std::shared_ptr<const std::vector<uint64_t>> held_;  // a GlobalOrderSource's order
};

class SampleOrder {
 public:
  // InvalidArgument for a bad rank / world_size / worker / batch size, or
  // for a dataset too small to fill one global batch with drop_last.
  static StatusOr<SampleOrder> Create(uint64_t dataset_size, const OrderOptions& options);

  const OrderOptions& options() const { return options_; }
  // Samples in the epoch's global order: the dataset size, or
  // global_order->epoch_length().
  uint64_t dataset_size() const { return n_; }
  // Samples this rank sees in the epoch from global offset `start` (padding
  // included; before the worker split). 0 when start >= dataset_size().
  uint64_t samples_per_rank(uint64_t start = 0) const;
  // Batches of this rank in the epoch from `start` (before the worker split).
  uint64_t rank_batches(uint64_t start = 0) const;
  // Batches this worker yields in the epoch from `start`.
  uint64_t batches_per_epoch(uint64_t start = 0) const;
  // Samples of the epoch's global order consumed (by all ranks together) once
  // every rank has had `rank_batch` batches of the epoch from `start`
  // (0 <= rank_batch <= rank_batches(start)): start + min(rest, rank_batch *
  // GB). Padding is not counted: the end of the epoch is dataset_size().
  uint64_t GlobalConsumed(uint64_t start, uint64_t rank_batch) const;

  // The epoch's global order over all ranks, as a function (O(1) memory but
  // for a GlobalOrderSource's, which it holds).
  EpochOrder Epoch(uint64_t epoch) const;
  // The same, all of it (a permutation of 0..n-1 for the shuffles;
  // options().global_order's when set): n values.
  std::vector<uint64_t> GlobalOrder(uint64_t epoch) const;
  // This rank's samples in the epoch from `start`, in order (its batches one
  // after another; BatchRange() indexes it): samples_per_rank(start) values.
  std::vector<uint64_t> EpochSamples(uint64_t epoch, uint64_t start = 0) const;
  // The same from an epoch's order.
  std::vector<uint64_t> RankSamples(const EpochOrder& global, uint64_t start = 0) const;
  // Where this rank's sample `i` (an index of EpochSamples(epoch, start))
  // sits in the epoch's global order: a position in [start, start +
  // padded rest); the sample is Epoch(epoch).At(position % dataset_size()).
  uint64_t GlobalIndex(uint64_t i, uint64_t start = 0) const;
  // Batch `b` (0 <= b < batches_per_epoch(start)) of this worker, from
  // EpochSamples(epoch, start): a subrange of it.
  struct Range {
    size_t begin = 0;
    size_t end = 0;
  };
  Range BatchRange(uint64_t b, uint64_t start = 0) const;

 private:
  // The rest of the epoch from `start`, after padding or dropping.
  uint64_t Cut(uint64_t start) const;
  OrderOptions options_;
  uint64_t n_ = 0;
};

}  // namespace libshard::reader

#endif  // LIBSHARD_READER_SAMPLE_ORDER_H_
