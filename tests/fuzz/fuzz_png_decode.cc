// Fuzzes PNG decoding (decode.h) differentially: the libdeflate decoder must
// never take bytes libpng rejects, and where it takes them it must give
// libpng's pixels; the default decoder (kAuto) must answer exactly as libpng
// does (same status and message, or the same image). The last byte picks
// the decode options (in a PNG it is part of IEND's CRC, so PngSuite files
// are seeds as they are: tools/test.sh --fuzz passes them); a small pixel
// limit keeps forged headers cheap.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "libshard/image/decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace image = libshard::image;
  if (size < 1) return 0;
  const uint8_t mode = data[size - 1];
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  image::DecodeOptions o;
  o.max_pixels = 1 << 18;
  o.channels = static_cast<image::ChannelMode>(mode % 3);
  o.alpha = (mode & 4) ? image::AlphaMode::kKeep : image::AlphaMode::kComposite;
  o.keep_16bit = (mode & 8) != 0;

  image::Image ref, fast, automatic;
  const libshard::Status ref_st = image::DecodePngWith(image::PngDecoder::kLibpng, bytes, o, &ref);
  const libshard::Status fast_st = image::DecodePngWith(image::PngDecoder::kLibdeflate, bytes, o, &fast);
  const libshard::Status auto_st = image::DecodePngWith(image::PngDecoder::kAuto, bytes, o, &automatic);
  if (fast_st.ok() && (!ref_st.ok() || !(fast == ref))) std::abort();
  if (auto_st.code() != ref_st.code() || auto_st.message() != ref_st.message()) std::abort();
  if (ref_st.ok() && !(automatic == ref)) std::abort();
  return 0;
}
