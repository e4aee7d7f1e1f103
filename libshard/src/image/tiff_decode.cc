// TIFF through libtiff, read from memory (codec_internal.h).
//
// Gray, gray + alpha, RGB and RGBA with 8- or 16-bit unsigned samples in
// strips (any compression libtiff has) are read by scanline with their
// samples as stored (16 bits kept under keep_16bit, else round(v / 257));
// min-is-white is inverted; associated (premultiplied) alpha is divided out.
// Everything else libtiff's RGBA interface reads (palette, bilevel, YCbCr,
// CMYK, tiles, separate planes, other depths) goes through
// TIFFReadRGBAImageOriented: 8-bit RGB, RGBA when the file has an extra
// sample, gray for a one-sample min-is-black/white file. libtiff's messages
// go to a handler of this open only (TIFFOpenOptions), never to stderr.
#include <tiffio.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "image/codec_internal.h"

namespace libshard::image::internal {
namespace {

// The bytes libtiff reads, as its client I/O.
struct MemoryFile {
  const unsigned char* data;
  toff_t size;
  toff_t pos = 0;
  std::string error;  // libtiff's first error message
};

tmsize_t ReadProc(thandle_t h, void* buf, tmsize_t n) {
  auto* f = static_cast<MemoryFile*>(h);
  if (n <= 0 || f->pos >= f->size) return 0;
  const toff_t k = std::min<toff_t>(static_cast<toff_t>(n), f->size - f->pos);
  std::memcpy(buf, f->data + f->pos, k);
  f->pos += k;
  return static_cast<tmsize_t>(k);
}
tmsize_t WriteProc(thandle_t, void*, tmsize_t) { return -1; }
toff_t SeekProc(thandle_t h, toff_t off, int whence) {
  auto* f = static_cast<MemoryFile*>(h);
  toff_t base = whence == SEEK_CUR ? f->pos : whence == SEEK_END ? f->size : 0;
  if (off > ~toff_t{0} - base) return static_cast<toff_t>(-1);
  f->pos = base + off;  // past the end is allowed; reads there return 0
  return f->pos;
}
int CloseProc(thandle_t) { return 0; }
toff_t SizeProc(thandle_t h) { return static_cast<MemoryFile*>(h)->size; }
int MapProc(thandle_t h, void** base, toff_t* size) {
  auto* f = static_cast<MemoryFile*>(h);
  *base = const_cast<unsigned char*>(f->data);  // opened "r": libtiff only reads it
  *size = f->size;
  return 1;
}
void UnmapProc(thandle_t, void*, toff_t) {}

int OnError(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  auto* f = static_cast<MemoryFile*>(user);
  if (f->error.empty()) {
    char text[256];
    std::vsnprintf(text, sizeof(text), fmt, ap);
    f->error = (module && *module ? std::string(module) + ": " : std::string()) + text;
  }
  return 1;  // handled: nothing reaches libtiff's global handler (stderr)
}
int OnWarning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

// One open TIFF, closed on scope exit.
class TiffHandle {
 public:
  TiffHandle(std::string_view bytes, uint64_t max_alloc)
      : file_{reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<toff_t>(bytes.size()), 0, {}} {
    TIFFOpenOptions* opts = TIFFOpenOptionsAlloc();
    TIFFOpenOptionsSetErrorHandlerExtR(opts, OnError, &file_);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, OnWarning, &file_);
    TIFFOpenOptionsSetMaxSingleMemAlloc(opts, static_cast<tmsize_t>(max_alloc));
    tif_ = TIFFClientOpenExt("TIFF", "r", &file_, ReadProc, WriteProc, SeekProc, CloseProc, SizeProc, MapProc,
                             UnmapProc, opts);
    TIFFOpenOptionsFree(opts);
  }
  ~TiffHandle() {
    if (tif_) TIFFClose(tif_);
  }
  TiffHandle(const TiffHandle&) = delete;
  TiffHandle& operator=(const TiffHandle&) = delete;

  TIFF* get() const { return tif_; }
  // kDataLoss naming libtiff's complaint, or `what` when it said nothing.
  Status Fault(const std::string& what) const {
    return DataLossError("TIFF: " + (file_.error.empty() ? what : file_.error) + " (" + std::to_string(file_.size) +
                         " bytes)");
  }

