// The loader's options and their one check (loader_options.h).
#include "libshard/reader/loader_options.h"

#include <string>

#include "libshard/util/threads.h"

namespace libshard::reader {

const char* AugmentName(Augment a) { return a == Augment::kNone ? "none" : "random-resized-crop"; }

StatusOr<Augment> ParseAugment(std::string_view name) {
  if (name == "none") return Augment::kNone;
  if (name == "random-resized-crop") return Augment::kRandomResizedCrop;
  return InvalidArgumentError("unknown augment \"" + std::string(name) + "\" (expected none or random-resized-crop)");
}

Status ResolveStoredShape(const Dataset& dataset, BatchLoaderOptions* options) {
  if (dataset.size() == 0) {  // said first: no size, no batch, nothing to load
    return InvalidArgumentError(
        "no samples: the sources hold 0 records" +
        (dataset.num_shards() == 0
             ? std::string(" (no shards)")
             : " (" + std::to_string(dataset.num_shards()) + " shard(s), the first " + dataset.shard_path(0) + ")") +
        "; an empty dataset cannot be loaded");
  }
  const StoredShape& stored = dataset.stored_shape();
  if (options->width == 0 && options->height == 0) {
    if (!stored.unknown.empty()) {
      return InvalidArgumentError("image_size: not given, and the stored image size is unknown (" + stored.unknown +
                                  "); give the output size (image_size=(height, width))");
    }
    if (stored.width == 0 || stored.height == 0) {
      return InvalidArgumentError("image_size: not given, and the stored images do not all have one size (" +
                                  stored.sizes + "); give the output size (image_size=(height, width))");
    }
    options->width = stored.width;
    options->height = stored.height;
  }
  if (options->channels == 0) options->channels = stored.channels == 1 || stored.channels == 2 ? 1 : 3;
  return Status::OK();
}

namespace {

Status CheckBoxOptions(const BatchLoaderOptions& o) {
  if (o.boxes && (o.max_boxes < 1 || o.max_boxes > 100000 || !(o.box_min_visible >= 0 && o.box_min_visible <= 1))) {
    return InvalidArgumentError("boxes: need 1 <= max_boxes <= 100000 and 0 <= box_min_visible <= 1, got max_boxes " +
                                std::to_string(o.max_boxes) + ", box_min_visible " + std::to_string(o.box_min_visible));
  }
  return Status::OK();
}

}  // namespace

Status ResolveLoaderOptions(const Dataset& dataset, BatchLoaderOptions* options) {
  LIBSHARD_RETURN_IF_ERROR(ResolveStoredShape(dataset, options));
  if (options->batch_size == 0) return InvalidArgumentError("batch_size must be > 0");
  if (options->width <= 0 || options->height <= 0 || options->width > 65535 || options->height > 65535) {
    return InvalidArgumentError("image size " + std::to_string(options->width) + "x" +
                                std::to_string(options->height) + " out of range");
  }
  if (options->channels != 1 && options->channels != 3) return InvalidArgumentError("channels must be 1 or 3");
  LIBSHARD_RETURN_IF_ERROR(util::CheckThreadCount(options->threads));
  options->threads = util::ThreadCount(options->threads);
  {
    // A batch's bytes must be representable (BatchLoader::ShapeOf).
    size_t bytes = 0;
    const size_t sample = static_cast<size_t>(options->width) * static_cast<size_t>(options->height) *
                          static_cast<size_t>(options->channels) * PixelTypeSize(options->dtype);
    if (__builtin_mul_overflow(options->batch_size, sample, &bytes)) {
      return InvalidArgumentError("batch_size " + std::to_string(options->batch_size) + " of " +
                                  std::to_string(sample) + "-byte samples overflows memory sizes");
    }
  }
  using image::ResizeMode;
  if (options->resize != ResizeMode::kCenterCrop && options->resize != ResizeMode::kStretch &&
      options->resize != ResizeMode::kLetterbox && options->resize != ResizeMode::kCropOrPad) {
    return InvalidArgumentError(std::string("resize mode ") + image::ResizeModeName(options->resize) +
                                " does not give a fixed size (use center-crop, stretch, letterbox or crop-or-pad)");
  }
  const RandomResizedCropOptions& r = options->rrc;
  if (!(r.scale_min > 0 && r.scale_min <= r.scale_max && r.scale_max <= 1 && r.ratio_min > 0 &&
        r.ratio_min <= r.ratio_max)) {
    return InvalidArgumentError(
        "random-resized-crop: need 0 < scale_min <= scale_max <= 1, 0 < ratio_min <= ratio_max");
  }
  LIBSHARD_RETURN_IF_ERROR(CheckBoxOptions(*options));
  if (options->masks && dataset.HasFeature(dataset.options().keys.mask) == false) {
    return InvalidArgumentError("masks requested, but the manifest's schema has no \"" +
                                dataset.options().keys.mask + "\" in every record (shards without masks)");
  }
  return Status::OK();
}

}  // namespace libshard::reader
