// Private: the loader's detection boxes (BatchLoaderOptions::boxes). A
// sample's boxes (example/box_record.h) go through the same PixelRequest as
// its pixels (image/box_geometry.h: the transform's own plan, then the
// flip), and into the batch's padded arrays (BatchBoxes).
//
// Thread-safety: MapSampleBoxes is a pure function; BoxesFill::Put may run
// on many threads at once for distinct samples.
#ifndef LIBSHARD_SRC_READER_BATCH_BOXES_H_
#define LIBSHARD_SRC_READER_BATCH_BOXES_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "libshard/example/example_view.h"
#include "libshard/reader/loader_options.h"
#include "libshard/reader/record_pixels.h"
#include "libshard/status.h"

namespace libshard::reader {

// `ex`'s boxes, on a record of `width` x `height` (as a reader sees it),
// moved onto the output image of `request`. *out is replaced whole. DataLoss
// for malformed box keys (example::ReadBoxes); the caller names the record.
Status MapSampleBoxes(const example::ExampleView& ex, int width, int height, const PixelRequest& request,
                      float min_visible, SampleBoxes* out);

// Fills a batch's BatchBoxes: sized for `samples` at construction, one row
// per Put(), totals at Finish().
class BoxesFill {
 public:
  BoxesFill(BatchBoxes* out, size_t samples, size_t max_boxes);
  // Row `i` from `s`: its first max_boxes boxes, the rest counted as truncated.
  void Put(size_t i, const SampleBoxes& s);
  // Writes the batch's clipped / dropped / truncated totals.
  void Finish();

 private:
  BatchBoxes* out_;
  std::atomic<uint64_t> clipped_{0}, dropped_{0}, truncated_{0};
};

}  // namespace libshard::reader

#endif  // LIBSHARD_SRC_READER_BATCH_BOXES_H_
