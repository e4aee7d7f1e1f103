// Fuzzes DecodeImage over every format it reads (probe.h DetectFormat): the
// BMP reader, giflib's GIF and libtiff's TIFF paths above all, whose
// truncated or corrupt inputs must come back as a status, never a crash, a
// leak or an unbounded allocation. The last byte picks the options (alpha
// kept, 16-bit kept, the TIFF page); a small pixel limit keeps forged headers
// cheap. An OK result must hold the pixels its shape says, within the pixel
// limit. tests/fuzz/seeds/fuzz_image_decode/ starts it from GIFs whose first
// frame lies past the screen (refused before a row is decoded).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "libshard/image/decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace image = libshard::image;
  if (size < 1) return 0;
  const uint8_t mode = data[size - 1];
  image::DecodeOptions options;
  options.max_pixels = 1 << 20;
  options.alpha = (mode & 1) ? image::AlphaMode::kKeep : image::AlphaMode::kComposite;
  options.keep_16bit = (mode & 2) != 0;
  options.channels = (mode & 4) ? image::ChannelMode::kAuto : image::ChannelMode::kRgb;
  options.tiff_page = (mode >> 4) & 3;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  libshard::StatusOr<image::Image> img = image::DecodeImage(bytes, options);
  if (img.ok() && img->byte_size() !=
                      static_cast<size_t>(img->width()) * img->height() * img->channels() * img->bytes_per_sample()) {
    std::abort();
  }
  if (img.ok() && static_cast<uint64_t>(img->width()) * static_cast<uint64_t>(img->height()) > options.max_pixels) {
    std::abort();
  }
  return 0;
}
