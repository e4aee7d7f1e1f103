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
  // Where the first sample's annotation was looked for, for the warning
  // when no image matched one: "the XML of a.png would be Annotations/a.xml".
  std::string lookup_example;
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

// A finite decimal number, the whole of `s` once trimmed: an optional sign,
// digits with an optional point and exponent; no hex, inf, nan or NUL.
bool ParseFiniteNumber(std::string_view s, double* v);

// Classes 1..N named by `names` in order.
std::vector<ObjectClass> NumberedClasses(const std::vector<std::string>& names);

// The class names of a text file, one per line (CRLF and a UTF-8 byte order
// mark allowed, blank lines at the end ignored); kInvalidArgument for an
// empty or duplicate name, naming the file and line.
StatusOr<std::vector<std::string>> ReadClassList(const std::string& path);

// One image's annotation file (a YOLO label file, a VOC XML) as found.
struct AnnotationFile {
  bool exists = false;  // something has that name (a dangling link too)
  std::string text;     // its bytes, when `why` is ""
  std::string why;      // why it is a reject, naming the file; "" when read
};

// Reads the annotation files of a folder's images, never outside `folder`
// (the label tree or the Annotations folder): a symbolic link is followed
// only when it leads to a file inside, and a file whose folder is a link out
// of it is refused, so no byte from elsewhere reaches a message
// (rejects.tsv, manifest.json). Files are opened as OpenForRead does (a FIFO
// never blocks) and read up to `max_bytes`. Not thread-safe (it keeps the
// real paths of the folders met).
class AnnotationFiles {
 public:
  explicit AnnotationFiles(uint64_t max_bytes) : max_bytes_(max_bytes) {}
  // `path` (a name under `folder`): exists false when nothing has that
  // name; `why` for a directory, a FIFO or another non-regular file, a
  // dangling link, a link out of `folder`, a file too large or unreadable.
  AnnotationFile Read(const std::string& path, const std::string& folder);
  // Whether something (a file, a folder, a dangling link) has that name.
  static bool Exists(const std::string& path);

 private:
  // The real path of `dir` ("" when it has none).
  const std::string& RealPath(const std::string& dir);
  uint64_t max_bytes_;
  std::map<std::string, std::string> real_;
};

}  // namespace libshard::convert::internal

#endif  // LIBSHARD_SRC_CONVERT_ANNOTATIONS_INTERNAL_H_
