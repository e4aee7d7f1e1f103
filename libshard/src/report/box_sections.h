// The report's detection boxes: each thumbnail's boxes drawn over it in
// their class colours (an SVG in the thumbnail's own 0..1 coordinates), and
// a section with the boxes per class and a box-size histogram over the
// records the split's scan looked at. Private to the report module.
#ifndef LIBSHARD_REPORT_BOX_SECTIONS_H_
#define LIBSHARD_REPORT_BOX_SECTIONS_H_

#include <string>

#include "libshard/example/example_view.h"
#include "report/report_context.h"

namespace libshard::report {

// Counts `ex`'s boxes (example/box_record.h) into *stats; nothing without box
// keys, stats->invalid for malformed ones. Sizes need image/width and height.
void AddBoxes(const example::ExampleView& ex, BoxStats* stats);

// The colour of box class `label` (PaletteColor, contrast >= 3:1 with white).
Rgb BoxColor(int64_t label);

// An <svg class="boxes"> drawing `t`'s boxes, or "" without boxes.
std::string BoxOverlay(const Context& c, const SplitThumbs& split, const Thumb& t);

// "Detection boxes": per-class counts and the size histogram; "" when no
// record looked at has box keys.
std::string BoxSection(const Context& c, const SplitThumbs& t);

}  // namespace libshard::report

#endif  // LIBSHARD_REPORT_BOX_SECTIONS_H_
