// Batch layout: how BatchLoader writes a decoded sample into its batch slot.
//
// A sample is always decoded to uint8 H x W x C first. The loader then stores
// it in the batch as asked by BatchLoaderOptions::layout / dtype / mean / std:
//   - layout kNHWC (channels last, the decode order) or kNCHW (channels first,
//     what torch models take);
//   - dtype kUint8 (the decoded bytes), kFloat32 or kFloat16;
//   - for a float dtype, each value is (x / 255 - mean[c]) / std[c], with
//     mean / std per channel on the 0..1 scale as torchvision's Normalize
//     (no mean / std: x / 255). float32 is computed as x * scale[c] +
//     bias[c] in float (vectorised; within a few ulp, < 1e-6, of the exact
//     value); float16 is the exact value rounded once (to nearest even),
//     through a 256-entry table per channel.
// uint8 NHWC is the identity: the loader then decodes straight into the
// batch. Masks are not affected (always uint8 N x H x W).
//
//   LIBSHARD_ASSIGN_OR_RETURN(SampleConverter conv,
//       SampleConverter::Create(Layout::kNCHW, PixelType::kFloat32, {0.485, 0.456, 0.406},
//                               {0.229, 0.224, 0.225}, 224, 224, 3));
//   conv.Convert(decoded_hwc, batch_bytes + i * conv.sample_bytes());
//
// Thread-safety: a SampleConverter is immutable after Create(); Convert()
// may run on many threads at once.
#ifndef LIBSHARD_READER_BATCH_LAYOUT_H_
#define LIBSHARD_READER_BATCH_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "libshard/status.h"

namespace libshard::reader {

enum class Layout { kNHWC, kNCHW };
// "NHWC" / "NCHW".
const char* LayoutName(Layout layout);
StatusOr<Layout> ParseLayout(std::string_view name);

enum class PixelType { kUint8, kFloat32, kFloat16 };
// "uint8" / "float32" / "float16" (numpy's names).
const char* PixelTypeName(PixelType type);
StatusOr<PixelType> ParsePixelType(std::string_view name);
// Bytes per value: 1, 4 or 2.
size_t PixelTypeSize(PixelType type);

// IEEE 754 binary16 bits of `v`, rounded to nearest even (overflow: inf).
uint16_t DoubleToHalf(double v);

class SampleConverter {
 public:
  // InvalidArgument (naming the argument) when mean / std are given with
  // dtype kUint8, when their length is neither 0 nor `channels`, when a
  // std value is 0 or not finite or a mean value not finite, or when a
  // result (x / 255 - mean[c]) / std[c] for x in 0..255 is not finite in the
  // dtype (float16: beyond +-65504; float32: beyond +-3.4e38), e.g. std
  // 1e-300 or mean 1e300; or when a value is beyond +-1, the 0..255 scale
  // (pixels are x / 255).
  static StatusOr<SampleConverter> Create(Layout layout, PixelType dtype, const std::vector<double>& mean,
                                          const std::vector<double>& std, int height, int width, int channels);
  SampleConverter() = default;

  // True for uint8 NHWC: the decoded bytes are the batch's bytes.
  bool identity() const { return layout_ == Layout::kNHWC && dtype_ == PixelType::kUint8; }
  // Bytes of one sample in the batch: H * W * C * PixelTypeSize(dtype).
  size_t sample_bytes() const { return pixels_ * static_cast<size_t>(channels_) * PixelTypeSize(dtype_); }
  // Writes one sample: `hwc` holds H * W * C decoded bytes; `dst`
  // sample_bytes() bytes, aligned for the dtype.
  void Convert(const uint8_t* hwc, void* dst) const;

 private:
  Layout layout_ = Layout::kNHWC;
  PixelType dtype_ = PixelType::kUint8;
  size_t pixels_ = 0;  // H * W
  int channels_ = 0;
  std::vector<float> scale_, bias_;  // float32: x * scale[c] + bias[c]
  std::vector<uint16_t> lut16_;      // channels x 256
};

}  // namespace libshard::reader

#endif  // LIBSHARD_READER_BATCH_LAYOUT_H_