 private:
  MemoryFile file_;
  TIFF* tif_ = nullptr;
};

// The directory's layout, as far as the scanline path needs it.
struct Layout {
  uint32_t width = 0, height = 0;
  uint16_t spp = 1, bps = 1, photometric = PHOTOMETRIC_MINISBLACK, planar = PLANARCONFIG_CONTIG;
  uint16_t sample_format = SAMPLEFORMAT_UINT;
  bool alpha = false, associated = false;
  uint16_t pages = 1;
};

Layout ReadLayout(TIFF* tif) {
  Layout l;
  TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &l.width);
  TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &l.height);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &l.spp);
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &l.bps);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &l.planar);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &l.sample_format);
  if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &l.photometric)) {
    l.photometric = l.spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
  }
  uint16_t extra_count = 0;
  uint16_t* extra = nullptr;
  if (TIFFGetField(tif, TIFFTAG_EXTRASAMPLES, &extra_count, &extra) && extra_count > 0 && extra) {
    l.alpha = extra[0] == EXTRASAMPLE_ASSOCALPHA || extra[0] == EXTRASAMPLE_UNASSALPHA;
    l.associated = extra[0] == EXTRASAMPLE_ASSOCALPHA;
  }
  return l;
}

int ColorSamples(const Layout& l) { return l.photometric == PHOTOMETRIC_RGB ? 3 : 1; }

// Whether the scanline path reads it: stored samples kept as they are.
bool ScanlineReadable(TIFF* tif, const Layout& l) {
  const bool photometric_ok = l.photometric == PHOTOMETRIC_MINISBLACK || l.photometric == PHOTOMETRIC_MINISWHITE ||
                              l.photometric == PHOTOMETRIC_RGB;
  return photometric_ok && !TIFFIsTiled(tif) && (l.bps == 8 || l.bps == 16) && l.sample_format == SAMPLEFORMAT_UINT &&
         l.spp >= ColorSamples(l) && (l.planar == PLANARCONFIG_CONTIG || l.spp == 1);
}

// Channels the scanline path gives: colour samples, plus alpha when marked.
int ScanlineChannels(const Layout& l) { return ColorSamples(l) + (l.alpha && l.spp > ColorSamples(l) ? 1 : 0); }

template <typename T>
void Unpremultiply(T* px, int channels) {
  constexpr uint32_t kMax = sizeof(T) == 1 ? 255 : 65535;
  const uint32_t a = px[channels - 1];
  for (int c = 0; c < channels - 1; ++c) {
    px[c] = static_cast<T>(a == 0 ? 0 : std::min<uint32_t>(kMax, (uint32_t{px[c]} * kMax + a / 2) / a));
  }
}

Status ReadScanlines(const TiffHandle& h, const Layout& l, bool keep_16bit, Image* out) {
  TIFF* tif = h.get();
  const int channels = ScanlineChannels(l);
  const bool wide = l.bps == 16;
  out->Reset(static_cast<int>(l.width), static_cast<int>(l.height), channels, wide && keep_16bit ? 16 : 8);
  const tmsize_t line_size = TIFFScanlineSize(tif);
  const uint64_t needed = uint64_t{l.width} * l.spp * (wide ? 2 : 1);
  if (line_size <= 0 || static_cast<uint64_t>(line_size) < needed) return h.Fault("bad scanline size");
  std::vector<uint8_t> line(static_cast<size_t>(line_size));
  const bool invert = l.photometric == PHOTOMETRIC_MINISWHITE;
  for (uint32_t y = 0; y < l.height; ++y) {
    if (TIFFReadScanline(tif, line.data(), y, 0) < 0) {
      return h.Fault("truncated or corrupt at row " + std::to_string(y) + " of " + std::to_string(l.height));
    }
    for (uint32_t x = 0; x < l.width; ++x) {
      for (int c = 0; c < channels; ++c) {
        const size_t s = size_t{x} * l.spp + c;
        uint32_t v = wide ? reinterpret_cast<const uint16_t*>(line.data())[s] : line[s];
        const bool is_alpha = c == ColorSamples(l);
        if (invert && !is_alpha) v = (wide ? 65535u : 255u) - v;
        const size_t d = size_t{x} * channels + c;
        if (out->bit_depth() == 16) {
          reinterpret_cast<uint16_t*>(out->row(static_cast<int>(y)))[d] = static_cast<uint16_t>(v);
        } else {
          out->row(static_cast<int>(y))[d] = static_cast<uint8_t>(wide ? (v + 128) / 257 : v);
        }
      }
    }
    if (l.associated && channels % 2 == 0) {
      for (uint32_t x = 0; x < l.width; ++x) {
        if (out->bit_depth() == 16) {
          Unpremultiply(reinterpret_cast<uint16_t*>(out->row(static_cast<int>(y))) + size_t{x} * channels, channels);
        } else {
          Unpremultiply(out->row(static_cast<int>(y)) + size_t{x} * channels, channels);
        }
      }
    }
  }
  return Status::OK();
}

