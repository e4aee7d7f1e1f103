// Fuzzes the raw array decoder (image/raw_array.h) directly: the first bytes
// choose the shape (small), dtype and format (raw, raw.zst, raw.up.zst), the
// rest is the array bytes. DecodeRaw and DecodeRawInto must never crash, read
// out of bounds or allocate past the limit; what they accept must round-trip
// through EncodeRaw with the same format.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "libshard/image/raw_array.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace image = libshard::image;
  if (size < 4) return 0;
  image::RawShape shape;
  shape.height = data[0] % 40;  // 0 and 5 are invalid: refused, never decoded
  shape.width = data[1] % 40;
  shape.channels = data[2] % 6;
  shape.bit_depth = (data[3] & 1) ? 16 : 8;
  const image::RawCompression c = static_cast<image::RawCompression>((data[3] >> 1) % 3);
  std::string_view bytes(reinterpret_cast<const char*>(data + 4), size - 4);
  const uint64_t limit = 1 << 14;
  auto img = image::DecodeRaw(bytes, shape, c, limit);
  const uint64_t n = image::RawByteSize(shape);
  std::vector<uint8_t> out(n > 0 && n <= limit ? n : 1);
  libshard::Status s = image::DecodeRawInto(bytes, shape, c, out.data(), out.size(), limit);
  if (img.ok() != s.ok()) std::abort();  // one decoder, two entry points
  if (!img.ok()) return 0;
  if (std::memcmp(out.data(), img->data(), img->byte_size()) != 0) std::abort();
  image::RawEncodeOptions o;
  o.zstd_level = c == image::RawCompression::kNone ? 0 : 1;
  o.filter = c == image::RawCompression::kZstdUp ? image::RawFilter::kUp : image::RawFilter::kNone;
  auto again = image::EncodeRaw(*img, o);
  if (!again.ok()) std::abort();
  auto back = image::DecodeRaw(*again, shape, c, limit);
  if (!back.ok() || !(*back == *img)) std::abort();
  return 0;
}
