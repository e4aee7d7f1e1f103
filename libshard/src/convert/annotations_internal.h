// Pieces shared by the annotation readers (annotations_{coco,yolo,voc}.cc)
// and annotations.cc. Private to the convert module.
#ifndef LIBSHARD_SRC_CONVERT_ANNOTATIONS_INTERNAL_H_
#define LIBSHARD_SRC_CONVERT_ANNOTATIONS_INTERNAL_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/convert/annotations.h"
#include "libshard/convert/source_listing.h"

namespace libshard::convert::internal {

// What a reader found, by sample index of the listing.
struct ParsedAnnotations {
  std::vector<ObjectClass> classes;  // by label
  std::map<size_t, std::shared_ptr<SampleObjects>> objects;
  std::map<size_t, std::string> bad;   // sample index -> reject reason
  std::vector<ListingReject> missing;  // images named but not in the folder
  std::vector<ListingReject> other;    // annotation entries that name no image
  uint64_t unmatched = 0;              // annotation files of no listed image (YOLO label files): counted
};

Status ReadCoco(const AnnotationOptions& o, const Listing& listing, ParsedAnnotations* out);
Status ReadYolo(const AnnotationOptions& o, const Listing& listing, ParsedAnnotations* out);
Status ReadVoc(const AnnotationOptions& o, const Listing& listing, ParsedAnnotations* out);

// A sample's path relative to its split folder (the path itself when the
// listing has no split folders).
std::string PathInSplit(const Listing& listing, const SourceSample& s);

// Checks one box of an image of `width` x `height` (pixels; 1 x 1 for
// normalised boxes, with `slack` the tolerance past the edges: 1 pixel, or
// 1e-6 normalised) and clamps it into the image: "" when good, else why
// ("box [x0, y0, x1, y1] has a negative size", "... lies outside the WxH
// image"). An unknown size (0) checks the sign only.
std::string CheckAndClamp(ObjectBox* b, double width, double height, double slack);

// "[1.5, 2, 30, 40]": a box's numbers for messages.
std::string BoxText(const ObjectBox& b);

// `s` without leading and trailing spaces, tabs, CR and LF.
std::string TrimSpace(std::string_view s);

// A finite decimal number, the whole of `s` once trimmed (strtod's syntax).
bool ParseFiniteNumber(std::string_view s, double* v);

// Classes 1..N named by `names` in order.
std::vector<ObjectClass> NumberedClasses(const std::vector<std::string>& names);

// The class names of a text file, one per line (CRLF and a UTF-8 byte order
// mark allowed, blank lines at the end ignored); kInvalidArgument for an
// empty or duplicate name, naming the file and line.
StatusOr<std::vector<std::string>> ReadClassList(const std::string& path);

// The text of `path`, or "" with *exists false when there is no such file.
StatusOr<std::string> ReadOptionalFile(const std::string& path, uint64_t max_bytes, bool* exists);

}  // namespace libshard::convert::internal

#endif  // LIBSHARD_SRC_CONVERT_ANNOTATIONS_INTERNAL_H_
