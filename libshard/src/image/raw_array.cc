// Raw HWC arrays: stored, zstd, or Up-filtered + zstd (raw_array.h).
#include "libshard/image/raw_array.h"

#include <zstd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace libshard::image {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "raw arrays are little-endian; add byte swapping for big-endian hosts");

std::string ShapeString(const RawShape& s) {
  return std::to_string(s.height) + "x" + std::to_string(s.width) + "x" + std::to_string(s.channels) + " " +
         RawDtypeName(s.bit_depth);
}

struct ZstdCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// One decompression context per thread, for every call on it: creating one
// per array costs more than decompressing a 224x224 image.
ZSTD_DCtx* ThreadDCtx() {
  thread_local std::unique_ptr<ZSTD_DCtx, ZstdCtxFree> dctx(ZSTD_createDCtx());
  return dctx.get();
}

// 16 bytes of samples; GCC / Clang vector extensions compile to SSE2 / NEON.
typedef uint8_t U8x16 __attribute__((vector_size(16)));
typedef uint16_t U16x8 __attribute__((vector_size(16)));
template <typename T>
struct Vec16;
template <>
struct Vec16<uint8_t> {
  using type = U8x16;
};
template <>
struct Vec16<uint16_t> {
  using type = U16x8;
};

// dst[i] = a[i] op b[i] over `n` samples of T, 16 bytes at a time (the
// pointers may alias exactly, dst == a, and are of any alignment).
template <typename T, bool kAdd>
void RowOp(uint8_t* dst, const uint8_t* a, const uint8_t* b, size_t bytes) {
  size_t i = 0;
  for (; i + 16 <= bytes; i += 16) {
    typename Vec16<T>::type va, vb;
    std::memcpy(&va, a + i, 16);
    std::memcpy(&vb, b + i, 16);
    va = kAdd ? va + vb : va - vb;
    std::memcpy(dst + i, &va, 16);
  }
  for (; i < bytes; i += sizeof(T)) {
    T va, vb;
    std::memcpy(&va, a + i, sizeof(T));
    std::memcpy(&vb, b + i, sizeof(T));
    const T v = static_cast<T>(kAdd ? va + vb : va - vb);
    std::memcpy(dst + i, &v, sizeof(T));
  }
}

// PNG's Up filter over whole rows of `row_bytes`: out row y = row y - row
// y-1 (mod 2^bits), row 0 as it is.
void UpFilter(const uint8_t* src, uint8_t* out, size_t row_bytes, int height, int bit_depth) {
  std::memcpy(out, src, row_bytes);
  for (int y = 1; y < height; ++y) {
    const uint8_t* cur = src + static_cast<size_t>(y) * row_bytes;
    uint8_t* o = out + static_cast<size_t>(y) * row_bytes;
    if (bit_depth == 16) {
      RowOp<uint16_t, false>(o, cur, cur - row_bytes, row_bytes);
    } else {
      RowOp<uint8_t, false>(o, cur, cur - row_bytes, row_bytes);
    }
  }
}

// Undoes UpFilter in place: row y += row y-1, top to bottom.
void UndoUpFilter(uint8_t* p, size_t row_bytes, int height, int bit_depth) {
  for (int y = 1; y < height; ++y) {
    uint8_t* cur = p + static_cast<size_t>(y) * row_bytes;
    if (bit_depth == 16) {
      RowOp<uint16_t, true>(cur, cur, cur - row_bytes, row_bytes);
    } else {
      RowOp<uint8_t, true>(cur, cur, cur - row_bytes, row_bytes);
    }
  }
}

Status CheckShape(const RawShape& shape, uint64_t max_bytes) {
  if (RawByteSize(shape) == 0) {
    return InvalidArgumentError("raw decode: invalid shape " + ShapeString(shape) +
                                " (channels must be 1..4, dtype uint8 or uint16)");
  }
  if (RawByteSize(shape) > max_bytes) {
    return ResourceExhaustedError("raw decode: shape " + ShapeString(shape) + " needs " +
                                  std::to_string(RawByteSize(shape)) + " bytes, over the limit of " +
                                  std::to_string(max_bytes));
  }
  return Status::OK();
}

}  // namespace

RawShape RawShapeOf(const Image& img) { return RawShape{img.height(), img.width(), img.channels(), img.bit_depth()}; }

const char* RawFormatName(RawCompression compression) {
  switch (compression) {
    case RawCompression::kNone:
      return "raw";
    case RawCompression::kZstd:
      return "raw.zst";
    case RawCompression::kZstdUp:
      return "raw.up.zst";
  }
  return "raw";
}

StatusOr<RawCompression> ParseRawFormat(std::string_view name) {
  if (name == "raw") return RawCompression::kNone;
  if (name == "raw.zst") return RawCompression::kZstd;
  if (name == "raw.up.zst") return RawCompression::kZstdUp;
  return InvalidArgumentError("unknown raw array format '" + std::string(name) +
                              "' (expected raw, raw.zst or raw.up.zst)");
}

const char* RawFilterName(RawFilter filter) { return filter == RawFilter::kUp ? "up" : "none"; }

StatusOr<RawFilter> ParseRawFilter(std::string_view name) {
  if (name == "up") return RawFilter::kUp;
  if (name == "none") return RawFilter::kNone;
  return InvalidArgumentError("unknown raw filter '" + std::string(name) + "' (expected up or none)");
}

const char* RawDtypeName(int bit_depth) { return bit_depth == 16 ? "uint16" : "uint8"; }

