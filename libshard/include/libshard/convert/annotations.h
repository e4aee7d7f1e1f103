// Detection annotations: the boxes of a COCO instances file, a YOLO label
// folder or Pascal VOC XML files, attached to the samples of a listing
// (docs/convert.md "Detection boxes").
//
//   COCO  --coco instances.json: images[].file_name matched against each
//         sample's path relative to the input root, else relative to its
//         split folder; annotations[].bbox [x, y, w, h] in pixels of the
//         image's stated width x height; category ids -> names from
//         categories[]; iscrowd, area.
//   YOLO  --yolo data.yaml | classes.txt: class names (data.yaml's `names:`,
//         a list or an index mapping, quoted names decoded as YAML does;
//         classes.txt one per line). The labels
//         of IMG are found as ultralytics does: the last "/images/" of its
//         path replaced by "/labels/" and the extension by ".txt"; without
//         an "/images/" part, the .txt beside the image. Lines
//         `class cx cy w h`, normalised to the image as shown (after EXIF
//         orientation, as ultralytics loads it).
//   VOC   --voc Annotations/: the XML of ROOT/REL/STEM.EXT (REL from the
//         input root, the split folder included) is Annotations/REL/STEM.xml,
//         else Annotations/REL'/STEM.xml (REL' in its split folder), else
//         Annotations/STEM.xml; a file two images would take is refused for
//         both, naming both. object/name, bndbox (xmin, ymin, xmax, ymax in
//         pixels, 1-based as VOC writes them), difficult, truncated; the image
//         size from size/width,height (without it, boxes are checked against
//         the decoded image). Parsing stops at nesting deeper than 64 and at
//         any DOCTYPE or entity declaration (a reject).
//
// Class labels are 1-based, 0 being background, as the TF Object Detection
// API's label maps: COCO keeps its category ids (as create_coco_tf_record.py
// and mscoco_label_map.pbtxt, so COCO evaluation maps detections back; an id
// below 1 is an error); YOLO class k is label k + 1; VOC's labels are 1..K in
// the order of the class list (the given file, else the sorted names met).
//
// Pixel boxes (COCO, VOC) are on the image of the stated size: the image as
// stored when that is its stored size (they then follow EXIF orientation, as
// in the TF Object Detection API, which never rotates), the oriented image
// when the stated size is the oriented one.
//
// Bad annotations reject the image they belong to, naming the annotation
// file and the object (COCO annotation id, YOLO line, VOC object number): a
// box outside its image by more than one pixel (YOLO: outside [0, 1]), a
// negative size, an unknown class, an unreadable or malformed file, one that
// is no file (a directory, a FIFO, a dangling link) or a link out of its
// folder (never read). Two classes of one name, a COCO category id above
// 2^31 - 1 are errors of the whole source. An image
// an annotation names that the folder lacks is a reject too (its path is the
// name the annotation gives); images no annotation names are kept with zero
// boxes and counted.
//
// Untrusted input: files are read with size limits (kMaxAnnotationBytes); a
// YOLO label file or VOC XML only inside its folder (the labels folder or the
// image's own, the Annotations folder); no path read from an annotation file
// is ever opened (COCO file names are only
// looked up among the listed samples, and must be relative names,
// io::CheckRelativeName).
//
// Thread-safety: pure functions apart from reading the file system; the
// returned objects are immutable and shared.
#ifndef LIBSHARD_CONVERT_ANNOTATIONS_H_
#define LIBSHARD_CONVERT_ANNOTATIONS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/image/box_geometry.h"
#include "libshard/status.h"

namespace libshard::convert {

struct Listing;

enum class AnnotationFormat { kNone, kCoco, kYolo, kVoc };
// "", "coco", "yolo", "voc".
const char* AnnotationFormatName(AnnotationFormat f);

// Largest annotation file read (COCO train2017's instances file is 448 MB).
constexpr uint64_t kMaxAnnotationBytes = uint64_t{1} << 30;
// Largest YOLO label file, VOC XML file, data.yaml or class list.
constexpr uint64_t kMaxLabelFileBytes = uint64_t{16} << 20;
// Most objects one image may carry.
constexpr size_t kMaxObjectsPerImage = 100000;

// One object of one image.
struct ObjectBox {
  // Pixels of the stated size (SampleObjects::width x height), or
  // normalised [0, 1] when SampleObjects::normalised.
  double xmin = 0, ymin = 0, xmax = 0, ymax = 0;
  int64_t label = 0;  // 1-based
  double area = -1;   // COCO's area in pixels of the stated size; < 0: the box's
  bool is_crowd = false, difficult = false, truncated = false;
};

// The objects of one sample, as its annotation states them.
struct SampleObjects {
  std::vector<ObjectBox> objects;
  // The image size the annotation states (COCO, VOC); 0: unstated.
  int width = 0, height = 0;
  // YOLO: boxes normalised on the oriented image.
  bool normalised = false;
  // Where they come from, for messages: "instances.json image id 7".
  std::string origin;
  // image/source_id: COCO's image id ("7"); "" for the sample's path from
  // the input root (YOLO, VOC, an image COCO does not name).
  std::string source_id;
};

struct AnnotationOptions {
  // Default: kNone (no boxes).
  AnnotationFormat format = AnnotationFormat::kNone;
  // instances.json (COCO), data.yaml or classes.txt (YOLO), the Annotations
  // folder (VOC). Default: "".
  std::string source;
  // VOC: the class names, one per line (label = line + 1); names not in it
  // are unknown. Default: "" (the sorted names met).
  std::string class_names_file;
  // A box keeping less than this fraction of its area after the crop is
  // dropped (image/box_geometry.h BoxMapOptions). Default: 0.3.
  float min_visible = 0.3f;
};

// One entry of the object label map.
struct ObjectClass {
  int64_t label = 0;  // >= 1
  std::string name;
};

// What AttachAnnotations did, for the manifest (AnnotationCounts).
struct AnnotationSummary {
  std::vector<ObjectClass> classes;  // by label
  uint64_t annotated_images = 0;
  uint64_t unannotated_images = 0;
  uint64_t missing_images = 0;
  // YOLO: label files (*.txt in the label folders of the listed images) that
  // no image of the folder has; counted, not rejected.
  uint64_t unmatched_annotations = 0;
  uint64_t boxes = 0;
};

// Reads the annotations and gives each sample of `listing` its objects
// (SourceSample::objects); images without any get an empty list. A sample
// whose annotation is bad moves to listing->rejects; an image an annotation
// names that the folder lacks is added there too. Class labels of the folder
// (class sub-folders) are dropped: with boxes the images are unlabeled.
// When no image matched an annotation, listing->warnings says where the
// first image's was looked for (shard convert then exits 3).
// Errors: kInvalidArgument / kNotFound for an unreadable or malformed
// annotation source as a whole (instances.json, data.yaml, the folder).
StatusOr<AnnotationSummary> AttachAnnotations(const AnnotationOptions& options, Listing* listing);

// Checks the options (format and source given together, min_visible in
// [0, 1]).
Status ValidateAnnotationOptions(const AnnotationOptions& options);

// The TF Object Detection API's label map text (label_map.pbtxt):
//   item {
//     id: 1
//     name: 'cat'
//   }
// Names are escaped once, for protobuf's text format: ' " and \ with a
// backslash, LF CR TAB as \n \r \t, other control bytes as octal \NNN,
// UTF-8 as it is (TF's label_map_util reads `back\\slash` as back\slash).
std::string LabelMapPbtxt(const std::vector<ObjectClass>& classes);

}  // namespace libshard::convert

#endif  // LIBSHARD_CONVERT_ANNOTATIONS_H_
