// Box record: the detection boxes of an image record, under the TensorFlow
// Object Detection API's keys (models/research/object_detection/core/
// standard_fields.py), read and checked in one place for the loader, `shard
// verify` and `shard report`.
//
//   image/object/bbox/xmin   float  one per box, in [0, 1] of the image as a
//   image/object/bbox/ymin   float  reader sees it (x of the width, y of the
//   image/object/bbox/xmax   float  height; 0 the left/top edge, 1 the
//   image/object/bbox/ymax   float  right/bottom edge)
//   image/object/class/label int64  one per box, 1-based (0 is background)
//   image/object/class/text  bytes  the class name of each box (optional)
//   image/object/area        float  optional
//   image/object/is_crowd    int64  optional
//   image/object/difficult   int64  optional
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
#include "libshard/image/box_geometry.h"
#include "libshard/status.h"

namespace libshard::keys {

inline constexpr char kBoxXmin[] = "image/object/bbox/xmin";
inline constexpr char kBoxYmin[] = "image/object/bbox/ymin";
inline constexpr char kBoxXmax[] = "image/object/bbox/xmax";
inline constexpr char kBoxYmax[] = "image/object/bbox/ymax";
inline constexpr char kBoxLabel[] = "image/object/class/label";
inline constexpr char kBoxText[] = "image/object/class/text";
inline constexpr char kBoxArea[] = "image/object/area";
inline constexpr char kBoxIsCrowd[] = "image/object/is_crowd";
inline constexpr char kBoxDifficult[] = "image/object/difficult";

}  // namespace libshard::keys

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
