// Private: the 8-bit resampling passes behind Resample() (resize.h), one set
// per implementation. Every implementation computes exactly the reference's
// integers (Pillow's fixed point: 22-bit weights, int32 sums, a half added
// before the shift, clipping to 0..255), so their outputs are byte-identical.
#ifndef LIBSHARD_SRC_IMAGE_RESIZE_INTERNAL_H_
#define LIBSHARD_SRC_IMAGE_RESIZE_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace libshard::image::internal {

// Pillow's PRECISION_BITS: weights are round(w * 2^22).
constexpr int kPrecisionBits = 32 - 8 - 2;

// Per output sample: first source index, tap count, and ksize fixed-point
// weights (zero past count). first is non-decreasing and
// first + count <= the source size.
struct Coeffs {
  int ksize = 0;
  std::vector<int> first;
  std::vector<int> count;
  std::vector<int32_t> weights;
};

// Horizontal pass: source rows [y0, y0 + rows) of `in` (in_w x in_h,
// `channels` interleaved samples, no padding) to out_w samples wide rows
// in `out`.
using HorizontalFn = void (*)(const uint8_t* in, int in_w, int in_h, int channels, int y0, int rows, const Coeffs& cf,
                              int out_w, uint8_t* out);
// Vertical pass: rows of `stride` samples; cf.first[y] - row_offset is the
// first row of `in` output row y reads.
using VerticalFn = void (*)(const uint8_t* in, size_t stride, const Coeffs& cf, int row_offset, int out_h,
                            uint8_t* out);

void HorizontalReference8(const uint8_t* in, int in_w, int in_h, int channels, int y0, int rows, const Coeffs& cf,
                          int out_w, uint8_t* out);
void VerticalReference8(const uint8_t* in, size_t stride, const Coeffs& cf, int row_offset, int out_h, uint8_t* out);

// Defined only for x86-64 builds (elsewhere they forward to the reference);
// must only be called when CpuHasAvx2().
bool CpuHasAvx2();
void HorizontalAvx2(const uint8_t* in, int in_w, int in_h, int channels, int y0, int rows, const Coeffs& cf, int out_w,
                    uint8_t* out);
void VerticalAvx2(const uint8_t* in, size_t stride, const Coeffs& cf, int row_offset, int out_h, uint8_t* out);

}  // namespace libshard::image::internal

#endif  // LIBSHARD_SRC_IMAGE_RESIZE_INTERNAL_H_
