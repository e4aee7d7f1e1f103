// The loader's detection boxes (batch_boxes.h).
#include "reader/batch_boxes.h"

#include <algorithm>
#include <string>
#include <utility>

#include "libshard/example/box_record.h"
#include "libshard/image/box_geometry.h"

namespace libshard::reader {

Status MapSampleBoxes(const example::ExampleView& ex, int width, int height, const PixelRequest& request,
                      float min_visible, SampleBoxes* out) {
  *out = SampleBoxes{};
  thread_local example::BoxRecord rec;
  LIBSHARD_RETURN_IF_ERROR(example::ReadBoxes(ex, &rec));
  if (rec.boxes.empty()) return Status::OK();
  LIBSHARD_ASSIGN_OR_RETURN(image::PixelMap map, image::PlanPixelMap(width, height, request.spec));
  map.flip_x = request.flip;
  image::BoxMapOptions o;
  o.min_visible = min_visible;
  image::MappedBoxes m = image::MapBoxes(rec.boxes, map, o);
  out->boxes = std::move(m.boxes);
  out->labels.reserve(m.kept.size());
  for (size_t k : m.kept) out->labels.push_back(rec.labels[k]);
  out->clipped = m.clipped;
  out->dropped = m.dropped;
  return Status::OK();
}

BoxesFill::BoxesFill(BatchBoxes* out, size_t samples, size_t max_boxes) : out_(out) {
  *out = BatchBoxes{};
  out->max_boxes = max_boxes;
  out->boxes.assign(samples * max_boxes * 4, 0.0f);
  out->labels.assign(samples * max_boxes, -1);
  out->counts.assign(samples, 0);
}

void BoxesFill::Put(size_t i, const SampleBoxes& s) {
  const size_t m = out_->max_boxes;
  const size_t n = std::min(s.boxes.size(), m);
  float* b = out_->boxes.data() + i * m * 4;
  int64_t* l = out_->labels.data() + i * m;
  std::fill(b, b + m * 4, 0.0f);
  std::fill(l, l + m, int64_t{-1});
  for (size_t k = 0; k < n; ++k) {
    b[4 * k] = s.boxes[k].xmin;
    b[4 * k + 1] = s.boxes[k].ymin;
    b[4 * k + 2] = s.boxes[k].xmax;
    b[4 * k + 3] = s.boxes[k].ymax;
    l[k] = s.labels[k];
  }
  out_->counts[i] = static_cast<int32_t>(n);
  clipped_ += s.clipped;
  dropped_ += s.dropped;
  truncated_ += s.boxes.size() - n;
}

void BoxesFill::Finish() {
  out_->clipped = clipped_.load();
  out_->dropped = dropped_.load();
  out_->truncated = truncated_.load();
}

}  // namespace libshard::reader
