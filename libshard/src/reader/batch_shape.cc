// What one batch of a BatchLoader holds: the output size and channels the
// dataset's manifests fill in (BatchLoader::ResolveShape, loader_options.h's
// rule), and the bytes of a full batch (BatchLoader::ShapeOf). Pure functions
// of the options.
#include "libshard/reader/batch_loader.h"

namespace libshard::reader {

Status BatchLoader::ResolveShape(const Dataset& dataset, BatchLoaderOptions* options) {
  return ResolveStoredShape(dataset, options);
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
