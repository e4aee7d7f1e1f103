#include "libshard/image/pipeline.h"

#include "libshard/image/probe.h"

namespace libshard::image {

StatusOr<Image> DecodeAndTransform(std::string_view bytes, const DecodeOptions& decode_options,
                                   const TransformSpec& spec, const PipelineOptions& options) {
  LIBSHARD_ASSIGN_OR_RETURN(ImageInfo info, ProbeImage(bytes, decode_options.tiff_page));
  int w = info.width, h = info.height;
  if (info.format == ImageFormat::kJpeg && decode_options.apply_orientation) {
    w = info.oriented_width();
    h = info.oriented_height();
  }
  LIBSHARD_ASSIGN_OR_RETURN(Geometry g, PlanGeometry(w, h, spec));
  DecodeOptions d = decode_options;
  d.jpeg_scale_denom = 1;
  if (options.shrink_on_load) {
    ImageInfo oriented = info;
    oriented.width = w;
    oriented.height = h;
    oriented.orientation = 1;
    d.jpeg_scale_denom = ChooseJpegScale(oriented, spec, options.jpeg_min_filter_shrink);
  }
  thread_local Image decoded;
  LIBSHARD_RETURN_IF_ERROR(DecodeImageInto(bytes, d, &decoded));
  return ApplyGeometry(decoded, g, spec.filter, spec.fill);
}

}  // namespace libshard::image
