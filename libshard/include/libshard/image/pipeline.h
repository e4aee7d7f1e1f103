// Pipeline: decode + transform in one call, with JPEG shrink-on-load.
//
// When the plan shrinks a JPEG by 2x or more, the JPEG is decoded with DCT
// scaling (1/2, 1/4 or 1/8; transform.h ChooseJpegScale, by default
// Pillow's draft() rule) and the chosen filter finishes the job from the
// smaller image. With the default the result stays within a mean absolute
// difference of about 4 of a full decode + resize on detailed photos
// (typically 1 to 2; tested at 3.0); with jpeg_min_filter_shrink = 2 (as
// libvips) within 1.0, at less of a speed-up.
//
//   TransformSpec spec;
//   spec.mode = ResizeMode::kCenterCrop;
//   spec.width = spec.height = 224;
//   StatusOr<Image> img = DecodeAndTransform(jpeg_bytes, DecodeOptions{}, spec);
//
// Errors: those of DecodeImage and Transform.
// Thread-safety: safe from any thread (per-thread decoder state).
#ifndef LIBSHARD_IMAGE_PIPELINE_H_
#define LIBSHARD_IMAGE_PIPELINE_H_

#include <string_view>

#include "libshard/image/decode.h"
#include "libshard/image/transform.h"

namespace libshard::image {

struct PipelineOptions {
  // Decode with DCT scaling when the plan allows it. Default: true.
  bool shrink_on_load = true;
  // The shrink left to the resize filter after DCT scaling (ChooseJpegScale's
  // min_filter_shrink); 2.0 trades speed for closeness to a full decode.
  // Default: 1.0 (Pillow's draft()).
  double jpeg_min_filter_shrink = 1.0;
};

// decode_options.jpeg_scale_denom is overridden by the shrink-on-load choice.
// The spec's crop box and target size refer to the oriented, full-size image.
StatusOr<Image> DecodeAndTransform(std::string_view bytes, const DecodeOptions& decode_options,
                                   const TransformSpec& spec, const PipelineOptions& options = {});

}  // namespace libshard::image

#endif  // LIBSHARD_IMAGE_PIPELINE_H_
