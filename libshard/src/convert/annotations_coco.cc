// COCO instances files (annotations.h): parsed with protobuf's JSON reader
// into coco.proto's messages (unknown fields ignored), then matched to the
// listing's samples by file name.
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <unordered_map>

#include "convert/annotations_internal.h"
#include "libshard/coco.pb.h"
#include "libshard/io/contained_path.h"
#include "libshard/io/open_file.h"
#include "libshard/text_escape.h"

namespace libshard::convert::internal {
namespace {

// Each sample by its path from the root and by its path in its split
// folder; a name two samples share in the second index is ambiguous.
struct SampleIndex {
  std::unordered_map<std::string, size_t> by_path;
  std::unordered_map<std::string, std::vector<size_t>> by_split_path;

  explicit SampleIndex(const Listing& listing) {
    for (size_t i = 0; i < listing.samples.size(); ++i) {
      by_path.emplace(listing.samples[i].path, i);
      by_split_path[PathInSplit(listing, listing.samples[i])].push_back(i);
    }
  }
  // The samples `name` stands for: its path from the root, else every
  // sample with that path in its split folder.
  std::vector<size_t> Find(const std::string& name) const {
    if (auto it = by_path.find(name); it != by_path.end()) return {it->second};
    if (auto it = by_split_path.find(name); it != by_split_path.end()) return it->second;
    return {};
  }
};

std::string Id(int64_t id) { return std::to_string(id); }

}  // namespace

Status ReadCoco(const AnnotationOptions& o, const Listing& listing, ParsedAnnotations* out) {
  const std::string& file = o.source;
  LIBSHARD_ASSIGN_OR_RETURN(std::string text, io::ReadFileToString(file, kMaxAnnotationBytes));
  // A UTF-8 byte order mark (editors on Windows write one; json.load with
  // utf-8-sig reads past it) is not JSON: skipped.
  const size_t bom = Utf8BomLength(text);
  coco::Instances in;
  google::protobuf::util::JsonParseOptions po;
  po.ignore_unknown_fields = true;
  const google::protobuf::StringPiece json(text.data() + bom, text.size() - bom);
  auto st = google::protobuf::util::JsonStringToMessage(json, &in, po);
  text.clear();
  text.shrink_to_fit();
  if (!st.ok()) {
    return InvalidArgumentError(file + ": not a COCO instances file: " + std::string(st.message()));
  }
  if (in.categories().empty()) return InvalidArgumentError(file + ": no categories");

  std::map<int64_t, std::string> categories;
  std::map<std::string, int64_t> ids_of;  // the label map is looked up by name too (get_label_map_dict)
  for (const coco::Category& c : in.categories()) {
    if (c.id() < 1) {
      return InvalidArgumentError(file + ": category '" + EscapeText(c.name()) + "' has id " + Id(c.id()) +
                                  "; ids start at 1 (0 is the background label)");
    }
    if (c.id() > std::numeric_limits<int32_t>::max()) {
      return InvalidArgumentError(file + ": category '" + EscapeText(c.name()) + "' has id " + Id(c.id()) +
                                  "; the label map's ids are int32 (string_int_label_map.proto), at most 2147483647");
    }
    if (c.name().empty()) return InvalidArgumentError(file + ": category id " + Id(c.id()) + " has no name");
    if (!categories.emplace(c.id(), c.name()).second) {
      return InvalidArgumentError(file + ": category id " + Id(c.id()) + " given twice");
    }
    if (auto [it, fresh] = ids_of.emplace(c.name(), c.id()); !fresh) {
      const int64_t lo = std::min(it->second, c.id()), hi = std::max(it->second, c.id());
      return InvalidArgumentError(file + ": categories " + Id(lo) + " and " + Id(hi) + " are both named '" +
                                  EscapeText(c.name()) + "'");
    }
  }
  for (const auto& [id, name] : categories) out->classes.push_back({id, name});

  // images[]: id -> the sample (or none: missing from the folder).
  const SampleIndex index(listing);
  if (!listing.samples.empty()) {
    const SourceSample& first = listing.samples[0];
    out->lookup_example = "images[].file_name is matched to the path from the input root ('" + first.path + "')";
    if (!listing.split_folders.empty()) {
      out->lookup_example += " or in its split folder ('" + PathInSplit(listing, first) + "')";
    }
  }
  std::unordered_map<int64_t, size_t> samples_of;  // image id -> sample index
  std::unordered_map<int64_t, bool> known;         // every image id
  for (const coco::Image& im : in.images()) {
    const std::string where = file + " image id " + Id(im.id());
    if (known.count(im.id())) return InvalidArgumentError(where + " given twice");
    known[im.id()] = true;
    if (Status s = io::CheckRelativeName(im.file_name(), "file_name"); !s.ok()) {
      out->other.push_back({file, where + ": " + s.message()});
      continue;
    }
    const std::vector<size_t> found = index.Find(im.file_name());
    if (found.empty()) {
      out->missing.push_back({im.file_name(), "named by " + where + " but not in the folder"});
      continue;
    }
    if (found.size() > 1) {
      for (size_t i : found) {
        out->bad[i] = where + ": file_name '" + EscapeText(im.file_name()) + "' matches " +
                      std::to_string(found.size()) + " files of different splits";
      }
      continue;
    }
    if (out->objects.count(found[0])) {
      out->bad[found[0]] = where + ": the file is named by two images of " + file;
      continue;
    }
    auto objects = std::make_shared<SampleObjects>();
    objects->width = im.width();
    objects->height = im.height();
    objects->origin = where;
    objects->source_id = Id(im.id());
    if (im.width() <= 0 || im.height() <= 0) {
      out->bad[found[0]] = where + ": size " + std::to_string(im.width()) + "x" + std::to_string(im.height());
    }
    out->objects[found[0]] = std::move(objects);
    samples_of[im.id()] = found[0];
  }

  for (const coco::Annotation& a : in.annotations()) {
    const std::string where = file + " annotation id " + Id(a.id()) + " (image id " + Id(a.image_id()) + ")";
    auto it = samples_of.find(a.image_id());
    if (it == samples_of.end()) {
      if (!known.count(a.image_id())) out->other.push_back({file, where + ": no image has that id"});
      continue;  // an image missing from the folder, already a reject
    }
    const size_t sample = it->second;
    if (out->bad.count(sample)) continue;
    SampleObjects& objs = *out->objects[sample];
    if (objs.objects.size() >= kMaxObjectsPerImage) {
      out->bad[sample] = where + ": more than " + std::to_string(kMaxObjectsPerImage) + " objects";
      continue;
    }
    if (!categories.count(a.category_id())) {
      out->bad[sample] = where + ": unknown category id " + Id(a.category_id());
      continue;
    }
    if (a.bbox_size() != 4) {
      out->bad[sample] = where + ": bbox has " + std::to_string(a.bbox_size()) + " numbers, not 4 [x, y, w, h]";
      continue;
    }
    if (a.bbox(2) == 0 || a.bbox(3) == 0) {  // create_coco_tf_record.py drops these; a box of no area is no object
      char box[96];
      std::snprintf(box, sizeof(box), "[%g, %g, %g, %g]", a.bbox(0), a.bbox(1), a.bbox(2), a.bbox(3));
      out->bad[sample] = where + ": bbox " + box + " has a zero size";
      continue;
    }
    ObjectBox b;
    b.xmin = a.bbox(0);
    b.ymin = a.bbox(1);
    b.xmax = a.bbox(0) + a.bbox(2);
    b.ymax = a.bbox(1) + a.bbox(3);
    b.label = a.category_id();
    if (!(a.area() <= std::numeric_limits<float>::max())) {  // image/object/area is a float
      char area[32];
      std::snprintf(area, sizeof(area), "%g", a.area());
      out->bad[sample] = where + ": area " + area + " is past the float range of image/object/area";
      continue;
    }
    b.area = a.area() > 0 ? a.area() : -1;
    b.is_crowd = a.iscrowd() != 0;
    if (std::string why = CheckAndClamp(&b, objs.width, objs.height, 1.0); !why.empty()) {
      out->bad[sample] = where + ": " + why;
      continue;
    }
    objs.objects.push_back(b);
  }
  return Status::OK();
}

}  // namespace libshard::convert::internal
