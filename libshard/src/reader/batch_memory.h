// The loader's own heap ring of batches: how many slots it has, bounded by
// the machine's memory. Private to the reader module.
#ifndef LIBSHARD_READER_BATCH_MEMORY_H_
#define LIBSHARD_READER_BATCH_MEMORY_H_

#include <cstddef>
#include <cstdint>

#include "libshard/reader/loader_options.h"
#include "libshard/status.h"

namespace libshard::reader {

// Slots of the ring (prefetch, at least 1, plus the consumer's) of batches of
// `samples` samples of image_bytes + a label + mask_bytes each; InvalidArgument
// naming batch_size or prefetch, the bytes and this machine's memory, when
// they would need more than half of it.
StatusOr<size_t> RingSlots(const BatchLoaderOptions& options, uint64_t samples, uint64_t image_bytes,
                           uint64_t mask_bytes);

}  // namespace libshard::reader

#endif  // LIBSHARD_READER_BATCH_MEMORY_H_
