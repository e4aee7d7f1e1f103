// Sample encoder: one source file (and its mask) to one serialized
// tf.train.Example, the unit of work the converter runs in parallel.
//
// decode -> transform -> encode, with the keys of example/image_keys.h:
//   * a JPEG that DecidePassThrough() allows is stored byte for byte (it is
//     still decoded once, to prove it decodes and to count its pixels);
//   * otherwise the image is decoded (JPEG shrink-on-load when there is no
//     mask), transformed with the spec and encoded as JPEG, PNG or a raw
//     array (16-bit PNG samples stay 16-bit for raw output);
//   * detection boxes (sample.objects) follow EXIF orientation and the
//     transform onto the stored image, clipped or dropped, and are written
//     as the TF Object Detection API's image/object/* keys;
//   * CSV columns (EncodeOptions::features) become features of their own;
//   * a mask is decoded as class indices (through the mask colour map for colour
//     masks), given the image's geometry with the nearest filter (padding
//     with the ignore index) and stored as PNG, or raw like the image.
// On success the sample's statistics (output pixels, label, source format
// and size, bytes) are added to *stats; on error nothing is.
//
//   EncodedSample out;
//   Status s = EncodeSample(sample, "CNV", file_bytes, "", options, &out, &stats);
//   if (!s.ok()) Reject(sample.path, s.message());
//
// Errors: those of the image layer (a file that is not an image is
// kInvalidArgument, a damaged one kDataLoss, a too-large one
// kResourceExhausted), and kInvalidArgument for a mask whose size differs
// from its image's.
// Thread-safety: safe from any thread; `options` is shared read-only.
#ifndef LIBSHARD_CONVERT_SAMPLE_ENCODER_H_
#define LIBSHARD_CONVERT_SAMPLE_ENCODER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "libshard/convert/dataset_stats.h"
#include "libshard/convert/duplicates.h"
#include "libshard/convert/source_listing.h"
#include "libshard/image/decode.h"
#include "libshard/image/encode.h"
#include "libshard/image/mask_colors.h"
#include "libshard/image/passthrough.h"
#include "libshard/image/probe.h"
#include "libshard/image/raw_array.h"
#include "libshard/image/transform.h"
#include "libshard/status.h"

namespace libshard::convert {

struct EncodeOptions {
  // Decode policy (channels, alpha, pixel limit). keep_16bit is forced on for
  // raw output and off otherwise. Default: DecodeOptions{}.
  image::DecodeOptions decode;
  // Crop / resize. Default: no change.
  image::TransformSpec transform;
  // Output encoding. Default: kJpeg.
  image::OutputFormat format = image::OutputFormat::kJpeg;
  // Default: quality 90, 4:2:0.
  image::JpegEncodeOptions jpeg;
  // Default: level 6.
  image::PngEncodeOptions png;
  // Default: zstd level -5, no filter ("raw.zst"; RawEncodeOptions).
  image::RawEncodeOptions raw;
  // Default: kAuto (JPEG pass-through when nothing would change).
  image::ReencodeMode reencode = image::ReencodeMode::kAuto;
  // Colour masks: the map from colours to classes; null for index masks.
  // Borrowed; must outlive every EncodeSample call. Default: nullptr.
  const image::MaskColorMap* mask_labels = nullptr;
  // The file mask_labels came from, named in a mask's reject. Default: "".
  std::string mask_labels_file;
  // Unknown mask colours and the padding index. Default: MaskColorOptions{}.
  image::MaskColorOptions mask_options;
  // Take the stored pixels' fingerprints (EncodedSample::fingerprint) for
  // the leak check. Default: false.
  bool fingerprint = false;
  // Detection boxes (SourceSample::objects): the class names by label, for
  // image/object/class/text. Borrowed; must outlive every EncodeSample call.
  // Default: nullptr.
  const std::map<int64_t, std::string>* object_classes = nullptr;
  // A box keeping less of its area after the crop is dropped
  // (image/box_geometry.h BoxMapOptions). Default: 0.3.
  float box_min_visible = 0.3f;
  // Write image/object/truncated (VOC's). Default: false.
  bool object_truncated = false;
  // CSV columns written after image/key/sha256, each with the sample's
  // value (SourceSample::features, same order). Default: none.
  std::vector<CsvFeature> features;
};

// Checks the options once (quality, levels, spec).
Status ValidateEncodeOptions(const EncodeOptions& options);

struct EncodedSample {
  std::string record;       // the serialized tf.train.Example
  image::ImageInfo source;  // what the source file was
  bool passed_through = false;
  uint64_t image_bytes = 0;  // size of image/encoded
  // With EncodeOptions::fingerprint: FingerprintOf the stored pixels (the
  // decoded source for a pass-through JPEG) keyed by the stored bytes'
  // SHA-256; else empty.
  ImageFingerprint fingerprint;
};

// `class_name` is written as image/class/text when the sample has a label.
Status EncodeSample(const SourceSample& sample, std::string_view class_name, std::string_view bytes,
                    std::string_view mask_bytes, const EncodeOptions& options, EncodedSample* out,
                    StatsAccumulator* stats);

// "Grayscale", "GrayscaleAlpha", "RGB", "RGBA" for 1..4 channels.
const char* ColorspaceName(int channels);

}  // namespace libshard::convert

#endif  // LIBSHARD_CONVERT_SAMPLE_ENCODER_H_
