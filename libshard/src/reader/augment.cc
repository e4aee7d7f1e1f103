// Per-sample geometry and augmentation (augment.h).
#include "reader/augment.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "libshard/reader/sample_decoder.h"

namespace libshard::reader {
namespace {

constexpr uint64_t kAugmentSalt = 0xA0F3C1D2E5B69788ull;

}  // namespace

util::SplitMix64 AugmentRng(uint64_t seed, uint64_t epoch, uint64_t sample) {
  return util::SplitMix64(util::MixSeed(seed ^ kAugmentSalt, epoch, sample));
}

image::PixelRect RandomResizedCropBox(int width, int height, const RandomResizedCropOptions& o, util::SplitMix64* rng) {
  const double area = static_cast<double>(width) * height;
  const double log_r0 = std::log(o.ratio_min), log_r1 = std::log(o.ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * (o.scale_min + (o.scale_max - o.scale_min) * rng->Uniform());
    const double ratio = std::exp(log_r0 + (log_r1 - log_r0) * rng->Uniform());
    const int w = static_cast<int>(std::lround(std::sqrt(target * ratio)));
    const int h = static_cast<int>(std::lround(std::sqrt(target / ratio)));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      const int y = static_cast<int>(rng->Below(static_cast<uint64_t>(height - h + 1)));
      const int x = static_cast<int>(rng->Below(static_cast<uint64_t>(width - w + 1)));
      return {x, y, w, h};
    }
  }
  const double in_ratio = static_cast<double>(width) / height;
  int w = width, h = height;
  if (in_ratio < o.ratio_min) {
    h = std::max(1, static_cast<int>(std::lround(w / o.ratio_min)));
  } else if (in_ratio > o.ratio_max) {
    w = std::max(1, static_cast<int>(std::lround(h * o.ratio_max)));
  }
  return {(width - w) / 2, (height - h) / 2, w, h};
}

image::PixelRect RandomResizedCropOf(const BatchLoaderOptions& options, uint64_t epoch, uint64_t sample, int width,
                                     int height) {
  util::SplitMix64 rng = AugmentRng(options.order.seed, epoch, sample);
  return RandomResizedCropBox(width, height, options.rrc, &rng);
}

PixelRequest SamplePixelRequest(const BatchLoaderOptions& opt, int width, int height, util::SplitMix64* rng) {
  PixelRequest req;
  req.width = opt.width;
  req.height = opt.height;
  req.channels = opt.channels;
  req.crop_decode = opt.crop_decode;
  req.dct_scale = opt.dct_scale;
  req.mask_fill = opt.mask_fill;
  req.spec.filter = opt.filter;
  if (opt.augment == Augment::kNone) {
    if (width != opt.width || height != opt.height) {
      req.spec.mode = opt.resize;
      req.spec.width = opt.width;
      req.spec.height = opt.height;
    }
  } else {
    req.spec.crop = RandomResizedCropBox(width, height, opt.rrc, rng);
    req.spec.mode = image::ResizeMode::kStretch;
    req.spec.width = opt.width;
    req.spec.height = opt.height;
    req.flip = opt.rrc.flip && (rng->Next() >> 63) != 0;
  }
  return req;
}

}  // namespace libshard::reader
