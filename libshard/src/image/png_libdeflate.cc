// The libdeflate PNG decoder (codec_internal.h): the chunks are walked here,
// the concatenated IDAT stream is inflated in one call by libdeflate (about
// twice as fast as zlib's inflate) into a buffer of exactly the size IHDR
// implies (rows x (1 + row bytes), summed over the Adam7 passes when
// interlaced), and the rows are unfiltered here (SSE2 for 3- and 4-byte
// pixels); interlaced passes are unfiltered one by one and their pixels
// placed.
//
// It only takes files it can decode to exactly libpng's pixels and that
// libpng would accept: anything else (palette, tRNS, below 8 bits, a CRC or
// zlib error, a bad filter byte, an unknown critical chunk, a chunk past
// libpng's size limits, an image too large to hold inflated besides the
// output) is declined, and DecodePng hands the bytes to libpng, whose
// behaviour and error messages are then those of the file. Errors are
// therefore never reported from here.
#include <libdeflate.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "image/codec_internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace libshard::image::internal {
namespace {

// libpng's defaults (pnglibconf.h): a larger image or ancillary chunk is an
// error there, so it is declined here.
constexpr uint32_t kLibpngMaxSide = 1'000'000;          // PNG_USER_WIDTH_MAX / HEIGHT_MAX
constexpr uint32_t kLibpngMaxChunk = 8'000'000;         // PNG_USER_CHUNK_MALLOC_MAX
constexpr size_t kKeepScratchBytes = size_t{16} << 20;  // larger scratch is freed after use
// The whole inflated image is held besides the output; above this, libpng's
// row-by-row decode keeps the peak memory to the output alone.
constexpr uint64_t kMaxRawBytes = uint64_t{256} << 20;

uint32_t Be32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

bool IsChunkLetter(unsigned char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

bool ChunkCrcOk(const unsigned char* chunk, uint32_t len) {
  // The CRC covers the type and the data, which are contiguous.
  return libdeflate_crc32(0, chunk + 4, size_t{len} + 4) == Be32(chunk + 8 + len);
}

struct DecompressorDeleter {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

// Adam7 (PNG spec section 8.2): pass p holds the pixels x0 + i*dx, y0 + j*dy.
struct Pass {
  uint32_t x0, y0, dx, dy;
};
constexpr Pass kAdam7[7] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4},
                            {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};
constexpr Pass kWholeImage = {0, 0, 1, 1};

struct PassSize {
  uint32_t width, height;
};
PassSize SizeOf(const Pass& p, uint32_t width, uint32_t height) {
  return {width > p.x0 ? (width - p.x0 + p.dx - 1) / p.dx : 0, height > p.y0 ? (height - p.y0 + p.dy - 1) / p.dy : 0};
}

// ---- Unfiltering (PNG spec section 9). `prev` is the unfiltered row above
// (zeros for the first row); `dst` may equal `cur` (in place). ----

inline uint8_t PaethPredictor(int a, int b, int c) {
  const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
  if (pa <= pb && pa <= pc) return static_cast<uint8_t>(a);
  return static_cast<uint8_t>(pb <= pc ? b : c);
}

void UnfilterScalar(int filter, const uint8_t* cur, const uint8_t* prev, uint8_t* dst, size_t n, size_t bpp) {
  switch (filter) {
    case 0:
      if (dst != cur) std::memcpy(dst, cur, n);
      break;
    case 1:
      for (size_t i = 0; i < n; ++i) dst[i] = static_cast<uint8_t>(cur[i] + (i >= bpp ? dst[i - bpp] : 0));
      break;
    case 2:
      for (size_t i = 0; i < n; ++i) dst[i] = static_cast<uint8_t>(cur[i] + prev[i]);
      break;
    case 3:
      for (size_t i = 0; i < n; ++i) {
        dst[i] = static_cast<uint8_t>(cur[i] + (((i >= bpp ? dst[i - bpp] : 0) + prev[i]) >> 1));
      }
      break;
    default:  // 4, Paeth
      for (size_t i = 0; i < n; ++i) {
        dst[i] =
            static_cast<uint8_t>(cur[i] + (i >= bpp ? PaethPredictor(dst[i - bpp], prev[i], prev[i - bpp]) : prev[i]));
      }
      break;
  }
}

#if defined(__SSE2__)
// One pixel of 3 or 4 bytes at a time in the low 16-bit lanes, as libpng's
// own SSE2 filters do (filter_sse2_intrinsics.c): the left neighbour makes
// Sub, Average and Paeth serial along the row.
template <size_t kBytes>
inline __m128i LoadPixel(const uint8_t* p) {
  int v = 0;
  std::memcpy(&v, p, kBytes);
  return _mm_unpacklo_epi8(_mm_cvtsi32_si128(v), _mm_setzero_si128());
}

template <size_t kBpp>
inline void StorePixel(uint8_t* p, __m128i v16) {
  const int v = _mm_cvtsi128_si32(_mm_packus_epi16(v16, v16));
  std::memcpy(p, &v, kBpp);
}

inline __m128i Abs16(__m128i x) { return _mm_max_epi16(x, _mm_sub_epi16(_mm_setzero_si128(), x)); }

inline __m128i Select(__m128i mask, __m128i yes, __m128i no) {
  return _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no));
}

