// The global order of a weighted mixture (reader/mixture.h).
#include "libshard/reader/mixture.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <queue>
#include <string>
#include <tuple>
#include <utility>

#include "libshard/util/random.h"

namespace libshard::reader {

StatusOr<std::shared_ptr<const MixtureOrder>> MixtureOrder::Create(std::vector<uint64_t> sizes,
                                                                   std::vector<double> weights,
                                                                   uint64_t samples_per_epoch) {
  if (sizes.empty()) return InvalidArgumentError("mixture: no sources");
  if (weights.size() != sizes.size()) {
    return InvalidArgumentError("mixture: " + std::to_string(weights.size()) + " weights for " +
                                std::to_string(sizes.size()) + " sources (one weight per source)");
  }
  double sum = 0;
  for (size_t s = 0; s < weights.size(); ++s) {
    if (!std::isfinite(weights[s]) || weights[s] < 0) {
      return InvalidArgumentError("mixture: the weight of source " + std::to_string(s) + " is " +
                                  std::to_string(weights[s]) + " (weights are finite and >= 0)");
    }
    if (weights[s] > 0 && sizes[s] == 0) {
      return InvalidArgumentError("mixture: source " + std::to_string(s) + " has weight " + std::to_string(weights[s]) +
                                  " and no samples");
    }
    sum += weights[s];
  }
  if (!(sum > 0) || !std::isfinite(sum))
    return InvalidArgumentError("mixture: the weights sum to " + std::to_string(sum));
  std::shared_ptr<MixtureOrder> m(new MixtureOrder());
  m->offsets_.push_back(0);
  for (uint64_t n : sizes) {
    if (n > kMaxEpochLength - m->offsets_.back()) {  // the sum so far is at most the bound
      return InvalidArgumentError("mixture: the sources hold more than " + std::to_string(kMaxEpochLength) +
                                  " samples together (a mixture's epoch order is held whole)");
    }
    m->offsets_.push_back(m->offsets_.back() + n);
  }
  m->length_ = samples_per_epoch == 0 ? m->offsets_.back() : samples_per_epoch;
  if (m->length_ > kMaxEpochLength) {
    return InvalidArgumentError("mixture: samples_per_epoch " + std::to_string(m->length_) + " is more than " +
                                std::to_string(kMaxEpochLength) +
                                " (an epoch's order is held whole, 12 bytes a sample: split a longer epoch into "
                                "several)");
  }
  for (double& w : weights) w /= sum;
  m->sizes_ = std::move(sizes);
  m->weights_ = std::move(weights);
  return std::shared_ptr<const MixtureOrder>(std::move(m));
}

size_t MixtureOrder::SourceOf(uint64_t sample) const {
  auto it = std::upper_bound(offsets_.begin(), offsets_.end(), sample);
  return static_cast<size_t>(it - offsets_.begin()) - 1;
}

std::vector<uint32_t> MixtureOrder::Schedule(uint64_t epoch, const OrderOptions& o) const {
  // Stride scheduling: each source's picks are due at (k + phase) / w; a
  // position takes the earliest due pick. Due times are computed afresh from
  // integers (no accumulated rounding), so every platform gives the same.
  const uint64_t draw_epoch = o.kind == OrderKind::kSequential ? 0 : epoch;
  util::SplitMix64 rng(util::MixSeed(o.seed, draw_epoch, 0x313C7));
  using Due = std::tuple<double, uint32_t>;  // (due time, source)
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> queue;
  std::vector<double> phase(sizes_.size());
  std::vector<uint64_t> picks(sizes_.size(), 0);
  for (size_t s = 0; s < sizes_.size(); ++s) {
    phase[s] = rng.Uniform();
    if (weights_[s] > 0) queue.emplace(phase[s] / weights_[s], static_cast<uint32_t>(s));
  }
  std::vector<uint32_t> out;
  out.reserve(length_);
  while (out.size() < length_) {
    const uint32_t s = std::get<1>(queue.top());
    queue.pop();
    out.push_back(s);
    ++picks[s];
    queue.emplace((static_cast<double>(picks[s]) + phase[s]) / weights_[s], s);
  }
  return out;
}

std::vector<uint64_t> MixtureOrder::GlobalOrder(uint64_t epoch, const OrderOptions& o) const {
  const std::vector<uint32_t> schedule = Schedule(epoch, o);
  // Each source's samples pass after pass, in the order `kind` gives a
  // dataset of its size under the seed (seed, source, pass).
  struct Cursor {
    std::vector<uint64_t> pass;  // the current pass's order
    uint64_t next = 0;           // its next index
    uint64_t passes = 0;         // passes started
  };
  std::vector<Cursor> cursors(sizes_.size());
  OrderOptions inner;
  inner.kind = o.kind;
  inner.block_size = o.block_size;
  inner.window_blocks = o.window_blocks;
  std::vector<uint64_t> out;
  out.reserve(schedule.size());
  for (uint32_t s : schedule) {
    Cursor& c = cursors[s];
    if (c.next == c.pass.size()) {
      inner.seed = util::MixSeed(o.seed, s, c.passes++);
      auto order = SampleOrder::Create(sizes_[s], inner);
      if (order.ok()) {
        c.pass = order->GlobalOrder(epoch);
      } else {  // a block geometry of 0: the loader refuses it before any order is drawn
        c.pass.resize(sizes_[s]);
        std::iota(c.pass.begin(), c.pass.end(), uint64_t{0});
      }
      c.next = 0;
    }
    out.push_back(offsets_[s] + c.pass[c.next++]);
  }
  return out;
}

}  // namespace libshard::reader
