// Detection boxes onto the stored image (object_features.h).
#include "convert/object_features.h"

#include <string>
#include <vector>

#include "convert/annotations_internal.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/box_geometry.h"

namespace libshard::convert::internal {

Status AddObjectFeatures(const SampleObjects& objects, const image::ImageInfo& info, int orientation,
                         const image::Geometry& geometry, const EncodeOptions& o, example::ExampleBuilder* b,
                         StatsAccumulator* stats) {
  const bool swapped = orientation >= 5 && orientation <= 8;
  const int raw_w = info.width, raw_h = info.height;
  const int shown_w = swapped ? raw_h : raw_w, shown_h = swapped ? raw_w : raw_h;
  // Boxes on the oriented source, normalised.
  std::vector<image::Box> boxes;
  boxes.reserve(objects.objects.size());
  double stated_w = 1, stated_h = 1;
  bool on_stored = false;
  if (!objects.normalised) {
    stated_w = objects.width > 0 ? objects.width : raw_w;
    stated_h = objects.height > 0 ? objects.height : raw_h;
    if (stated_w == raw_w && stated_h == raw_h) {
      on_stored = true;
    } else if (stated_w != shown_w || stated_h != shown_h) {
      return InvalidArgumentError(objects.origin + " says the image is " + std::to_string(int(stated_w)) + "x" +
                                  std::to_string(int(stated_h)) + ", the file is " + std::to_string(raw_w) + "x" +
                                  std::to_string(raw_h));
    }
  }
  // A file that states no size (VOC without <size>): its boxes are checked
  // against the decoded image as the others are against the stated size
  // when read (annotations.h), so one far outside is a reject, not clipped.
  std::vector<ObjectBox> checked;
  if (!objects.normalised && (objects.width <= 0 || objects.height <= 0)) {
    checked = objects.objects;
    for (size_t k = 0; k < checked.size(); ++k) {
      if (std::string why = CheckAndClamp(&checked[k], raw_w, raw_h, 1.0); !why.empty()) {
        return InvalidArgumentError(objects.origin + " object " + std::to_string(k + 1) + ": " + why);
      }
    }
  }
  const std::vector<ObjectBox>& source = checked.empty() ? objects.objects : checked;
  for (const ObjectBox& ob : source) {
    image::Box box{float(ob.xmin / stated_w), float(ob.ymin / stated_h), float(ob.xmax / stated_w),
                   float(ob.ymax / stated_h)};
    boxes.push_back(on_stored ? image::OrientBox(box, orientation) : box);
  }
  image::BoxMapOptions map_options;
  map_options.min_visible = o.box_min_visible;
  const image::PixelMap map = image::PixelMapFromGeometry(geometry);
  const image::MappedBoxes mapped = image::MapBoxes(boxes, map, map_options);

  const size_t n = mapped.boxes.size();
  std::vector<float> xmin(n), xmax(n), ymin(n), ymax(n), area(n);
  std::vector<int64_t> label(n), crowd(n), difficult(n), truncated(n);
  std::vector<std::string_view> text(n);
  const double scale = (map.dst_w / map.src_w) * (map.dst_h / map.src_h);  // output px per source px
  for (size_t k = 0; k < n; ++k) {
    const image::Box& r = mapped.boxes[k];
    const ObjectBox& ob = source[mapped.kept[k]];
    xmin[k] = r.xmin;
    xmax[k] = r.xmax;
    ymin[k] = r.ymin;
    ymax[k] = r.ymax;
    label[k] = ob.label;
    crowd[k] = ob.is_crowd;
    difficult[k] = ob.difficult;
    truncated[k] = ob.truncated;
    if (o.object_classes != nullptr) {
      if (auto it = o.object_classes->find(ob.label); it != o.object_classes->end()) text[k] = it->second;
    }
    // The box's area on the stored image; COCO's segment area scaled to it
    // by the share of the box that is left.
    const double stored_area = double(r.xmax - r.xmin) * map.out_w * double(r.ymax - r.ymin) * map.out_h;
    const double source_area =
        (ob.xmax - ob.xmin) * (ob.ymax - ob.ymin) * (objects.normalised ? double(shown_w) * shown_h : 1.0);
    if (ob.area >= 0 && source_area > 0) {
      area[k] = float(ob.area * stored_area / source_area);
    } else if (ob.area >= 0) {
      area[k] = float(ob.area * scale);
    } else {
      area[k] = float(stored_area);
    }
  }
  for (size_t i = 0; i < objects.objects.size(); ++i) {
    stats->AddBox(objects.objects[i].label, mapped.fate[i] != image::kBoxDropped, mapped.fate[i] == image::kBoxClipped);
  }
  b->AddFloatList(keys::kObjectXmin, xmin.data(), n);
  b->AddFloatList(keys::kObjectXmax, xmax.data(), n);
  b->AddFloatList(keys::kObjectYmin, ymin.data(), n);
  b->AddFloatList(keys::kObjectYmax, ymax.data(), n);
  b->AddInt64List(keys::kObjectLabel, label.data(), n);
  b->AddBytesList(keys::kObjectText, text);
  b->AddFloatList(keys::kObjectArea, area.data(), n);
  b->AddInt64List(keys::kObjectIsCrowd, crowd.data(), n);
  b->AddInt64List(keys::kObjectDifficult, difficult.data(), n);
  if (o.object_truncated) b->AddInt64List(keys::kObjectTruncated, truncated.data(), n);
  return Status::OK();
}

}  // namespace libshard::convert::internal
