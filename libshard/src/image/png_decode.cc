// PNG decode: the libdeflate decoder (png_libdeflate.cc) where it applies,
// else libpng, the reference for every PNG.
//
// libpng reader. All setjmp/longjmp handling stays inside this file: libpng
// reports errors by longjmp to the frame that called setjmp, so only plain C
// data (no C++ object with a destructor) is created between setjmp and the
// libpng calls that may jump.
#include <png.h>

#include <cstring>
#include <string>
#include <vector>

#include "image/codec_internal.h"

namespace libshard::image::internal {
namespace {

struct PngSource {
  const unsigned char* data;
  size_t size;
  size_t pos;
};

struct PngErrorState {
  char message[256];
};

void PngReadFn(png_structp png, png_bytep out, size_t n) {
  auto* src = static_cast<PngSource*>(png_get_io_ptr(png));
  if (src->size - src->pos < n) {
    png_error(png, "truncated data (read past the end of the file)");
  }
  std::memcpy(out, src->data + src->pos, n);
  src->pos += n;
}

void PngErrorFn(png_structp png, png_const_charp msg) {
  auto* st = static_cast<PngErrorState*>(png_get_error_ptr(png));
  std::snprintf(st->message, sizeof(st->message), "%s", msg);
  png_longjmp(png, 1);
}

void PngWarningFn(png_structp, png_const_charp) {}  // ancillary trouble is ignored

// The part that may longjmp. Returns 0 on success, 1 on a libpng error,
// 2 when the pixel limit is exceeded (dimensions in *w, *h).
int ReadPng(PngSource* src, const PngReadOptions& opt, PngErrorState* err, Image* out, std::vector<png_bytep>* rows,
            png_uint_32* w, png_uint_32* h) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, err, PngErrorFn, PngWarningFn);
  if (png == nullptr) {
    std::snprintf(err->message, sizeof(err->message), "out of memory");
    return 1;
  }
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    std::snprintf(err->message, sizeof(err->message), "out of memory");
    return 1;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return 1;
  }
  png_set_read_fn(png, src, PngReadFn);
  // Skip the gamma/colour chunks outright: samples are taken as stored.
  static const png_byte kIgnored[] = {'g', 'A', 'M', 'A', '\0', 'c', 'H', 'R', 'M', '\0',
                                      's', 'R', 'G', 'B', '\0', 'i', 'C', 'C', 'P', '\0'};
  png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, kIgnored, 4);
  png_read_info(png, info);
  *w = png_get_image_width(png, info);
  *h = png_get_image_height(png, info);
  if (static_cast<uint64_t>(*w) * *h > opt.max_pixels) {
    png_destroy_read_struct(&png, &info, nullptr);
    return 2;
  }
  const int color_type = png_get_color_type(png, info);
  const int depth = png_get_bit_depth(png, info);
  if (opt.palette_indices && (color_type == PNG_COLOR_TYPE_PALETTE || color_type == PNG_COLOR_TYPE_GRAY)) {
    if (depth < 8) png_set_packing(png);  // indices / values, not rescaled
  } else {
    png_set_expand(png);  // palette -> RGB, low-bit gray -> 8 bit, tRNS -> alpha
    if (opt.gray_to_rgb) png_set_gray_to_rgb(png);
  }
  if (depth == 16) {
    if (opt.keep_16bit) {
      png_set_swap(png);  // native (little-endian) order
    } else {
      png_set_scale_16(png);  // round(v / 257)
    }
  }
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const int channels = png_get_channels(png, info);
  const int out_depth = png_get_bit_depth(png, info);
  out->Reset(static_cast<int>(*w), static_cast<int>(*h), channels, out_depth == 16 ? 16 : 8);
  if (png_get_rowbytes(png, info) != out->row_bytes()) {
    std::snprintf(err->message, sizeof(err->message), "unexpected row size");
    png_destroy_read_struct(&png, &info, nullptr);
    return 1;
  }
  rows->resize(*h);
  for (png_uint_32 y = 0; y < *h; ++y) (*rows)[y] = out->row(static_cast<int>(y));
  png_read_image(png, rows->data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return 0;
}

}  // namespace

Status DecodePng(std::string_view bytes, const PngReadOptions& options, Image* out) {
  if (options.decoder != PngDecoder::kLibpng && DecodePngLibdeflate(bytes, options, out)) {
    return Status::OK();
  }
  if (options.decoder == PngDecoder::kLibdeflate) {
    return UnimplementedError(
        "PNG: not taken by the libdeflate decoder (palette, tRNS, below 8 bits, or a defect "
        "libpng reports)");
  }
  PngSource src{reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), 0};
  PngErrorState err{};
  thread_local std::vector<png_bytep> rows;
  png_uint_32 w = 0, h = 0;
  const int rc = ReadPng(&src, options, &err, out, &rows, &w, &h);
  if (rc == 2) {
    return ResourceExhaustedError("PNG: " + std::to_string(w) + "x" + std::to_string(h) +
                                  " exceeds the pixel limit of " + std::to_string(options.max_pixels) + " pixels");
  }
  if (rc != 0) {
    return DataLossError(std::string("PNG: ") + err.message + " (at byte " + std::to_string(src.pos) + ")");
  }
  return Status::OK();
}

}  // namespace libshard::image::internal
