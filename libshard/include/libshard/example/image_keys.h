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
//   image/shape          int64  raw arrays only: [height, width, channels]
//   image/dtype          bytes  raw arrays only: "uint8" or "uint16"
//   image/segmentation/class/encoded  bytes  the class-index mask
//   image/segmentation/class/format   bytes  "png", "raw", "raw.zst" or "raw.up.zst"
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
inline constexpr char kShape[] = "image/shape";
inline constexpr char kDtype[] = "image/dtype";
inline constexpr char kMaskEncoded[] = "image/segmentation/class/encoded";
inline constexpr char kMaskFormat[] = "image/segmentation/class/format";

}  // namespace libshard::keys

#endif  // LIBSHARD_EXAMPLE_IMAGE_KEYS_H_
