// MixtureOrder: the global order of a weighted mixture of datasets (a 60/30/10
// blend, a rare source upsampled), over the concatenated numbering: source
// s's sample i is global sample offset_s + i, offset_s the sum of the sizes
// before it (Dataset::OpenMixture numbers its sources so).
//
//   LIBSHARD_ASSIGN_OR_RETURN(auto mix, MixtureOrder::Create({1000, 500, 80}, {0.6, 0.3, 0.1}));
//   OrderOptions o;
//   o.kind = OrderKind::kShuffle; o.seed = 7;
//   o.global_order = mix;                   // SampleOrder cuts it into ranks and workers
//   std::vector<uint64_t> epoch0 = mix->GlobalOrder(0, o);   // 1580 samples
//
// The order of an epoch is two things:
//   - which source each position takes: a deterministic interleave, stride
//     scheduling over the normalised weights w_s: source s's k-th pick has
//     the due time (k + phase_s) / w_s and positions take the picks in due
//     time order (ties: the lower source). The phases (in [0, 1)) are drawn
//     from (seed, epoch), or from the seed alone for OrderKind::kSequential.
//     Every window of L consecutive positions holds w_s * L picks of s up to
//     a bound below 2 (tests/reader/mixture_test.cc measures it), so short
//     runs are on target too -- no coin per sample;
//   - which sample each pick of s is: s's samples in its own order, pass
//     after pass without replacement within a pass. Pass p is the order
//     `options.kind` gives a dataset of s's size under the seed
//     MixSeed(seed, s, p) (sequential: 0..n_s-1; shuffle: a permutation drawn
//     from that seed and the epoch; block shuffle: its blocks). A source
//     that runs out before the epoch ends starts its next pass (upsampling);
//     one with more samples than its picks leaves the rest for no one that
//     epoch (another epoch draws other ones under a shuffle).
// Epoch length: samples_per_epoch, by default the sum of the sizes.
// A sample drawn twice in an epoch (upsampling) gets the same augmentation
// both times (the loader draws it from (seed, epoch, sample)).
//
// Thread-safety: immutable after Create(); any thread.
#ifndef LIBSHARD_READER_MIXTURE_H_
#define LIBSHARD_READER_MIXTURE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "libshard/reader/global_order.h"
#include "libshard/status.h"

namespace libshard::reader {

class MixtureOrder : public GlobalOrderSource {
 public:
  // The most samples an epoch may have, and the most the sources may hold
  // together: 2^27 (134,217,728). An epoch's order is held whole (8 bytes a
  // position, and 4 for its schedule) as is each source's current pass (8
  // bytes a sample), so the bound keeps an epoch under about 2.5 GiB.
  static constexpr uint64_t kMaxEpochLength = uint64_t{1} << 27;

  // `sizes`: samples of each source, in order; `weights`: one per source,
  // finite and >= 0, not all 0 (normalised to sum 1); `samples_per_epoch`: 0
  // for the sum of the sizes. InvalidArgument naming the source (its index)
  // for a weight count that differs, a weight that is negative or not
  // finite, all weights 0, a source with a weight > 0 and no samples, or
  // sources or an epoch longer than kMaxEpochLength (naming
  // samples_per_epoch).
  static StatusOr<std::shared_ptr<const MixtureOrder>> Create(std::vector<uint64_t> sizes, std::vector<double> weights,
                                                              uint64_t samples_per_epoch = 0);

  uint64_t epoch_length() const override { return length_; }
  std::vector<uint64_t> GlobalOrder(uint64_t epoch, const OrderOptions& options) const override;

  size_t num_sources() const { return sizes_.size(); }
  const std::vector<uint64_t>& sizes() const { return sizes_; }
  // The normalised weights (sum 1).
  const std::vector<double>& weights() const { return weights_; }
  // Source s's first global sample number.
  uint64_t offset(size_t s) const { return offsets_[s]; }
  // The source of a global sample number (< the sum of the sizes).
  size_t SourceOf(uint64_t sample) const;
  // Which source each position of the epoch's order takes (the interleave
  // alone).
  std::vector<uint32_t> Schedule(uint64_t epoch, const OrderOptions& options) const;

 private:
  MixtureOrder() = default;
  std::vector<uint64_t> sizes_;
  std::vector<uint64_t> offsets_;  // offsets_[s]: first sample of s; back(): the sum
  std::vector<double> weights_;
  uint64_t length_ = 0;
};

}  // namespace libshard::reader

#endif  // LIBSHARD_READER_MIXTURE_H_
