// Box geometry: how detection boxes follow the pixels through EXIF
// orientation, every resize mode, crops, padding and flips. The one home of
// this arithmetic for the converter (boxes onto the stored image) and the
// loader (boxes onto the batch image).
//
// A box is normalised to the image it lies on: x in [0, 1] of the width,
// y in [0, 1] of the height, xmin <= xmax, ymin <= ymax (the TF Object
// Detection API's convention, image/object/bbox/*). Pixel edges: x = 0 is the
// left edge of pixel column 0, x = 1 the right edge of the last column.
//
// A PixelMap says where output pixels come from: the source rectangle `src`
// (source pixels; may extend past the image for letterbox or padding) is
// scaled onto the output rectangle `dst` (output pixels) of an out_w x out_h
// image; flip_x mirrors the output horizontally afterwards. PlanPixelMap()
// derives it from transform.h's PlanGeometry, so boxes and pixels can never
// use two different rectangles.
//
//   StatusOr<PixelMap> m = PlanPixelMap(oriented_w, oriented_h, spec);
//   MappedBoxes out = MapBoxes(boxes_on_source, *m, BoxMapOptions{});
//   // out.boxes[i] is input box out.kept[i], now on the output image.
//
// A box cut by the map's visible region is clipped to it; one keeping less
// than min_visible of its area is dropped. Both are counted.
//
// Thread-safety: pure functions, safe from any thread.
#ifndef LIBSHARD_IMAGE_BOX_GEOMETRY_H_
#define LIBSHARD_IMAGE_BOX_GEOMETRY_H_

#include <cstddef>
#include <vector>

#include "libshard/image/transform.h"
#include "libshard/status.h"

namespace libshard::image {

// Normalised [0, 1] coordinates of the image the box is on.
struct Box {
  float xmin = 0, ymin = 0, xmax = 0, ymax = 0;
};

struct PixelMap {
  // Source rectangle, in source pixels (may extend past the image).
  double src_x = 0, src_y = 0, src_w = 0, src_h = 0;
  // Where it lands, in output pixels.
  double dst_x = 0, dst_y = 0, dst_w = 0, dst_h = 0;
  // Source image size the normalised input boxes refer to.
  int src_w_px = 0, src_h_px = 0;
  // Output image size the normalised output boxes refer to.
  int out_w = 0, out_h = 0;
  // Mirror the output horizontally after the scale. Default: false.
  bool flip_x = false;
};

struct BoxMapOptions {
  // A box keeping less than this fraction of its area (after clipping to the
  // visible part of the source) is dropped. The TF Object Detection API's
  // random_crop_image keeps a box when at least overlap_thresh = 0.3 of it
  // (intersection over the box's own area) stays in the crop; the same rule
  // here. 0 keeps every box with any visible part. Default: 0.3.
  float min_visible = 0.3f;
};

struct MappedBoxes {
  // The boxes kept, on the output image, in input order.
  std::vector<Box> boxes;
  // kept[i] is the index in the input of boxes[i].
  std::vector<size_t> kept;
  // Kept boxes that lost part of their area to the crop.
  size_t clipped = 0;
  // Boxes dropped (under min_visible, or wholly outside).
  size_t dropped = 0;
  // Per input box: 0 kept whole, 1 clipped, 2 dropped (for per-class counts).
  std::vector<unsigned char> fate;
};

enum BoxFate : unsigned char { kBoxKept = 0, kBoxClipped = 1, kBoxDropped = 2 };

// The pixel map of a planned transform (transform.h Geometry): its source box
// scaled onto the scaled region at the canvas offset.
PixelMap PixelMapFromGeometry(const Geometry& g);

// PlanGeometry(src_width, src_height, spec) as a PixelMap; the same errors.
StatusOr<PixelMap> PlanPixelMap(int src_width, int src_height, const TransformSpec& spec);

// Maps boxes on the source image through `m`. Zero-area boxes (a point or a
// line) are kept while inside the visible region. Input boxes are expected to
// be valid (0 <= min <= max <= 1); out-of-range coordinates are clipped like
// any other.
MappedBoxes MapBoxes(const std::vector<Box>& in, const PixelMap& m, const BoxMapOptions& o = {});

// A box on the image as stored (before EXIF orientation) moved to the image
// after Orient(img, exif_orientation) (transform.h: 2 mirror, 3 rotate 180,
// 4 flip vertical, 5 transpose, 6 rotate 90 clockwise, 7 transverse, 8 rotate
// 90 counter-clockwise). Other values return the box unchanged.
Box OrientBox(const Box& b, int exif_orientation);

}  // namespace libshard::image

#endif  // LIBSHARD_IMAGE_BOX_GEOMETRY_H_
