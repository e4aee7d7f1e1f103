// Raw HWC arrays, stored or zstd-compressed (raw_array.h).
#include "libshard/image/raw_array.h"

#include <zstd.h>

#include <cstring>
#include <memory>
#include <string>

namespace libshard::image {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "raw arrays are little-endian; add byte swapping for big-endian hosts");

std::string ShapeString(const RawShape& s) {
  return std::to_string(s.height) + "x" + std::to_string(s.width) + "x" +
         std::to_string(s.channels) + " " + RawDtypeName(s.bit_depth);
}

struct ZstdCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

}  // namespace

RawShape RawShapeOf(const Image& img) {
  return RawShape{img.height(), img.width(), img.channels(), img.bit_depth()};
}

const char* RawFormatName(RawCompression compression) {
  return compression == RawCompression::kZstd ? "raw.zst" : "raw";
}

StatusOr<RawCompression> ParseRawFormat(std::string_view name) {
  if (name == "raw") return RawCompression::kNone;
  if (name == "raw.zst") return RawCompression::kZstd;
  return InvalidArgumentError("unknown raw array format '" + std::string(name) +
                              "' (expected raw or raw.zst)");
}

const char* RawDtypeName(int bit_depth) { return bit_depth == 16 ? "uint16" : "uint8"; }

StatusOr<int> ParseRawDtype(std::string_view name) {
  if (name == "uint8") return 8;
  if (name == "uint16") return 16;
  return InvalidArgumentError("unsupported raw dtype '" + std::string(name) +
                              "' (expected uint8 or uint16)");
}

StatusOr<std::string> EncodeRaw(const Image& img, const RawEncodeOptions& options) {
  if (options.zstd_level < 0 || options.zstd_level > ZSTD_maxCLevel()) {
    return InvalidArgumentError("raw encode: zstd level " + std::to_string(options.zstd_level) +
                                " is outside 0.." + std::to_string(ZSTD_maxCLevel()));
  }
  const char* src = reinterpret_cast<const char*>(img.data());
  if (options.zstd_level == 0) return std::string(src, img.byte_size());
  thread_local std::unique_ptr<ZSTD_CCtx, ZstdCtxFree> cctx(ZSTD_createCCtx());
  ZSTD_CCtx_reset(cctx.get(), ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, options.zstd_level);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 1);  // corruption is detected
  std::string out(ZSTD_compressBound(img.byte_size()), '\0');
  const size_t n = ZSTD_compress2(cctx.get(), out.data(), out.size(), src, img.byte_size());
  if (ZSTD_isError(n)) return InternalError(std::string("raw encode: zstd: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

StatusOr<Image> DecodeRaw(std::string_view bytes, const RawShape& shape,
                          RawCompression compression, uint64_t max_bytes) {
  if (shape.height <= 0 || shape.width <= 0 || shape.channels < 1 || shape.channels > 4 ||
      (shape.bit_depth != 8 && shape.bit_depth != 16)) {
    return InvalidArgumentError("raw decode: invalid shape " + ShapeString(shape) +
                                " (channels must be 1..4, dtype uint8 or uint16)");
  }
  const uint64_t expected = uint64_t(shape.height) * uint64_t(shape.width) *
                            uint64_t(shape.channels) * uint64_t(shape.bit_depth / 8);
  if (expected > max_bytes) {
    return ResourceExhaustedError("raw decode: shape " + ShapeString(shape) + " needs " +
                                  std::to_string(expected) + " bytes, over the limit of " +
                                  std::to_string(max_bytes));
  }
  if (compression == RawCompression::kNone) {
    if (bytes.size() != expected) {
      return DataLossError("raw decode: " + std::to_string(bytes.size()) +
                           " bytes, but shape " + ShapeString(shape) + " needs " +
                           std::to_string(expected));
    }
    Image img(shape.width, shape.height, shape.channels, shape.bit_depth);
    std::memcpy(img.data(), bytes.data(), expected);
    return img;
  }
  const unsigned long long content = ZSTD_getFrameContentSize(bytes.data(), bytes.size());
  if (content == ZSTD_CONTENTSIZE_ERROR) {
    return DataLossError("raw decode: not a zstd frame (bad magic or truncated header)");
  }
  if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != expected) {
    return DataLossError("raw decode: zstd frame holds " + std::to_string(content) +
                         " bytes, but shape " + ShapeString(shape) + " needs " +
                         std::to_string(expected));
  }
  Image img(shape.width, shape.height, shape.channels, shape.bit_depth);
  thread_local std::unique_ptr<ZSTD_DCtx, ZstdCtxFree> dctx(ZSTD_createDCtx());
  const size_t n = ZSTD_decompressDCtx(dctx.get(), img.data(), expected, bytes.data(), bytes.size());
  if (ZSTD_isError(n)) {
    return DataLossError(std::string("raw decode: zstd: ") + ZSTD_getErrorName(n) +
                         " (shape " + ShapeString(shape) + ")");
  }
  if (n != expected) {
    return DataLossError("raw decode: zstd data holds " + std::to_string(n) + " bytes, but shape " +
                         ShapeString(shape) + " needs " + std::to_string(expected));
  }
  return img;
}

}  // namespace libshard::image