// The state carried along the row: a = the pixel to the left (unfiltered),
// c = the pixel above it; lanes past the pixel's bytes are kept at 0.
struct PixelState {
  __m128i a = _mm_setzero_si128();
  __m128i c = _mm_setzero_si128();
};

template <int kFilter>
inline __m128i Predict(const __m128i b, PixelState* s) {
  if (kFilter == 1) return s->a;
  if (kFilter == 3) return _mm_srli_epi16(_mm_add_epi16(s->a, b), 1);
  // Paeth: pa = |b - c|, pb = |a - c|, pc = |a + b - 2c|; ties prefer a, then b.
  const __m128i pa_s = _mm_sub_epi16(b, s->c), pb_s = _mm_sub_epi16(s->a, s->c);
  const __m128i pa = Abs16(pa_s), pb = Abs16(pb_s), pc = Abs16(_mm_add_epi16(pa_s, pb_s));
  const __m128i smallest = _mm_min_epi16(pc, _mm_min_epi16(pa, pb));
  const __m128i pred = Select(_mm_cmpeq_epi16(smallest, pa), s->a, Select(_mm_cmpeq_epi16(smallest, pb), b, s->c));
  s->c = b;
  return pred;
}

// Sub (1), Average (3) or Paeth (4) for 3- or 4-byte pixels. While a whole
// 4-byte word fits in the row, pixels are loaded and stored as words; for
// 3-byte pixels the fourth lane of a, b and c is kept at 0, so the fourth
// byte stored is the next pixel's filtered byte, unchanged (dst may be cur).
template <size_t kBpp, int kFilter>
void UnfilterPixels(const uint8_t* cur, const uint8_t* prev, uint8_t* dst, size_t n) {
  const __m128i pixel =
      kBpp == 4 ? _mm_set_epi16(0, 0, 0, 0, 255, 255, 255, 255) : _mm_set_epi16(0, 0, 0, 0, 0, 255, 255, 255);
  const __m128i low_byte = _mm_set1_epi16(0xFF);
  PixelState s;
  size_t i = 0;
  for (; i + 4 <= n; i += kBpp) {
    const __m128i b = _mm_and_si128(LoadPixel<4>(prev + i), pixel);
    const __m128i sum = _mm_add_epi16(LoadPixel<4>(cur + i), Predict<kFilter>(b, &s));
    s.a = _mm_and_si128(sum, pixel);
    StorePixel<4>(dst + i, _mm_and_si128(sum, low_byte));
  }
  for (; i < n; i += kBpp) {  // the last 3-byte pixel
    const __m128i b = LoadPixel<kBpp>(prev + i);
    s.a = _mm_and_si128(_mm_add_epi16(LoadPixel<kBpp>(cur + i), Predict<kFilter>(b, &s)), pixel);
    StorePixel<kBpp>(dst + i, s.a);
  }
}

