// What the report's sections share: the set as a whole (Context) and the
// thumbnails picked for a split. Private to the report module.
#ifndef LIBSHARD_REPORT_REPORT_CONTEXT_H_
#define LIBSHARD_REPORT_REPORT_CONTEXT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "libshard/image/box_geometry.h"
#include "libshard/io/open_file_cache.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/reader/shard_reader.h"
#include "libshard/report/report.h"
#include "report/page_parts.h"

namespace libshard::report {

constexpr int64_t kUnlabeled = -1;

struct Thumb {
  std::string file;
  int64_t label = kUnlabeled;
  int width = 0, height = 0;
  std::string image_url;    // data: JPEG
  std::string overlay_url;  // data: PNG, empty without a mask
  // Detection boxes (normalised: the thumbnail is the whole image) and their labels.
  std::vector<image::Box> boxes;
  std::vector<int64_t> box_labels;
};

// Detection boxes of the records a split's scan looked at (box_sections.h).
struct BoxStats {
  uint64_t records = 0;                        // records with box keys
  uint64_t boxes = 0;                          // their boxes
  uint64_t invalid = 0;                        // records whose box keys are malformed (not counted above)
  std::map<int64_t, uint64_t> per_class;       // boxes by image/object/class/label
  std::map<int64_t, std::string> class_names;  // image/object/class/text, first seen
  std::vector<uint64_t> size_bins;             // by sqrt(area) in pixels (kBoxSizeEdges)
};

struct SplitThumbs {
  std::map<int64_t, std::vector<Thumb>> by_label;
  BoxStats boxes;
  uint64_t visited = 0;
  uint64_t unreadable = 0;
  std::string first_error;
};

// What the page needs to know about the set as a whole.
struct Context {
  const Manifest* m = nullptr;
  std::string dir;  // the manifest's folder
  std::string manifest_path;
  ReportOptions options;
  std::map<int64_t, std::string> class_names;
  std::map<int64_t, std::string> object_names;  // the detection boxes' label map (manifest object_labels)
  bool has_masks = false;
  int ignore_index = 255;
  std::map<int, Rgb> mask_colors;  // by index
  std::map<int, std::string> mask_names;
};

// How the report reads the records it looks at (at most max_scan_records
// of a split, drawn from every shard): with pread into the caller's buffer,
// so they are not pages mapped into the process (mapped, the pages around
// each record touched would count in its RSS: 1.2 KB a record of a 10^5-record
// set), through at most 64 descriptors of `files` (one per shard otherwise).
inline reader::ShardReaderOptions ScanReaderOptions(std::shared_ptr<io::OpenFileCache> files) {
  reader::ShardReaderOptions o;
  o.io = reader::IoMode::kPread;
  o.open_files = std::move(files);
  return o;
}
constexpr size_t kScanOpenFiles = 64;

inline std::string ClassName(const Context& c, int64_t label) {
  if (label == kUnlabeled) return "(unlabeled)";
  auto it = c.class_names.find(label);
  return it != c.class_names.end() ? it->second : "label " + std::to_string(label);
}

inline Rgb MaskColor(const Context& c, int index) {
  auto it = c.mask_colors.find(index);
  return it != c.mask_colors.end() ? it->second : PaletteColor(index);
}

inline std::string MaskName(const Context& c, int index) {
  if (index == c.ignore_index) return "ignore";
  auto it = c.mask_names.find(index);
  return it != c.mask_names.end() ? it->second : "index " + std::to_string(index);
}

}  // namespace libshard::report

#endif  // LIBSHARD_REPORT_REPORT_CONTEXT_H_
