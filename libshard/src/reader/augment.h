// Private: what the loader asks of each sample's pixels. Augment::kNone: the
// output size, reached through the options' resize mode when the record has
// another size. kRandomResizedCrop: torchvision's RandomResizedCrop box and
// a horizontal flip, drawn from the sample's own generator, so a sample's
// augmentation depends on (seed, epoch, sample) only, never on threads.
#ifndef LIBSHARD_SRC_READER_AUGMENT_H_
#define LIBSHARD_SRC_READER_AUGMENT_H_

#include <cstdint>

#include "libshard/image/image.h"
#include "libshard/reader/loader_options.h"
#include "libshard/reader/record_pixels.h"
#include "libshard/util/random.h"

namespace libshard::reader {

// The generator of sample `sample`'s augmentation at `epoch`.
util::SplitMix64 AugmentRng(uint64_t seed, uint64_t epoch, uint64_t sample);

// torchvision.transforms.RandomResizedCrop.get_params, with our generator:
// up to 10 draws of (scale, log-ratio) and a position, then the centre crop
// of the ratio range.
image::PixelRect RandomResizedCropBox(int width, int height, const RandomResizedCropOptions& o, util::SplitMix64* rng);

// The pixels a record of `width` x `height` (as a reader sees it) gives for
// `options`; with kRandomResizedCrop the crop box and then the flip are
// drawn from `rng`, in that order.
PixelRequest SamplePixelRequest(const BatchLoaderOptions& options, int width, int height, util::SplitMix64* rng);

}  // namespace libshard::reader

#endif  // LIBSHARD_SRC_READER_AUGMENT_H_
