// Fuzzes PNG decoding (decode.h) differentially: where the libdeflate decoder
// takes bytes it must give libpng's pixels, and it must not take bytes libpng
// rejects (but see below for zlib's stricter deflate checks); the default
// decoder (kAuto) must answer exactly as libpng does (same status and
// message, or the same image). The last byte picks
// the decode options (in a PNG it is part of IEND's CRC, so PngSuite files
// are seeds as they are: tools/test.sh --fuzz passes them); a small pixel
// limit keeps forged headers cheap. With bit 4 of it set, every chunk's CRC
// is recomputed first, so that mutations reach IHDR's fields, the zlib
// stream and the filter bytes instead of stopping at the CRC check.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <zlib.h>

#include "libshard/image/decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace image = libshard::image;
  if (size < 1) return 0;
  const uint8_t mode = data[size - 1];
  std::string fixed(reinterpret_cast<const char*>(data), size);
  if (mode & 16) {
    auto be32 = [&](size_t at) {
      return (uint32_t{uint8_t(fixed[at])} << 24) | (uint32_t{uint8_t(fixed[at + 1])} << 16) |
             (uint32_t{uint8_t(fixed[at + 2])} << 8) | uint8_t(fixed[at + 3]);
    };
    for (size_t pos = 8; pos + 12 <= fixed.size();) {
      const uint32_t len = be32(pos);
      if (len > fixed.size() - pos - 12) break;
      const uint32_t crc =
          static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(fixed.data() + pos + 4), len + 4));
      for (int k = 0; k < 4; ++k) fixed[pos + 8 + len + k] = static_cast<char>(crc >> (24 - 8 * k));
      pos += size_t{len} + 12;
    }
  }
  const std::string_view bytes = fixed;
  image::DecodeOptions o;
  o.max_pixels = 1 << 18;
  o.channels = static_cast<image::ChannelMode>(mode % 3);
  o.alpha = (mode & 4) ? image::AlphaMode::kKeep : image::AlphaMode::kComposite;
  o.keep_16bit = (mode & 8) != 0;

  image::Image ref, fast, automatic;
  const libshard::Status ref_st = image::DecodePngWith(image::PngDecoder::kLibpng, bytes, o, &ref);
  const libshard::Status fast_st = image::DecodePngWith(image::PngDecoder::kLibdeflate, bytes, o, &fast);
  const libshard::Status auto_st = image::DecodePngWith(image::PngDecoder::kAuto, bytes, o, &automatic);
  // The one accepted difference: libdeflate maps a few invalid deflate codes
  // (e.g. the reserved length symbols 286/287) to valid ones instead of
  // rejecting them; when the result still matches the Adler-32 and every
  // chunk CRC, the libdeflate decoder keeps it where zlib complains.
  const bool zlib_only_complaint =
      ref_st.code() == libshard::StatusCode::kDataLoss && ref_st.message().find("IDAT: invalid") != std::string::npos;
  if (fast_st.ok() && !ref_st.ok()) {
    if (!zlib_only_complaint) std::abort();
    if (!auto_st.ok() || !(automatic == fast)) std::abort();
    return 0;
  }
  if (fast_st.ok() && !(fast == ref)) std::abort();
  if (auto_st.code() != ref_st.code() || auto_st.message() != ref_st.message()) std::abort();
  if (ref_st.ok() && !(automatic == ref)) std::abort();
  return 0;
}