StatusOr<int> ParseRawDtype(std::string_view name) {
  if (name == "uint8") return 8;
  if (name == "uint16") return 16;
  return InvalidArgumentError("unsupported raw dtype '" + std::string(name) + "' (expected uint8 or uint16)");
}

Status ValidateRawEncodeOptions(const RawEncodeOptions& options) {
  if (options.zstd_level < ZSTD_minCLevel() || options.zstd_level > ZSTD_maxCLevel()) {
    return InvalidArgumentError("zstd level " + std::to_string(options.zstd_level) + " is outside " +
                                std::to_string(ZSTD_minCLevel()) + ".." + std::to_string(ZSTD_maxCLevel()));
  }
  if (options.filter != RawFilter::kNone && options.filter != RawFilter::kUp) {
    return InvalidArgumentError("unknown raw filter");
  }
  return Status::OK();
}

uint64_t RawByteSize(const RawShape& s) {
  if (s.height <= 0 || s.width <= 0 || s.channels < 1 || s.channels > 4 || (s.bit_depth != 8 && s.bit_depth != 16)) {
    return 0;
  }
  return uint64_t(s.height) * uint64_t(s.width) * uint64_t(s.channels) * uint64_t(s.bit_depth / 8);
}

StatusOr<std::string> EncodeRaw(const Image& img, const RawEncodeOptions& options) {
  if (Status s = ValidateRawEncodeOptions(options); !s.ok()) {
    return InvalidArgumentError("raw encode: " + s.message());
  }
  const uint8_t* src = img.data();
  const size_t n = img.byte_size();
  if (options.zstd_level == 0) return std::string(reinterpret_cast<const char*>(src), n);
  thread_local std::vector<uint8_t> filtered;
  if (options.filter == RawFilter::kUp && n > 0) {
    filtered.resize(n);
    const size_t row = static_cast<size_t>(img.width()) * img.channels() * (img.bit_depth() / 8);
    UpFilter(src, filtered.data(), row, img.height(), img.bit_depth());
    src = filtered.data();
  }
  thread_local std::unique_ptr<ZSTD_CCtx, ZstdCtxFree> cctx(ZSTD_createCCtx());
  ZSTD_CCtx_reset(cctx.get(), ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, options.zstd_level);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 1);  // corruption is detected
  std::string out(ZSTD_compressBound(n), '\0');
  const size_t got = ZSTD_compress2(cctx.get(), out.data(), out.size(), src, n);
  if (filtered.capacity() > (size_t{64} << 20)) std::vector<uint8_t>().swap(filtered);  // keep only small ones
  if (ZSTD_isError(got)) return InternalError(std::string("raw encode: zstd: ") + ZSTD_getErrorName(got));
  out.resize(got);
  return out;
}

Status DecodeRawInto(std::string_view bytes, const RawShape& shape, RawCompression compression, uint8_t* dst,
                     uint64_t dst_size, uint64_t max_bytes) {
  LIBSHARD_RETURN_IF_ERROR(CheckShape(shape, max_bytes));
  const uint64_t expected = RawByteSize(shape);
  if (dst_size != expected) {
    return InvalidArgumentError("raw decode: a buffer of " + std::to_string(dst_size) + " bytes for shape " +
                                ShapeString(shape) + ", which needs " + std::to_string(expected));
  }
  if (compression == RawCompression::kNone) {
    if (bytes.size() != expected) {
      return DataLossError("raw decode: " + std::to_string(bytes.size()) + " bytes, but shape " + ShapeString(shape) +
                           " needs " + std::to_string(expected));
    }
    std::memcpy(dst, bytes.data(), expected);
    return Status::OK();
  }
  const unsigned long long content = ZSTD_getFrameContentSize(bytes.data(), bytes.size());
  if (content == ZSTD_CONTENTSIZE_ERROR) {
    return DataLossError("raw decode: not a zstd frame (bad magic or truncated header)");
  }
  if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != expected) {
    return DataLossError("raw decode: zstd frame holds " + std::to_string(content) + " bytes, but shape " +
                         ShapeString(shape) + " needs " + std::to_string(expected));
  }
  const size_t n = ZSTD_decompressDCtx(ThreadDCtx(), dst, expected, bytes.data(), bytes.size());
  if (ZSTD_isError(n)) {
    return DataLossError(std::string("raw decode: zstd: ") + ZSTD_getErrorName(n) + " (shape " + ShapeString(shape) +
                         ")");
  }
  if (n != expected) {
    return DataLossError("raw decode: zstd data holds " + std::to_string(n) + " bytes, but shape " +
                         ShapeString(shape) + " needs " + std::to_string(expected));
  }
  if (compression == RawCompression::kZstdUp) {
    const size_t row = static_cast<size_t>(shape.width) * shape.channels * (shape.bit_depth / 8);
    UndoUpFilter(dst, row, shape.height, shape.bit_depth);
  }
  return Status::OK();
}

StatusOr<Image> DecodeRaw(std::string_view bytes, const RawShape& shape, RawCompression compression,
                          uint64_t max_bytes) {
  LIBSHARD_RETURN_IF_ERROR(CheckShape(shape, max_bytes));
  Image img(shape.width, shape.height, shape.channels, shape.bit_depth);
  LIBSHARD_RETURN_IF_ERROR(DecodeRawInto(bytes, shape, compression, img.data(), img.byte_size(), max_bytes));
  return img;
}

}  // namespace libshard::image