template <size_t kBpp>
void UnfilterPixels(int filter, const uint8_t* cur, const uint8_t* prev, uint8_t* dst, size_t n) {
  if (filter == 1) return UnfilterPixels<kBpp, 1>(cur, prev, dst, n);
  if (filter == 3) return UnfilterPixels<kBpp, 3>(cur, prev, dst, n);
  UnfilterPixels<kBpp, 4>(cur, prev, dst, n);
}

void UnfilterUp(const uint8_t* cur, const uint8_t* prev, uint8_t* dst, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(cur + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(prev + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm_add_epi8(x, b));
  }
  for (; i < n; ++i) dst[i] = static_cast<uint8_t>(cur[i] + prev[i]);
}
#endif

void UnfilterRow(int filter, const uint8_t* cur, const uint8_t* prev, uint8_t* dst, size_t n, size_t bpp) {
#if defined(__SSE2__)
  if (filter == 2) return UnfilterUp(cur, prev, dst, n);
  if (filter != 0 && bpp == 3) return UnfilterPixels<3>(filter, cur, prev, dst, n);
  if (filter != 0 && bpp == 4) return UnfilterPixels<4>(filter, cur, prev, dst, n);
#endif
  UnfilterScalar(filter, cur, prev, dst, n, bpp);
}

// ---- Sample conversion, as libpng's transforms do it ----

// libpng's png_do_scale_16_to_8 (png_set_scale_16): round(v / 257).
inline uint8_t Scale16(unsigned hi, unsigned lo) {
  int32_t tmp = static_cast<int32_t>(hi);
  tmp += ((static_cast<int32_t>(lo) - tmp + 128) * 65535) >> 24;
  return static_cast<uint8_t>(tmp);
}

// One unfiltered row of `in_c` samples per pixel (8 or 16 bit, big-endian)
// to the output row: 16 bit kept (native order) or scaled, gray widened to
// RGB (gray+alpha to RGBA) when `widen`.
void ConvertRow(const uint8_t* in, int width, int in_c, int depth, bool keep_16bit, bool widen, uint8_t* out) {
  const bool alpha = in_c == 2;  // only gray rows are widened
  if (depth == 8) {              // only reached when widening gray
    for (int x = 0; x < width; ++x, in += in_c) {
      out[0] = out[1] = out[2] = in[0];
      out += 3;
      if (alpha) *out++ = in[1];
    }
    return;
  }
  const int out_c = widen ? in_c + 2 : in_c;
  for (int x = 0; x < width; ++x, in += 2 * in_c) {
    for (int k = 0; k < out_c; ++k) {
      // Widened gray: samples 0..2 are the gray one, sample 3 the alpha.
      const int s = widen ? (k < 3 ? 0 : 1) : k;
      const uint8_t hi = in[2 * s], lo = in[2 * s + 1];
      if (keep_16bit) {
        const uint16_t v = static_cast<uint16_t>((hi << 8) | lo);
        std::memcpy(out, &v, 2);
        out += 2;
      } else {
        *out++ = Scale16(hi, lo);
      }
    }
  }
}

}  // namespace

