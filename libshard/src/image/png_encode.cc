// libpng writer. setjmp/longjmp stay inside this file.
#include <png.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "libshard/image/encode.h"

namespace libshard::image {
namespace {

struct PngSink {
  std::string* out;
  char message[256];
};

void PngWriteFn(png_structp png, png_bytep data, size_t n) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  sink->out->append(reinterpret_cast<const char*>(data), n);
}

void PngErrorFn(png_structp png, png_const_charp msg) {
  auto* sink = static_cast<PngSink*>(png_get_error_ptr(png));
  std::snprintf(sink->message, sizeof(sink->message), "%s", msg);
  png_longjmp(png, 1);
}

// The part that may longjmp; returns false on a libpng error.
bool RunEncode(PngSink* sink, const Image& img, const PngEncodeOptions& o, std::vector<png_bytep>* rows) {
  png_structp png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, sink, PngErrorFn, [](png_structp, png_const_charp) {});
  if (png == nullptr) return false;
  png_infop info = png_create_info_struct(png);
  if (info == nullptr || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_set_write_fn(png, sink, PngWriteFn, nullptr);
  png_set_compression_level(png, o.compression_level);
  static const int kColorType[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                    PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_IHDR(png, info, static_cast<png_uint_32>(img.width()), static_cast<png_uint_32>(img.height()),
               img.bit_depth(), kColorType[img.channels()], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  if (img.bit_depth() == 16) png_set_swap(png);  // native little-endian -> PNG big-endian
  rows->resize(static_cast<size_t>(img.height()));
  for (int y = 0; y < img.height(); ++y) (*rows)[y] = const_cast<png_bytep>(img.row(y));
  png_write_image(png, rows->data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

StatusOr<std::string> EncodePng(const Image& img, const PngEncodeOptions& options) {
  if (options.compression_level < 0 || options.compression_level > 9) {
    return InvalidArgumentError("PNG encode: compression level " + std::to_string(options.compression_level) +
                                " is outside 0..9");
  }
  if (img.empty() || img.channels() < 1 || img.channels() > 4 || (img.bit_depth() != 8 && img.bit_depth() != 16)) {
    return InvalidArgumentError("PNG encode: needs a non-empty 1..4 channel image at 8 or 16 bits");
  }
  std::string out;
  out.reserve(img.byte_size() / 2 + 1024);
  PngSink sink{&out, {}};
  thread_local std::vector<png_bytep> rows;
  if (!RunEncode(&sink, img, options, &rows)) {
    return InternalError(std::string("PNG encode: ") + sink.message);
  }
  return out;
}

}  // namespace libshard::image
