// What one batch of a BatchLoader holds: the output size and channels the
// dataset's manifests fill in (BatchLoader::ResolveShape), and the bytes of a
// full batch (BatchLoader::ShapeOf). Pure functions of the options.
#include <string>

#include "libshard/reader/batch_loader.h"

namespace libshard::reader {

Status BatchLoader::ResolveShape(const Dataset& dataset, BatchLoaderOptions* options) {
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

BatchShape BatchLoader::ShapeOf(const BatchLoaderOptions& options) {
  const size_t pixels = static_cast<size_t>(options.width) * static_cast<size_t>(options.height);
  BatchShape shape;
  shape.image_bytes =
      options.batch_size * pixels * static_cast<size_t>(options.channels) * PixelTypeSize(options.dtype);
  shape.labels = options.batch_size;
  shape.mask_bytes = options.masks ? options.batch_size * pixels : 0;
  return shape;
}

}  // namespace libshard::reader
