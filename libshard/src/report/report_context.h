// What the report's sections share: the set as a whole (Context) and the
// thumbnails picked for a split. Private to the report module.
#ifndef LIBSHARD_REPORT_REPORT_CONTEXT_H_
#define LIBSHARD_REPORT_REPORT_CONTEXT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "libshard/manifest/manifest_json.h"
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
};

struct SplitThumbs {
  std::map<int64_t, std::vector<Thumb>> by_label;
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
  bool has_masks = false;
  int ignore_index = 255;
  std::map<int, Rgb> mask_colors;  // by index
  std::map<int, std::string> mask_names;
};

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
