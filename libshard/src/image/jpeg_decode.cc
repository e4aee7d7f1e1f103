// libjpeg(-turbo) reader. One jpeg_decompress_struct per thread is created
// once and reused (jpeg_abort_decompress resets it after an error), so a
// decode costs no handle set-up. setjmp/longjmp stay inside this file.
//
// libjpeg keeps the Huffman and quantization tables a file defined for the
// next file (its "abbreviated datastream" feature). Files here are
// independent: one that leaves a table out (motion-JPEG frames omit the
// standard Huffman tables) must decode as on a fresh object, not with the
// tables of whatever this thread decoded before. So the tables left from the
// last file are marked before each header is read, and a file that does not
// redefine all of them is decoded again on a fresh object.
#include <jerror.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

// jpeglib.h needs size_t / FILE first.
#include <jpeglib.h>

#include "image/codec_internal.h"

namespace libshard::image::internal {
namespace {

struct JpegErrorMgr {
  jpeg_error_mgr pub;
  std::jmp_buf jmp;
  int warnings;
  bool truncated;
  int scan_limit_hit;  // the scan past kMaxJpegScans that stopped the decode; 0: none
  char first_warning[JMSG_LENGTH_MAX];
  char truncation[JMSG_LENGTH_MAX];
};

void JpegErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegErrorMgr*>(cinfo->err);
  std::longjmp(err->jmp, 1);
}

void JpegEmitMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  auto* err = reinterpret_cast<JpegErrorMgr*>(cinfo->err);
  // Data that ends before the image does: at the end of the buffer
  // (JWRN_JPEG_EOF) or at a marker inside it (JWRN_HIT_MARKER, "premature end
  // of data segment": a truncated scan, or a frame header inflated beyond its
  // data). libjpeg fills the rest with grey and carries on; we refuse it.
  if ((err->pub.msg_code == JWRN_JPEG_EOF || err->pub.msg_code == JWRN_HIT_MARKER) && !err->truncated) {
    err->truncated = true;
    (*err->pub.format_message)(cinfo, err->truncation);
  }
  if (err->warnings++ == 0) (*err->pub.format_message)(cinfo, err->first_warning);
}

// libjpeg's progress hook, called before each iMCU row of input is read
// (jpeg_start_decompress reads every scan of a multi-scan file): a scan past
// kMaxJpegScans stops the decode through the error path, as djpeg
// -maxscans does. Each progressive scan is decoded over the whole image, so
// repeated scans would make work without end.
void JpegProgress(j_common_ptr cinfo) {
  const int scan = reinterpret_cast<j_decompress_ptr>(cinfo)->input_scan_number;
  if (scan <= kMaxJpegScans) return;
  reinterpret_cast<JpegErrorMgr*>(cinfo->err)->scan_limit_hit = scan;
  (*cinfo->err->error_exit)(cinfo);
}

struct JpegDecoder {
  jpeg_decompress_struct cinfo;
  JpegErrorMgr err;
  jpeg_progress_mgr progress;
  std::vector<JSAMPROW> rows;
  std::vector<JSAMPLE> row;   // one widened row of a region decode
  bool refused_cmyk = false;  // a region asked of a CMYK / YCCK file
  bool inherited = false;     // the file did not redefine the last file's tables

  JpegDecoder() {
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = JpegErrorExit;
    err.pub.emit_message = JpegEmitMessage;
    jpeg_create_decompress(&cinfo);
    progress = {};
    progress.progress_monitor = JpegProgress;
  }
  ~JpegDecoder() { jpeg_destroy_decompress(&cinfo); }
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;
};

// Marks the tables left by the last file: a quantization table all zero
// (a DQT never holds a zero step) and bits[0] of a Huffman table (unused, and
// zeroed by every DHT). Returns whether any was left.
bool MarkLeftTables(jpeg_decompress_struct* c) {
  bool any = false;
  for (JQUANT_TBL* q : c->quant_tbl_ptrs) {
    if (q == nullptr) continue;
    std::fill(std::begin(q->quantval), std::end(q->quantval), UINT16{0});
    any = true;
  }
  for (int i = 0; i < NUM_HUFF_TBLS; ++i) {
    for (JHUFF_TBL* h : {c->dc_huff_tbl_ptrs[i], c->ac_huff_tbl_ptrs[i]}) {
      if (h == nullptr) continue;
      h->bits[0] = 1;
      any = true;
    }
  }
  return any;
}