bool DecodePngLibdeflate(std::string_view bytes, const PngReadOptions& opt, Image* out) {
  const auto* d = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t size = bytes.size();
  // Signature (8) + IHDR (8 + 13 + 4); ProbeImage has checked the signature.
  if (size < 33 || Be32(d + 8) != 13 || std::memcmp(d + 12, "IHDR", 4) != 0) return false;
  if (!ChunkCrcOk(d + 8, 13)) return false;
  const uint32_t width = Be32(d + 16), height = Be32(d + 20);
  const int depth = d[24], color_type = d[25];
  if (width == 0 || height == 0 || width > kLibpngMaxSide || height > kLibpngMaxSide) return false;
  const bool interlaced = d[28] == 1;
  if (d[26] != 0 || d[27] != 0 || d[28] > 1) return false;  // compression, filter, interlace
  if (depth != 8 && depth != 16) return false;
  int channels = 0;
  switch (color_type) {
    case 0:
      channels = 1;
      break;
    case 2:
      channels = 3;
      break;
    case 4:
      channels = 2;
      break;
    case 6:
      channels = 4;
      break;
    default:
      return false;  // palette
  }
  if (opt.palette_indices) return false;
  if (uint64_t{width} * height > opt.max_pixels) return false;  // libpng reports the limit

  const size_t bpp = static_cast<size_t>(channels) * (depth / 8);
  const size_t row_bytes = bpp * width;
  // The passes: the whole image, or Adam7's seven (an empty one has no bytes).
  const Pass* passes = interlaced ? kAdam7 : &kWholeImage;
  const int pass_count = interlaced ? 7 : 1;
  uint64_t raw_size = 0;
  for (int p = 0; p < pass_count; ++p) {
    const PassSize ps = SizeOf(passes[p], width, height);
    if (ps.width > 0 && ps.height > 0) raw_size += uint64_t{ps.height} * (ps.width * bpp + 1);
  }
  if (raw_size > kMaxRawBytes) return false;
  // libpng's png_check_chunk_length: an IDAT chunk may not exceed the
  // uncompressed size plus zlib's overhead (or 8 MB, whichever is larger).
  const uint64_t row_factor = row_bytes + 1 + (interlaced ? 6 : 0);
  uint64_t idat_limit = uint64_t{height} * row_factor;
  idat_limit += 6 + 5 * (idat_limit / std::min<uint64_t>(row_factor, 32566) + 1);
  idat_limit = std::max<uint64_t>(kLibpngMaxChunk, std::min<uint64_t>(idat_limit, 0x7FFFFFFF));

  // Walk the chunks after IHDR: one run of IDATs, ancillary chunks anywhere
  // (skipped, as libpng does with those it does not use), then IEND.
  thread_local std::vector<std::pair<const unsigned char*, uint32_t>> idats;
  idats.clear();
  size_t idat_bytes = 0;
  bool idat_run_ended = false, iend = false;
  size_t pos = 33;
  while (!iend) {
    if (size - pos < 12) return false;  // truncated: libpng names it
    const uint32_t len = Be32(d + pos);
    const unsigned char* type = d + pos + 4;
    if (len > 0x7FFFFFFFu || size - pos - 12 < len) return false;
    for (int k = 0; k < 4; ++k) {
      if (!IsChunkLetter(type[k])) return false;
    }
    if (std::memcmp(type, "IDAT", 4) == 0) {
      if (idat_run_ended || len > idat_limit || !ChunkCrcOk(d + pos, len)) return false;
      idats.emplace_back(d + pos + 8, len);
      idat_bytes += len;
    } else {
      if (!idats.empty()) idat_run_ended = true;
      if (std::memcmp(type, "IEND", 4) == 0) {
        if (len != 0 || !ChunkCrcOk(d + pos, 0)) return false;
        iend = true;
      } else if ((type[0] & 0x20) == 0) {
        return false;  // IHDR again, PLTE, or an unknown critical chunk
      } else if (std::memcmp(type, "tRNS", 4) == 0 || len > kLibpngMaxChunk) {
        return false;
      }
    }
    pos += size_t{len} + 12;
  }
  if (idats.empty() || idat_bytes < 2) return false;

  // One contiguous zlib stream (libpng writes 8 KiB IDATs, so usually a copy).
  thread_local std::vector<unsigned char> joined;
  const unsigned char* z = idats[0].first;
  if (idats.size() > 1) {
    joined.resize(idat_bytes);
    size_t at = 0;
    for (const auto& [p, n] : idats) {
      std::memcpy(joined.data() + at, p, n);
      at += n;
    }
    z = joined.data();
  }
  // zlib rejects a distance beyond the window the header declares; libdeflate
  // always allows 32 KiB. Only a window no output can outgrow is taken.
  const int cinfo = z[0] >> 4;
  if (cinfo < 7 && raw_size > (uint64_t{1} << (cinfo + 8))) return false;

  thread_local std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> inflater(libdeflate_alloc_decompressor());
  if (inflater == nullptr) return false;
  thread_local std::vector<uint8_t> raw;
  raw.resize(raw_size);
  const bool inflated =
      libdeflate_zlib_decompress(inflater.get(), z, idat_bytes, raw.data(), raw_size, nullptr) == LIBDEFLATE_SUCCESS;
  if (joined.capacity() > kKeepScratchBytes) std::vector<unsigned char>().swap(joined);
  if (!inflated) {
    if (raw.capacity() > kKeepScratchBytes) std::vector<uint8_t>().swap(raw);
    return false;  // corrupt, short or long stream: libpng decides
  }

  const bool widen = opt.gray_to_rgb && channels <= 2;
  const bool keep16 = depth == 16 && opt.keep_16bit;
  const int out_c = widen ? channels + 2 : channels;
  out->Reset(static_cast<int>(width), static_cast<int>(height), out_c, keep16 ? 16 : 8);
  const size_t out_pixel = static_cast<size_t>(out_c) * (keep16 ? 2 : 1);
  // Rows already in the output format are unfiltered in place in `raw` and
  // then placed, or, without interlace, unfiltered straight into *out; the
  // others are converted into `line_out` (or *out) first.
  const bool same_format = depth == 8 && !widen;
  thread_local std::vector<uint8_t> zeros, line_out;
  if (zeros.size() < row_bytes) zeros.assign(row_bytes, 0);
  if (interlaced && line_out.size() < out_pixel * width) line_out.resize(out_pixel * width);
  uint8_t* line = raw.data();
  bool ok = true;
  for (int p = 0; p < pass_count && ok; ++p) {
    const Pass& pass = passes[p];
    const PassSize ps = SizeOf(pass, width, height);
    if (ps.width == 0 || ps.height == 0) continue;
    const size_t pass_row_bytes = ps.width * bpp;
    const uint8_t* prev = zeros.data();
    for (uint32_t j = 0; j < ps.height; ++j, line += pass_row_bytes + 1) {
      const int filter = line[0];
      if (filter > 4) {
        ok = false;  // libpng: "bad adaptive filter value"
        break;
      }
      uint8_t* const y_row = out->row(static_cast<int>(pass.y0 + j * pass.dy));
      uint8_t* dst = !interlaced && same_format ? y_row : line + 1;
      UnfilterRow(filter, line + 1, prev, dst, pass_row_bytes, bpp);
      prev = dst;
      if (!interlaced) {
        if (!same_format) ConvertRow(dst, static_cast<int>(ps.width), channels, depth, opt.keep_16bit, widen, y_row);
        continue;
      }
      const uint8_t* px = dst;
      if (!same_format) {
        ConvertRow(dst, static_cast<int>(ps.width), channels, depth, opt.keep_16bit, widen, line_out.data());
        px = line_out.data();
      }
      for (uint32_t i = 0; i < ps.width; ++i) {
        std::memcpy(y_row + (pass.x0 + size_t{i} * pass.dx) * out_pixel, px + i * out_pixel, out_pixel);
      }
    }
  }
  if (raw.capacity() > kKeepScratchBytes) std::vector<uint8_t>().swap(raw);
  if (zeros.size() > kKeepScratchBytes / 16) std::vector<uint8_t>().swap(zeros);
  if (line_out.size() > kKeepScratchBytes / 16) std::vector<uint8_t>().swap(line_out);
  return ok;
}

}  // namespace libshard::image::internal
