// GlobalOrderSource: where an epoch's global order comes from when it is not
// one of SampleOrder's own (sequential, shuffle, block shuffle over the
// dataset's 0..n-1). SampleOrder cuts whatever order it gives into ranks and
// workers the same way (reader/sample_order.h), so a position saved as
// (epoch, samples of the global order consumed) restores exactly whatever
// the source is. The one implementation is MixtureOrder (reader/mixture.h).
//
// Contract: GlobalOrder() is a pure function of (epoch, options): the same
// values on every rank, every call and every platform; each value is a
// global sample number of the dataset the order was made for.
//
// Thread-safety: implementations are immutable; const methods may be called
// from any thread.
#ifndef LIBSHARD_READER_GLOBAL_ORDER_H_
#define LIBSHARD_READER_GLOBAL_ORDER_H_

#include <cstdint>
#include <vector>

#include "libshard/reader/sample_order.h"

namespace libshard::reader {

class GlobalOrderSource {
 public:
  virtual ~GlobalOrderSource() = default;
  // Samples in every epoch's order.
  virtual uint64_t epoch_length() const = 0;
  // The epoch's order, epoch_length() global sample numbers. `options`: the
  // loader's order options (kind, seed, block geometry), for the source to
  // draw its randomness from; their partition fields are not used.
  virtual std::vector<uint64_t> GlobalOrder(uint64_t epoch, const OrderOptions& options) const = 0;
};

}  // namespace libshard::reader

#endif  // LIBSHARD_READER_GLOBAL_ORDER_H_
