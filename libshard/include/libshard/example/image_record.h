// The image-record contract: which tf.train.Example records are image
// samples, and their pixels as stored. The batch loader (reader/) and
// `shard verify --decode` (verify/) both go through this module, so they
// accept and refuse exactly the same records with the same messages.
// docs/formats.md ("Image records") states the same rules. The loader's
// geometry (output size, crop, flip, mask fill) is reader/record_pixels.h's.
//
// A record (keys from ImageRecordKeys; defaults are image_keys.h's):
//   image      bytes, non-empty. Required.
//   format     bytes: "jpeg" / "png" / "raw" / "raw.zst" / "raw.up.zst"
//              (jpeg and png in any case, "jpg" too;
//              ParseImageRecordFormat). Absent: JPEG or PNG detected by
//              content. Any other value is an error, and a
//              jpeg/png format must match the bytes' content.
//   shape      raw arrays: exactly 3 int64 [height, width, channels]; height
//              and width >= 1 with height x width within the pixel limit,
//              channels in [1, 4]. Checked as int64: nothing is narrowed.
//   dtype      raw arrays: "uint8" or "uint16", required. A "raw" array's
//              byte count must be exactly what shape and dtype need.
//   label      absent: -1. Otherwise int64 (its first value; an empty list
//              gives -1); a label of another kind is an error, never -1.
//   mask       optional bytes; mask_format "png" / "raw" / "raw.zst" /
//              "raw.up.zst", or absent for a PNG detected by content. A PNG mask is read as
//              stored indices (image::DecodeIndexMask); a raw mask is uint8,
//              1 channel, of the image's size. Either must be 1 channel of
//              the image's (oriented) width and height.
// JPEG and PNG headers are probed, and the stored width x height checked
// against the pixel limit, before any pixel buffer is allocated; JPEG data
// that ends before the image does (a truncated or inflated frame) is an
// error, not grey pixels.
//
//   LIBSHARD_ASSIGN_OR_RETURN(ImageRecord rec, ParseImageRecord(ex, ImageRecordKeys{}, {}));
//   image::Image img;
//   LIBSHARD_RETURN_IF_ERROR(DecodeStoredImage(rec, {}, &img));
//
// Errors: kDataLoss for a record that breaks the contract (messages name the
// key and the offending value), kResourceExhausted for the pixel limit, and
// the decoders' codes (image/decode.h). `part` (when not null) says which
// part of the record an error is about.
// Lifetime: an ImageRecord points into the record bytes, which must outlive it.
// Thread-safety: pure functions; decoders keep per-thread state.
#ifndef LIBSHARD_EXAMPLE_IMAGE_RECORD_H_
#define LIBSHARD_EXAMPLE_IMAGE_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "libshard/example/example_view.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/image.h"
#include "libshard/image/probe.h"
#include "libshard/image/raw_array.h"
#include "libshard/status.h"

namespace libshard::example {

// Feature names of an image record.
struct ImageRecordKeys {
  // Encoded image (JPEG, PNG or raw array). Default: "image/encoded".
  std::string image = keys::kEncoded;
  // int64 class label; a record without it gets label -1. Default: "image/class/label".
  std::string label = keys::kLabel;
  // "jpeg"/"png"/"raw"/"raw.zst"/"raw.up.zst"; absent: detect by content.
  // Default: "image/format".
  std::string format = keys::kFormat;
  // Raw arrays: [height, width, channels]. Default: "image/shape".
  std::string shape = keys::kShape;
  // Raw arrays: "uint8" / "uint16". Default: "image/dtype".
  std::string dtype = keys::kDtype;
  // Segmentation mask bytes. Default: "image/segmentation/class/encoded".
  std::string mask = keys::kMaskEncoded;
  // Mask format ("png", "raw", "raw.zst", "raw.up.zst"). Default: "image/segmentation/class/format".
  std::string mask_format = keys::kMaskFormat;
};

struct ImageRecordLimits {
  // Largest accepted stored width * height (image, raw array, mask).
  // Default: 100'000'000, as image::DecodeOptions.
  uint64_t max_pixels = 100'000'000;
};

enum class ImageRecordFormat { kJpeg, kPng, kRaw, kRawZst, kRawUpZst };
// "jpeg", "png", "raw", "raw.zst", "raw.up.zst".
const char* ImageRecordFormatName(ImageRecordFormat format);
// The one parser of an image/format value: "raw"/"raw.zst"/"raw.up.zst" through
// image::ParseRawFormat, "jpeg"/"jpg"/"png" in any case through
// image::ParseImageFormat. Anything else: kDataLoss naming the value.
StatusOr<ImageRecordFormat> ParseImageRecordFormat(std::string_view name);

// Which part of a record an error is about.
enum class RecordPart {
  kImage,     // the image bytes, their format or header, the pixel limit
  kRawArray,  // a raw array's shape, dtype or bytes
  kLabel,     // the label feature
  kMask,      // the mask bytes or format
  kMaskSize,  // a mask of another size than the image
};

struct ImageRecord {
  std::string_view encoded;
  ImageRecordFormat format = ImageRecordFormat::kJpeg;  // stated, or detected by content
  // JPEG / PNG: the probed header. Raw: format kUnknown.
  image::ImageInfo info;
  // Raw arrays: the shape and dtype (bit_depth 8 or 16).
  image::RawShape shape;
  // The image as a reader sees it: JPEG after EXIF orientation; the stored
  // size otherwise.
  int width = 0;
  int height = 0;
  int64_t label = -1;
  bool has_label = false;
  std::string_view mask;  // empty: no mask
  ImageRecordFormat mask_format = ImageRecordFormat::kPng;

  bool raw() const {
    return format == ImageRecordFormat::kRaw || format == ImageRecordFormat::kRawZst ||
           format == ImageRecordFormat::kRawUpZst;
  }
};

// The label rule alone (see the file comment), for readers of labels that
// decode no image (reader/sample_labels.h): the first int64 of feature `key`;
// nullopt when it is absent or empty; kDataLoss naming the key when it is of
// another kind.
StatusOr<std::optional<int64_t>> ParseRecordLabel(const ExampleView& ex, const std::string& key);

// Checks everything about `ex` that needs no pixel decode (see the file
// comment) and returns the record's parts.
StatusOr<ImageRecord> ParseImageRecord(const ExampleView& ex, const ImageRecordKeys& keys,
                                       const ImageRecordLimits& limits, RecordPart* part = nullptr);

// The image as stored, for checking: JPEG/PNG decoded with channels as
// stored, alpha and 16-bit samples kept, no EXIF orientation; a raw array as
// its shape and dtype say.
Status DecodeStoredImage(const ImageRecord& rec, const ImageRecordLimits& limits, image::Image* out);

// The mask as 1 channel of the image's size (kMask / kMaskSize errors);
// a record without a mask: kDataLoss "no mask in feature ...".
Status DecodeRecordMask(const ImageRecord& rec, const ImageRecordKeys& keys, const ImageRecordLimits& limits,
                        image::Image* out, RecordPart* part = nullptr);

// A raw record's array as stored (rec.raw()), decompressed (and
// unfiltered) straight into `out`, which holds `size` ==
// image::RawByteSize(rec.shape) bytes: DecodeStoredImage's pixels without
// an Image, with its messages. InvalidArgument for a record that is not a
// raw array or another size.
Status DecodeStoredRawInto(const ImageRecord& rec, uint8_t* out, uint64_t size);

}  // namespace libshard::example

#endif  // LIBSHARD_EXAMPLE_IMAGE_RECORD_H_
