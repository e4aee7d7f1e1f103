// Box record: the detection boxes of an image record, under the TensorFlow
// Object Detection API's keys (example/image_keys.h: image/object/bbox/*,
// image/object/class/label 1-based with 0 background, and the optional
// class/text, area, is_crowd, difficult, truncated), read and checked in one
// place for the loader, `shard verify` and `shard report`. Coordinates are in
// [0, 1] of the image as a reader sees it (0 the left/top edge, 1 the
// right/bottom edge).
//
//   example::BoxRecord b;
//   LIBSHARD_RETURN_IF_ERROR(example::ReadBoxes(ex, &b));
//   for (size_t i = 0; i < b.boxes.size(); ++i) Use(b.boxes[i], b.labels[i]);
//
// A record with none of the four bbox keys and no label has zero boxes.
// Otherwise it must hold all four coordinate lists (floats) and the label list
// (int64), of one length, each box finite with 0 <= min <= max <= 1 and each
// label >= 0; the optional lists, when present, have that length too. Any
// other shape is DataLoss naming the key, the box and the value (the caller
// adds the file and record).
//
// Thread-safety: pure functions.
#ifndef LIBSHARD_EXAMPLE_BOX_RECORD_H_
#define LIBSHARD_EXAMPLE_BOX_RECORD_H_

#include <cstdint>
#include <vector>

#include "libshard/example/example_view.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/box_geometry.h"
#include "libshard/status.h"

namespace libshard::example {

struct BoxRecord {
  std::vector<image::Box> boxes;  // in the record's order
  std::vector<int64_t> labels;    // one per box
};

// True when `ex` holds any of the bbox coordinate keys or the box label key.
bool HasBoxKeys(const ExampleView& ex);

// Reads and checks `ex`'s boxes into *out (replaced whole; empty when the
// record has no box keys). DataLoss as the header says.
Status ReadBoxes(const ExampleView& ex, BoxRecord* out);

}  // namespace libshard::example

#endif  // LIBSHARD_EXAMPLE_BOX_RECORD_H_
