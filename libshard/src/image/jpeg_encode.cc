// libjpeg writer: one jpeg_compress_struct and one output buffer per thread,
// reused across calls. setjmp/longjmp stay inside this file.
//
// An optimized or progressive encode writes its own image's Huffman tables
// into the object, and jpeg_set_defaults installs the standard tables only
// where none are: a later plain encode would write (and code with) the earlier
// image's tables, whose missing symbols libjpeg-turbo's fast path does not
// check. So an object that has left the standard tables is replaced.
#include <csetjmp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <jpeglib.h>

#include "libshard/image/encode.h"

namespace libshard::image {
namespace {

struct JpegEncoder {
  jpeg_compress_struct cinfo;
  struct {
    jpeg_error_mgr pub;
    std::jmp_buf jmp;
  } err;
  jpeg_destination_mgr dest;
  std::vector<JOCTET> buffer;
  std::vector<JSAMPROW> rows;
  // Whether the Huffman tables may no longer be the standard ones.
  bool tables_changed = false;

  JpegEncoder() {
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = [](j_common_ptr c) {
      auto* e = reinterpret_cast<decltype(err)*>(c->err);
      std::longjmp(e->jmp, 1);
    };
    err.pub.emit_message = [](j_common_ptr, int) {};
    jpeg_create_compress(&cinfo);
    dest.init_destination = [](j_compress_ptr c) {
      auto* self = static_cast<JpegEncoder*>(c->client_data);
      self->dest.next_output_byte = self->buffer.data();
      self->dest.free_in_buffer = self->buffer.size();
    };
    dest.empty_output_buffer = [](j_compress_ptr c) -> boolean {
      // Called when the whole buffer is full: double it.
      auto* self = static_cast<JpegEncoder*>(c->client_data);
      const size_t used = self->buffer.size();
      self->buffer.resize(used * 2);
      self->dest.next_output_byte = self->buffer.data() + used;
      self->dest.free_in_buffer = self->buffer.size() - used;
      return TRUE;
    };
    dest.term_destination = [](j_compress_ptr) {};
    cinfo.dest = &dest;
    cinfo.client_data = this;
  }
  ~JpegEncoder() { jpeg_destroy_compress(&cinfo); }
  JpegEncoder(const JpegEncoder&) = delete;
  JpegEncoder& operator=(const JpegEncoder&) = delete;
};

// The part that may longjmp. Returns the encoded size, or 0 on error.
size_t RunEncode(JpegEncoder* e, const Image& img, const JpegEncodeOptions& o) {
  jpeg_compress_struct* c = &e->cinfo;
  e->tables_changed = true;  // until a plain encode has finished
  if (setjmp(e->err.jmp)) {
    jpeg_abort_compress(c);
    return 0;
  }
  c->image_width = static_cast<JDIMENSION>(img.width());
  c->image_height = static_cast<JDIMENSION>(img.height());
  c->input_components = img.channels();
  c->in_color_space = img.channels() == 1 ? JCS_GRAYSCALE : JCS_EXT_RGB;
  jpeg_set_defaults(c);
  jpeg_set_quality(c, o.quality, TRUE);
  if (img.channels() == 3) {
    const int f = o.subsampling == ChromaSubsampling::k420 ? 2 : 1;
    c->comp_info[0].h_samp_factor = f;
    c->comp_info[0].v_samp_factor = f;
  }
  c->optimize_coding = o.optimize_huffman ? TRUE : FALSE;
  if (o.progressive) jpeg_simple_progression(c);
  jpeg_start_compress(c, TRUE);
  const size_t n = static_cast<size_t>(img.height());
  if (e->rows.size() < n) e->rows.resize(n);
  for (size_t y = 0; y < n; ++y) e->rows[y] = const_cast<JSAMPROW>(img.row(static_cast<int>(y)));
  while (c->next_scanline < c->image_height) {
    jpeg_write_scanlines(c, e->rows.data() + c->next_scanline, c->image_height - c->next_scanline);
  }
  jpeg_finish_compress(c);
  e->tables_changed = c->optimize_coding || c->progressive_mode;
  return e->buffer.size() - e->dest.free_in_buffer;
}

}  // namespace

StatusOr<std::string> EncodeJpeg(const Image& img, const JpegEncodeOptions& options) {
  if (options.quality < 1 || options.quality > 100) {
    return InvalidArgumentError("JPEG encode: quality " + std::to_string(options.quality) + " is outside 1..100");
  }
  if (img.empty()) return InvalidArgumentError("JPEG encode: empty image");
  if (img.bit_depth() != 8 || (img.channels() != 1 && img.channels() != 3)) {
    return InvalidArgumentError("JPEG encode: needs 8-bit gray or RGB, got " + std::to_string(img.channels()) +
                                " channels at " + std::to_string(img.bit_depth()) +
                                " bits (JPEG has no alpha: composite it when decoding)");
  }
  if (img.width() > 65500 || img.height() > 65500) {
    return InvalidArgumentError("JPEG encode: " + std::to_string(img.width()) + "x" + std::to_string(img.height()) +
                                " exceeds JPEG's 65500 limit");
  }
  thread_local std::unique_ptr<JpegEncoder> encoder;
  if (encoder == nullptr || encoder->tables_changed) {
    std::vector<JOCTET> buffer = encoder ? std::move(encoder->buffer) : std::vector<JOCTET>();
    encoder = std::make_unique<JpegEncoder>();
    encoder->buffer = std::move(buffer);
  }
  // Start with room for a typical result so most images need no growth.
  const size_t guess = img.byte_size() / 4 + 4096;
  if (encoder->buffer.size() < guess) encoder->buffer.resize(guess);
  const size_t size = RunEncode(encoder.get(), img, options);
  if (size == 0) {
    char msg[JMSG_LENGTH_MAX];
    (*encoder->err.pub.format_message)(reinterpret_cast<j_common_ptr>(&encoder->cinfo), msg);
    return InternalError(std::string("JPEG encode: ") + msg);
  }
  return std::string(reinterpret_cast<const char*>(encoder->buffer.data()), size);
}

}  // namespace libshard::image
