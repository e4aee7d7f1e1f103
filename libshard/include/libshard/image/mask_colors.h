// Segmentation masks: colour masks mapped to class indices, and index masks.
//
// A MaskColorMap lists classes in order; class i has index i. It is read from a
// CSV with the header `name,r,g,b` (CamVid's class_dict.csv), one class per
// line, values 0..255; a UTF-8 byte order mark, CRLF line ends, blank lines
// and double-quoted names are accepted. Apply() turns an 8-bit RGB colour mask into a 1-channel
// 8-bit index mask (at most 256 classes). A colour that is not in the map is
// an error by default (the message names the colour and the first pixel
// that has it); with UnknownColor::kIgnore it becomes `ignore_index`
// (default 255, which must not be a class index).
//
// Index masks (palette PNG, or gray PNG whose values are the classes) are
// read as they are with DecodeIndexMask(): palette indices are NOT expanded
// to colours and gray values are not rescaled (a 1/2/4-bit PNG gives
// 0..1/3/15, a 16-bit one its values if all are <= 255). Masks must be
// lossless, so JPEG is refused.
// Masks are resized only with the nearest filter and always with their
// image's geometry: use transform.h ApplyGeometryPair().
//
//   StatusOr<MaskColorMap> map = MaskColorMap::FromCsv(ReadFile("class_dict.csv"));
//   StatusOr<Image> rgb = DecodeImage(mask_png);            // RGB8
//   StatusOr<Image> idx = map->Apply(*rgb, MaskColorOptions{});
//
// Errors: kInvalidArgument for a malformed CSV (with its line number), a
// colour mask that is not RGB8, or an unknown colour under kError.
// Thread-safety: a MaskColorMap is immutable after construction; Apply may be
// called from many threads at once.
#ifndef LIBSHARD_IMAGE_MASK_COLORS_H_
#define LIBSHARD_IMAGE_MASK_COLORS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "libshard/image/image.h"
#include "libshard/status.h"

namespace libshard::image {

struct MaskColorClass {
  std::string name;
  uint8_t r = 0, g = 0, b = 0;
};

enum class UnknownColor {
  kError,   // fail on the first colour not in the map
  kIgnore,  // map it to ignore_index
};

// "error", "ignore"; InvalidArgument naming the choices otherwise.
StatusOr<UnknownColor> ParseUnknownColor(std::string_view name);

struct MaskColorOptions {
  // What a colour missing from the map becomes. Default: kError.
  UnknownColor unknown = UnknownColor::kError;
  // Index for unknown colours under kIgnore (and the usual padding value
  // for ApplyGeometryPair). Default: 255.
  uint8_t ignore_index = 255;
};

class MaskColorMap {
 public:
  static StatusOr<MaskColorMap> FromCsv(std::string_view csv);
  // Classes in index order; colours must be distinct, at most 256 classes.
  static StatusOr<MaskColorMap> FromClasses(std::vector<MaskColorClass> classes);

  int size() const { return static_cast<int>(classes_.size()); }
  const std::vector<MaskColorClass>& classes() const { return classes_; }
  // The index of a colour, if it is in the map.
  std::optional<int> Find(uint8_t r, uint8_t g, uint8_t b) const;

  // RGB8 colour mask -> 1-channel index mask of the same size.
  StatusOr<Image> Apply(const Image& color_mask, const MaskColorOptions& options = {}) const;

 private:
  std::vector<MaskColorClass> classes_;
  std::unordered_map<uint32_t, uint8_t> index_;  // 0xRRGGBB -> class
};

// A palette or gray PNG read as stored indices: 1 channel, 8-bit. A 16-bit
// gray PNG gives its values unchanged when all are <= 255; a larger value is
// InvalidArgument naming it and its pixel (class indices are 0..255).
// max_pixels as in DecodeOptions.
StatusOr<Image> DecodeIndexMask(std::string_view png_bytes, uint64_t max_pixels = 100'000'000);

}  // namespace libshard::image

#endif  // LIBSHARD_IMAGE_MASK_COLORS_H_
