// The tf.train.Example feature keys libshard writes for an image sample and
// reads back: those of TensorFlow's ImageNet converter and the Object
// Detection API, so TF and DALI pipelines written for those read libshard
// shards unchanged. docs/convert.md lists kinds and when each is present.
//
//   image/encoded        bytes  the image: JPEG, PNG or a raw array
//   image/format         bytes  "jpeg", "png", "raw", "raw.zst" or "raw.up.zst"
//   image/height         int64  pixels of the stored image
//   image/width          int64
//   image/channels       int64  1 gray, 2 gray+alpha, 3 RGB, 4 RGBA
//   image/colorspace     bytes  "Grayscale", "RGB", "GrayscaleAlpha", "RGBA"
//   image/class/label    int64  absent for unlabeled inputs
//   image/class/text     bytes  class name, absent for unlabeled inputs
//   image/filename       bytes  path relative to the input root
//   image/key/sha256     bytes  hex SHA-256 of the source file's bytes
//   image/source_id      bytes  detection boxes only: the COCO image id as a
//                               decimal string (create_coco_tf_record.py's
//                               key, what the OD API's COCO evaluation keys
//                               images by); else (YOLO, VOC, an image COCO
//                               does not name) the path relative to the input
//                               root
//   image/shape          int64  raw arrays only: [height, width, channels]
//   image/dtype          bytes  raw arrays only: "uint8" or "uint16"
//   image/segmentation/class/encoded  bytes  the class-index mask
//   image/segmentation/class/format   bytes  "png", "raw", "raw.zst" or "raw.up.zst"
//
// Detection boxes (shard convert --coco / --yolo / --voc), the TF Object
// Detection API's keys (object_detection/core/standard_fields.py
// TfExampleFields), one list entry per object, all lists of equal length
// (absent or empty for an image without objects):
//   image/object/bbox/xmin   float  in [0, 1] of the stored image's width
//   image/object/bbox/xmax   float  xmin <= xmax
//   image/object/bbox/ymin   float  in [0, 1] of the stored image's height
//   image/object/bbox/ymax   float  ymin <= ymax
//   image/object/class/label int64  1-based (0 is background), manifest object_labels
//   image/object/class/text  bytes  the class name
//   image/object/area        float  in stored-image pixels
//   image/object/is_crowd    int64  0 or 1 (COCO iscrowd)
//   image/object/difficult   int64  0 or 1 (VOC difficult)
//   image/object/truncated   int64  0 or 1 (VOC truncated)
//
// Thread-safety: constants.
#ifndef LIBSHARD_EXAMPLE_IMAGE_KEYS_H_
#define LIBSHARD_EXAMPLE_IMAGE_KEYS_H_

namespace libshard::keys {

inline constexpr char kEncoded[] = "image/encoded";
inline constexpr char kFormat[] = "image/format";
inline constexpr char kHeight[] = "image/height";
inline constexpr char kWidth[] = "image/width";
inline constexpr char kChannels[] = "image/channels";
inline constexpr char kColorspace[] = "image/colorspace";
inline constexpr char kLabel[] = "image/class/label";
inline constexpr char kText[] = "image/class/text";
inline constexpr char kFilename[] = "image/filename";
inline constexpr char kSha256[] = "image/key/sha256";
inline constexpr char kSourceId[] = "image/source_id";
inline constexpr char kShape[] = "image/shape";
inline constexpr char kDtype[] = "image/dtype";
inline constexpr char kMaskEncoded[] = "image/segmentation/class/encoded";
inline constexpr char kMaskFormat[] = "image/segmentation/class/format";
inline constexpr char kObjectXmin[] = "image/object/bbox/xmin";
inline constexpr char kObjectXmax[] = "image/object/bbox/xmax";
inline constexpr char kObjectYmin[] = "image/object/bbox/ymin";
inline constexpr char kObjectYmax[] = "image/object/bbox/ymax";
inline constexpr char kObjectLabel[] = "image/object/class/label";
inline constexpr char kObjectText[] = "image/object/class/text";
inline constexpr char kObjectArea[] = "image/object/area";
inline constexpr char kObjectIsCrowd[] = "image/object/is_crowd";
inline constexpr char kObjectDifficult[] = "image/object/difficult";
inline constexpr char kObjectTruncated[] = "image/object/truncated";

}  // namespace libshard::keys

#endif  // LIBSHARD_EXAMPLE_IMAGE_KEYS_H_