// Whether a table marked by MarkLeftTables was not defined again.
bool HoldsLeftTables(const jpeg_decompress_struct* c) {
  for (const JQUANT_TBL* q : c->quant_tbl_ptrs) {
    if (q != nullptr && std::all_of(std::begin(q->quantval), std::end(q->quantval), [](UINT16 v) { return v == 0; })) {
      return true;
    }
  }
  for (int i = 0; i < NUM_HUFF_TBLS; ++i) {
    for (const JHUFF_TBL* h : {c->dc_huff_tbl_ptrs[i], c->ac_huff_tbl_ptrs[i]}) {
      if (h != nullptr && h->bits[0] != 0) return true;
    }
  }
  return false;
}

// The rows of a region after jpeg_start_decompress. Fancy upsampling makes
// each pixel depend on its chroma neighbours, and libjpeg treats the edges
// of a jpeg_crop_scanline column range as the image's edges: so the range is
// widened by kUpsampleReach pixels on each side (then to whole iMCUs by
// libjpeg) and trimmed after, which gives exactly the full decode's pixels.
// jpeg_skip_scanlines keeps the rows' context (tested from 4:4:4 to 4:1:1,
// baseline and progressive, at every scale), so no row margin is needed.
// The rows below the region are never decoded: jpeg_abort_decompress.
// `untrimmed` keeps libjpeg's column range instead (one copy of every row
// less) and says so in *region.
constexpr int kUpsampleReach = 2;

void ReadRegion(JpegDecoder* d, bool untrimmed, PixelRect* region, Image* out) {
  jpeg_decompress_struct* cinfo = &d->cinfo;
  // Clamp to the scaled image (a read past the last row would never end).
  const int ow = static_cast<int>(cinfo->output_width), oh = static_cast<int>(cinfo->output_height);
  region->x = std::min(region->x, ow - 1);
  region->y = std::min(region->y, oh - 1);
  region->width = std::min(region->width, ow - region->x);
  region->height = std::min(region->height, oh - region->y);
  const int x0 = std::max(0, region->x - kUpsampleReach);
  const int x1 = std::min(ow, region->x + region->width + kUpsampleReach);
  JDIMENSION x = static_cast<JDIMENSION>(x0), w = static_cast<JDIMENSION>(x1 - x0);
  if (x > 0 || w < cinfo->output_width) jpeg_crop_scanline(cinfo, &x, &w);
  const int c = cinfo->output_components;
  if (untrimmed) {  // libjpeg's columns are the output's: no trimming copy
    region->x = static_cast<int>(x);
    region->width = static_cast<int>(w);
  }
  out->Reset(region->width, region->height, c, 8);
  // Straight into the output when libjpeg's columns are the region's.
  const bool direct = static_cast<int>(x) == region->x && static_cast<int>(w) == region->width;
  const size_t skip_bytes = static_cast<size_t>(region->x - static_cast<int>(x)) * c;
  if (!direct && d->row.size() < static_cast<size_t>(w) * c) d->row.resize(static_cast<size_t>(w) * c);
  if (region->y > 0) jpeg_skip_scanlines(cinfo, static_cast<JDIMENSION>(region->y));
  for (int y = 0; y < region->height; ++y) {
    JSAMPROW row = direct ? out->row(y) : d->row.data();
    // A memory source never suspends: 0 rows can only be a broken stream.
    if (jpeg_read_scanlines(cinfo, &row, 1) != 1) ERREXIT(cinfo, JERR_INPUT_EMPTY);
    if (!direct) std::memcpy(out->row(y), d->row.data() + skip_bytes, out->row_bytes());
  }
  jpeg_abort_decompress(cinfo);  // the rows below the region are not needed
}

