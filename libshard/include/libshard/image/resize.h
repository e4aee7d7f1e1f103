// Resample: the separable resampling kernel under every resize.
//
// Filters follow Pillow's resample.c, so results match PIL.Image.resize to
// within rounding: the filter's support is scaled by the shrink factor when
// shrinking (antialiasing), weights are precomputed per output row/column,
// normalised, and turned into 22-bit fixed-point integers; the horizontal
// pass runs first, then the vertical pass; a pass is skipped when its size
// and box are unchanged. Sample (x + 0.5) of the output maps to source
// coordinate box.x0 + (x + 0.5) * box_width / out_width.
//   kNearest   the source pixel under the output pixel centre (no blending)
//   kBox       area average (support 0.5)
//   kBilinear  triangle (support 1)
//   kBicubic   cubic convolution a = -0.5 (support 2)
//   kLanczos3  sinc windowed by sinc, 3 lobes (support 3)
// Images with alpha are resampled premultiplied (as Pillow does), so
// transparent pixels do not bleed colour. Only the source rows and columns
// the filter windows touch are read.
//
// 8-bit images have two implementations that give identical bytes: the
// plain scalar reference, and AVX2 (vertical pass 8 samples per register;
// horizontal pass 8 output samples per register through byte shuffles while
// each group of 4 samples starts within 16 source bytes, up to a shrink by
// about 4 for RGB; beyond that two RGB/RGBA pixels per register, and gray
// and gray+alpha use the reference's horizontal pass), picked at run time
// when the CPU has it.
// 16-bit images and kNearest always use portable code.
//
//   StatusOr<Image> small = Resize(img, 224, 224, Filter::kLanczos3);
//
// Errors: kInvalidArgument for a zero/negative size or a box outside the
// image. Thread-safety: pure functions, safe from any thread.
#ifndef LIBSHARD_IMAGE_RESIZE_H_
#define LIBSHARD_IMAGE_RESIZE_H_

#include <cstdint>
#include <string_view>

#include "libshard/image/image.h"
#include "libshard/status.h"

namespace libshard::image {

enum class Filter { kNearest, kBox, kBilinear, kBicubic, kLanczos3 };

// "nearest", "area", "bilinear", "bicubic", "lanczos3".
const char* FilterName(Filter filter);
// Accepts the names above ("box" is an alias of "area", "lanczos" of
// "lanczos3"); kInvalidArgument otherwise.
StatusOr<Filter> ParseFilter(std::string_view name);

// A source region in pixel units; may be fractional. x1/y1 are exclusive.
struct ResampleBox {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

// Resamples `box` of `in` (8- or 16-bit, 1..4 channels) to out_width x
// out_height.
StatusOr<Image> Resample(const Image& in, const ResampleBox& box, int out_width, int out_height, Filter filter);

// Resample() into the caller's buffer `out`, which must hold out_width x
// out_height x in.channels() samples of in's bit depth (rows packed, no
// padding); every sample is written, nothing is allocated for the output.
// The same pixels as Resample(). Errors as Resample(), `out` untouched then.
// For a loader that resamples straight into a batch slot. `mirror`: the
// result mirrored left to right (output column x is column out_width - 1 - x
// of the unmirrored result, byte for byte), done by the horizontal pass
// writing its rows backwards, so a random flip costs no pass of its own.
Status ResampleInto(const Image& in, const ResampleBox& box, int out_width, int out_height, Filter filter, uint8_t* out,
                    bool mirror = false);

// The whole image to out_width x out_height.
StatusOr<Image> Resize(const Image& in, int out_width, int out_height, Filter filter);

// The 8-bit resampling implementations, for tests and benchmarks; Resample()
// uses ActiveResampleImpl().
enum class ResampleImpl { kReference, kAvx2 };
// "reference", "avx2".
const char* ResampleImplName(ResampleImpl impl);
bool ResampleImplAvailable(ResampleImpl impl);
// The fastest implementation available on this CPU.
ResampleImpl ActiveResampleImpl();
// Resample() with the given implementation; kFailedPrecondition when the
// CPU lacks it.
StatusOr<Image> ResampleWith(ResampleImpl impl, const Image& in, const ResampleBox& box, int out_width, int out_height,
                             Filter filter, bool mirror = false);

}  // namespace libshard::image

#endif  // LIBSHARD_IMAGE_RESIZE_H_