Status ReadRgba(const TiffHandle& h, const Layout& l, Image* out) {
  TIFF* tif = h.get();
  char why[1024] = "";
  if (!TIFFRGBAImageOK(tif, why)) return UnimplementedError(std::string("TIFF: ") + why);
  const bool gray = l.spp == 1 && (l.photometric == PHOTOMETRIC_MINISBLACK || l.photometric == PHOTOMETRIC_MINISWHITE);
  const bool alpha = l.alpha && !gray;
  std::vector<uint32_t> raster(size_t{l.width} * l.height);
  if (!TIFFReadRGBAImageOriented(tif, l.width, l.height, raster.data(), ORIENTATION_TOPLEFT, 1)) {
    return h.Fault("truncated or corrupt image data");
  }
  const int channels = gray ? 1 : alpha ? 4 : 3;
  out->Reset(static_cast<int>(l.width), static_cast<int>(l.height), channels, 8);
  uint8_t* d = out->data();
  for (const uint32_t p : raster) {
    if (gray) {
      *d++ = static_cast<uint8_t>(TIFFGetR(p));
      continue;
    }
    d[0] = static_cast<uint8_t>(TIFFGetR(p));
    d[1] = static_cast<uint8_t>(TIFFGetG(p));
    d[2] = static_cast<uint8_t>(TIFFGetB(p));
    if (alpha) d[3] = static_cast<uint8_t>(TIFFGetA(p));
    d += channels;
  }
  if (alpha) {  // libtiff gives associated (premultiplied) RGBA
    for (size_t i = 0; i < raster.size(); ++i) Unpremultiply(out->data() + i * 4, 4);
  }
  return Status::OK();
}

// Opens the bytes and moves to `page`, or says why not.
Status OpenPage(const TiffHandle& h, int page, uint16_t* pages) {
  if (!h.get()) return h.Fault("not a readable TIFF header");
  const tdir_t n = TIFFNumberOfDirectories(h.get());
  *pages = static_cast<uint16_t>(std::min<tdir_t>(n, 65535));
  if (page < 0 || static_cast<tdir_t>(page) >= n) {
    return InvalidArgumentError("TIFF: page " + std::to_string(page) + " asked for, but the file has " +
                                std::to_string(n) + " page(s) (numbered from 0)");
  }
  if (page > 0 && !TIFFSetDirectory(h.get(), static_cast<tdir_t>(page))) {
    return h.Fault("cannot read the directory of page " + std::to_string(page));
  }
  return Status::OK();
}

}  // namespace

StatusOr<ImageInfo> ProbeTiff(std::string_view bytes, int page) {
  TiffHandle h(bytes, 64 << 20);
  uint16_t pages = 1;
  LIBSHARD_RETURN_IF_ERROR(OpenPage(h, page, &pages));
  const Layout l = ReadLayout(h.get());
  if (l.width == 0 || l.height == 0 || l.width > 0x7fffffffu || l.height > 0x7fffffffu) {
    return DataLossError("TIFF: invalid dimensions " + std::to_string(l.width) + "x" + std::to_string(l.height));
  }
  ImageInfo info;
  info.format = ImageFormat::kTiff;
  info.width = static_cast<int>(l.width);
  info.height = static_cast<int>(l.height);
  info.bit_depth = l.bps;
  info.has_alpha = l.alpha;
  info.palette = l.photometric == PHOTOMETRIC_PALETTE;
  info.channels =
      ScanlineReadable(h.get(), l) ? ScanlineChannels(l) : (l.spp == 1 && !info.palette ? 1 : 3) + (l.alpha ? 1 : 0);
  info.pages = pages;
  return info;
}

Status DecodeTiff(std::string_view bytes, int page, bool keep_16bit, uint64_t max_pixels, Image* out) {
  TiffHandle h(bytes, static_cast<uint64_t>(std::min<uint64_t>(max_pixels, uint64_t{1} << 40)) * 8);
  uint16_t pages = 1;
  LIBSHARD_RETURN_IF_ERROR(OpenPage(h, page, &pages));
  const Layout l = ReadLayout(h.get());
  if (ScanlineReadable(h.get(), l)) return ReadScanlines(h, l, keep_16bit, out);
  return ReadRgba(h, l, out);
}

}  // namespace libshard::image::internal
