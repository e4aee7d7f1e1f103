// Record pixels: an image record (example/image_record.h, the contract of
// which records load) as the pixels of one batch slot. The loader chooses the
// geometry (output size, resize mode or crop box, flip, mask fill) and this
// module decodes the record into it; `shard report` uses it for thumbnails.
//
//   LIBSHARD_ASSIGN_OR_RETURN(example::ImageRecord rec, example::ParseImageRecord(ex, keys, {}));
//   PixelRequest req;
//   req.width = req.height = 224;
//   req.spec.mode = image::ResizeMode::kCenterCrop;
//   req.spec.width = req.spec.height = 224;
//   LIBSHARD_RETURN_IF_ERROR(DecodeRecordPixels(rec, keys, {}, req, slot, nullptr));
//
// Per record format:
//   - JPEG / PNG: decoded with image::DecodeAndTransform (JPEG DCT scaling
//     when the plan shrinks 2x or more, unless dct_scale is off); an image already of the slot's size
//     with no geometry asked is decoded and copied as it is. A crop of an
//     upright 8-bit JPEG with crop_decode (an explicit crop box, or a
//     center-crop / crop-or-pad plan that cuts the image without padding:
//     an eval centre crop) decodes only the rows and iMCU columns the crop
//     (plus the filter's reach) needs, at the same DCT scale: the same
//     pixels as the full decode.
//   - raw arrays: a uint8 array of exactly the slot's shape, with no
//     geometry, is decompressed (and unfiltered) straight into the slot;
//     others are decoded (16-bit reduced as round(v / 257), as 16-bit PNGs
//     are) and transformed as images.
//   - the mask gets the image's geometry with nearest-neighbour sampling,
//     padded pixels set to mask_fill.
// Errors: the record contract's (example/image_record.h) and the decoders';
// InvalidArgument when the result is not of the requested size (mode kNone
// on an image of another size).
// Thread-safety: pure functions; decoders keep per-thread state.
#ifndef LIBSHARD_READER_RECORD_PIXELS_H_
#define LIBSHARD_READER_RECORD_PIXELS_H_

#include <cstdint>

#include "libshard/example/image_record.h"
#include "libshard/image/transform.h"
#include "libshard/status.h"

namespace libshard::reader {

// What a training batch wants from a record: `channels` (1 gray or 3 RGB)
// 8-bit samples, `width` x `height`, reached through `spec` (mode kNone and
// no crop: the image must already have that size).
struct PixelRequest {
  int width = 0;
  int height = 0;
  int channels = 3;
  image::TransformSpec spec;
  // Mirror the result left-right (image and mask).
  bool flip = false;
  // A JPEG crop decodes only the rows and columns the crop needs (same pixels).
  bool crop_decode = true;
  // JPEG DCT scaling when the plan shrinks 2x or more (image::ChooseJpegScale);
  // false: full-scale decode, exactly DecodeImage + Transform.
  bool dct_scale = true;
  // Mask value for padded pixels.
  uint8_t mask_fill = 0;
};

// Decodes `rec` into `image` (height x width x channels bytes) and, when
// `mask` is not null, its mask into `mask` (height x width bytes) with the
// same geometry (nearest neighbour). 16-bit raw arrays are reduced to 8 bits
// as round(v / 257), as 16-bit PNGs are; alpha is composited over white.
Status DecodeRecordPixels(const example::ImageRecord& rec, const example::ImageRecordKeys& keys,
                          const example::ImageRecordLimits& limits, const PixelRequest& request, uint8_t* image,
                          uint8_t* mask);

}  // namespace libshard::reader

#endif  // LIBSHARD_READER_RECORD_PIXELS_H_
