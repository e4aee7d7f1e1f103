// Fuzzes the loader's record -> pixels path over arbitrary Example bytes:
// ParseImageRecord (example/image_record.h), then DecodeRecordPixels
// (reader/record_pixels.h) into a small batch slot (as it is, resized, or a
// crop with a flip, with and without the mask), DecodeStoredImage and
// DecodeRecordMask as verify uses them. It must never crash, hang, read out of bounds or allocate past the
// (small) pixel limit.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "libshard/example/example_view.h"
#include "libshard/example/image_record.h"
#include "libshard/reader/record_pixels.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace example = libshard::example;
  namespace image = libshard::image;
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  auto ex = example::ExampleView::Parse(bytes);
  if (!ex.ok()) return 0;
  const example::ImageRecordKeys keys;
  example::ImageRecordLimits limits;
  limits.max_pixels = 1 << 16;  // keep decodes of forged headers small
  auto rec = example::ParseImageRecord(*ex, keys, limits);
  if (!rec.ok()) return 0;
  if (rec->width < 1 || rec->height < 1 ||
      static_cast<uint64_t>(rec->width) * static_cast<uint64_t>(rec->height) > limits.max_pixels) {
    std::abort();  // the contract promised a size within the limit
  }

  constexpr int kSide = 16;
  libshard::reader::PixelRequest req;
  req.width = req.height = kSide;
  req.channels = (mode & 1) ? 1 : 3;
  req.crop_decode = (mode & 2) != 0;
  switch ((mode >> 2) & 3) {
    case 0:  // as it is when it already has the slot's size, else center-crop
      if (rec->width != kSide || rec->height != kSide) {
        req.spec.mode = image::ResizeMode::kCenterCrop;
        req.spec.width = req.spec.height = kSide;
      }
      break;
    case 1:
      req.spec.mode = image::ResizeMode::kLetterbox;
      req.spec.width = req.spec.height = kSide;
      break;
    case 2:  // an eval cut: crop-or-pad (the window decode when it cuts), flipped
      req.spec.mode = image::ResizeMode::kCropOrPad;
      req.spec.width = req.spec.height = kSide;
      req.flip = true;
      break;
    default:  // a random-resized-crop style box and a flip
      req.spec.mode = image::ResizeMode::kStretch;
      req.spec.width = req.spec.height = kSide;
      req.spec.crop =
          image::PixelRect{rec->width / 4, rec->height / 4, std::max(1, rec->width / 2), std::max(1, rec->height / 2)};
      req.flip = true;
      break;
  }
  std::vector<uint8_t> pixels(kSide * kSide * 3), mask(kSide * kSide);
  const bool with_mask = (mode & 16) != 0 && !rec->mask.empty();
  (void)libshard::reader::DecodeRecordPixels(*rec, keys, limits, req, pixels.data(), with_mask ? mask.data() : nullptr);

  image::Image stored, m;
  (void)example::DecodeStoredImage(*rec, limits, &stored);
  if (!rec->mask.empty()) (void)example::DecodeRecordMask(*rec, keys, limits, &m);
  return 0;
}