// The part that may longjmp; only C data is touched between setjmp and the
// libjpeg calls. Returns false on a libjpeg error.
bool RunDecode(JpegDecoder* d, const unsigned char* data, size_t size, const JpegReadOptions& opt, PixelRect* region,
               Image* out) {
  jpeg_decompress_struct* cinfo = &d->cinfo;
  if (setjmp(d->err.jmp)) {
    jpeg_abort_decompress(cinfo);
    return false;
  }
  cinfo->progress = &d->progress;  // jpeg_create_decompress clears it
  jpeg_mem_src(cinfo, data, static_cast<unsigned long>(size));
  const bool marked = MarkLeftTables(cinfo);
  jpeg_read_header(cinfo, TRUE);
  if (marked && HoldsLeftTables(cinfo)) {
    d->inherited = true;
    jpeg_abort_decompress(cinfo);
    return true;
  }
  if (cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK) {
    cinfo->out_color_space = JCS_CMYK;
  } else if (opt.gray) {
    cinfo->out_color_space = JCS_GRAYSCALE;
  } else {
    cinfo->out_color_space = JCS_EXT_RGB;
  }
  cinfo->scale_num = 1;
  cinfo->scale_denom = static_cast<unsigned int>(opt.scale_denom);
  if (region != nullptr && cinfo->out_color_space == JCS_CMYK) {
    d->refused_cmyk = true;
    jpeg_abort_decompress(cinfo);
    return true;
  }
  jpeg_start_decompress(cinfo);
  if (region != nullptr) {
    ReadRegion(d, opt.untrimmed, region, out);
    return true;
  }
  out->Reset(static_cast<int>(cinfo->output_width), static_cast<int>(cinfo->output_height), cinfo->output_components,
             8);
  const size_t n = cinfo->output_height;
  if (d->rows.size() < n) d->rows.resize(n);
  for (size_t y = 0; y < n; ++y) d->rows[y] = out->row(static_cast<int>(y));
  while (cinfo->output_scanline < cinfo->output_height) {
    jpeg_read_scanlines(cinfo, d->rows.data() + cinfo->output_scanline, cinfo->output_height - cinfo->output_scanline);
  }
  jpeg_finish_decompress(cinfo);
  return true;
}

Status Decode(std::string_view bytes, const JpegReadOptions& options, PixelRect* region, Image* out) {
  thread_local JpegDecoder decoder;
  decoder.err.warnings = 0;
  decoder.err.truncated = false;
  decoder.err.scan_limit_hit = 0;
  decoder.err.first_warning[0] = '\0';
  decoder.err.truncation[0] = '\0';
  decoder.refused_cmyk = false;
  decoder.inherited = false;
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  bool ok = RunDecode(&decoder, data, bytes.size(), options, region, out);
  if (ok && decoder.inherited) {
    // A fresh object holds no tables, so this second run cannot come back here.
    jpeg_destroy_decompress(&decoder.cinfo);
    jpeg_create_decompress(&decoder.cinfo);  // keeps cinfo.err
    decoder.inherited = false;
    ok = RunDecode(&decoder, data, bytes.size(), options, region, out);
  }
  if (!ok) {
    char msg[JMSG_LENGTH_MAX];
    (*decoder.err.pub.format_message)(reinterpret_cast<j_common_ptr>(&decoder.cinfo), msg);
    const int code = decoder.err.pub.msg_code;
    if (decoder.err.scan_limit_hit > 0) {
      return ResourceExhaustedError("JPEG: scan " + std::to_string(decoder.err.scan_limit_hit) +
                                    " is past the limit of " + std::to_string(kMaxJpegScans) +
                                    " scans (a progressive JPEG has about 10)");
    }
    if (code == JERR_BAD_PRECISION) {
      return UnimplementedError(std::string("JPEG: ") + msg + " (this libjpeg decodes 8-bit samples only)");
    }
    if (decoder.err.truncated) {
      return DataLossError(std::string("JPEG: truncated data (") + msg + ")");
    }
    return DataLossError(std::string("JPEG: ") + msg);
  }
  if (decoder.err.truncated) {
    return DataLossError(std::string("JPEG: truncated data (") + decoder.err.truncation + ")");
  }
  if (decoder.refused_cmyk) return UnimplementedError("JPEG region: CMYK / YCCK files are decoded whole only");
  if (options.strict && decoder.err.warnings > 0) {
    return DataLossError(std::string("JPEG: ") + decoder.err.first_warning);
  }
  return Status::OK();
}

}  // namespace

Status DecodeJpeg(std::string_view bytes, const JpegReadOptions& options, Image* out) {
  return Decode(bytes, options, nullptr, out);
}

Status DecodeJpegRegion(std::string_view bytes, const JpegReadOptions& options, PixelRect* region, Image* out) {
  if (region->x < 0 || region->y < 0 || region->width <= 0 || region->height <= 0) {
    return InvalidArgumentError("JPEG region: empty or negative");
  }
  if (options.scale_denom != 1 && options.scale_denom != 2 && options.scale_denom != 4 && options.scale_denom != 8) {
    return InvalidArgumentError("JPEG region: scale denominator " + std::to_string(options.scale_denom) +
                                " (expected 1, 2, 4 or 8)");
  }
  return Decode(bytes, options, region, out);
}

}  // namespace libshard::image::internal
