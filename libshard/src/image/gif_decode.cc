// GIF through giflib, read from memory: the first frame (codec_internal.h).
//
// The output is the logical screen (its size from the header), the first
// frame painted at its offset: RGB, or RGBA when the frame's graphic control
// extension names a transparent index (then pixels outside the frame and the
// transparent ones are transparent black); without one the screen is the
// background colour of the global colour map. Later frames are not read.
// The frame must lie within the screen and the pixel limit (checked before
// its first row is decoded), so the work is bounded by the screen's size.
#include <gif_lib.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "image/codec_internal.h"

namespace libshard::image::internal {
namespace {

struct GifSource {
  const unsigned char* data;
  size_t size;
  size_t pos = 0;
};

int ReadGif(GifFileType* gif, GifByteType* buf, int len) {
  auto* s = static_cast<GifSource*>(gif->UserData);
  if (len <= 0) return 0;
  const size_t k = std::min(static_cast<size_t>(len), s->size - s->pos);
  std::memcpy(buf, s->data + s->pos, k);
  s->pos += k;
  return static_cast<int>(k);
}

uint16_t Le16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

// giflib's words for an error code; "truncated" where it ran out of bytes.
std::string GifText(int code) {
  // giflib reports a short read of the screen descriptor or the global colour
  // map as "no screen descriptor"; the signature and size were there (probed).
  if (code == D_GIF_ERR_READ_FAILED || code == D_GIF_ERR_EOF_TOO_SOON || code == D_GIF_ERR_NO_SCRN_DSCR) {
    return "truncated data";
  }
  const char* text = GifErrorString(code);
  return text ? text : "error " + std::to_string(code);
}

class GifHandle {
 public:
  explicit GifHandle(std::string_view bytes)
      : source_{reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), 0} {
    gif_ = DGifOpen(&source_, ReadGif, &open_error_);
  }
  ~GifHandle() {
    int ignored = 0;
    if (gif_) DGifCloseFile(gif_, &ignored);
  }
  GifHandle(const GifHandle&) = delete;
  GifHandle& operator=(const GifHandle&) = delete;

  GifFileType* get() const { return gif_; }
  Status Fault(const std::string& where) const {
    const int code = gif_ ? gif_->Error : open_error_;
    return DataLossError("GIF: " + GifText(code) + " " + where + " (" + std::to_string(source_.size) + " bytes)");
  }

 private:
  GifSource source_;
  int open_error_ = 0;
  GifFileType* gif_ = nullptr;
};

// Paints the frame's rows (interlaced or not) onto the screen.
Status PaintFrame(const GifHandle& h, const ColorMapObject& map, int transparent, Image* out) {
  GifFileType* gif = h.get();
  const GifImageDesc& d = gif->Image;
  if (d.Width <= 0 || d.Height <= 0) return h.Fault("(frame of zero size)");
  std::vector<GifPixelType> line(static_cast<size_t>(d.Width));
  const int channels = out->channels();
  auto paint_row = [&](int y) {
    const int sy = d.Top + y;
    if (sy < 0 || sy >= out->height()) return;
    uint8_t* row = out->row(sy);
    for (int x = 0; x < d.Width; ++x) {
      const int sx = d.Left + x;
      if (sx < 0 || sx >= out->width()) continue;
      const int index = line[static_cast<size_t>(x)];
      uint8_t* px = row + static_cast<size_t>(sx) * channels;
      if (index == transparent) continue;  // stays transparent black
      const GifColorType c = index < map.ColorCount ? map.Colors[index] : GifColorType{0, 0, 0};
      px[0] = c.Red;
      px[1] = c.Green;
      px[2] = c.Blue;
      if (channels == 4) px[3] = 255;
    }
  };
  static constexpr int kStart[4] = {0, 4, 2, 1}, kStep[4] = {8, 8, 4, 2};
  const int passes = d.Interlace ? 4 : 1;
  for (int p = 0; p < passes; ++p) {
    const int start = d.Interlace ? kStart[p] : 0, step = d.Interlace ? kStep[p] : 1;
    for (int y = start; y < d.Height; y += step) {
      if (DGifGetLine(gif, line.data(), d.Width) != GIF_OK) {
        return h.Fault("at row " + std::to_string(y) + " of the first frame");
      }
      paint_row(y);
    }
  }
  return Status::OK();
}

}  // namespace

StatusOr<ImageInfo> ProbeGif(std::string_view bytes) {
  if (bytes.size() < 13) return DataLossError("GIF: truncated header (" + std::to_string(bytes.size()) + " bytes)");
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  ImageInfo info;
  info.format = ImageFormat::kGif;
  info.width = Le16(p + 6);
  info.height = Le16(p + 8);
  info.channels = 3;
  info.palette = true;
  if (info.width == 0 || info.height == 0) {
    return DataLossError("GIF: zero screen size " + std::to_string(info.width) + "x" + std::to_string(info.height));
  }
  return info;
}

Status DecodeGif(std::string_view bytes, uint64_t max_pixels, Image* out) {
  LIBSHARD_ASSIGN_OR_RETURN(ImageInfo info, ProbeGif(bytes));
  GifHandle h(bytes);
  GifFileType* gif = h.get();
  if (!gif) return h.Fault("in the header");
  int transparent = -1;
  // Each record consumes bytes, so the loop ends with the data at the latest.
  while (true) {
    GifRecordType type = UNDEFINED_RECORD_TYPE;
    if (DGifGetRecordType(gif, &type) != GIF_OK) return h.Fault("before the first frame");
    if (type == TERMINATE_RECORD_TYPE) return DataLossError("GIF: no image frame before the end of the data");
    if (type == EXTENSION_RECORD_TYPE) {
      int code = 0;
      GifByteType* ext = nullptr;
      if (DGifGetExtension(gif, &code, &ext) != GIF_OK) return h.Fault("in an extension block");
      if (code == GRAPHICS_EXT_FUNC_CODE && ext && ext[0] >= 4) transparent = (ext[1] & 1) ? ext[4] : -1;
      while (ext) {
        if (DGifGetExtensionNext(gif, &ext) != GIF_OK) return h.Fault("in an extension block");
      }
      continue;
    }
    if (type != IMAGE_DESC_RECORD_TYPE) continue;
    if (DGifGetImageDesc(gif) != GIF_OK) return h.Fault("in the first frame's descriptor");
    // Checked before a row is decoded: rows past the screen would be
    // decoded only to be thrown away (a 65535 x 65535 frame on a 1 x 1
    // screen is 4.3e9 pixels of work for one).
    const GifImageDesc& d = gif->Image;
    const uint64_t frame_pixels = static_cast<uint64_t>(std::max(d.Width, 0)) * std::max(d.Height, 0);
    if (frame_pixels > max_pixels) {
      return ResourceExhaustedError("GIF: the first frame's " + std::to_string(d.Width) + "x" +
                                    std::to_string(d.Height) + " exceeds the pixel limit of " +
                                    std::to_string(max_pixels) + " pixels");
    }
    if (d.Left < 0 || d.Top < 0 || int64_t{d.Left} + d.Width > info.width || int64_t{d.Top} + d.Height > info.height) {
      return DataLossError("GIF: the first frame (" + std::to_string(d.Width) + "x" + std::to_string(d.Height) +
                           " at " + std::to_string(d.Left) + "," + std::to_string(d.Top) + ") extends past the " +
                           std::to_string(info.width) + "x" + std::to_string(info.height) + " logical screen");
    }
    const ColorMapObject* map = gif->Image.ColorMap ? gif->Image.ColorMap : gif->SColorMap;
    if (!map || map->ColorCount <= 0) return DataLossError("GIF: the first frame has no colour map");
    out->Reset(info.width, info.height, transparent >= 0 ? 4 : 3, 8);
    if (transparent < 0 && gif->SColorMap && gif->SBackGroundColor < gif->SColorMap->ColorCount) {
      const GifColorType bg = gif->SColorMap->Colors[gif->SBackGroundColor];
      for (int y = 0; y < out->height(); ++y) {
        uint8_t* px = out->row(y);
        for (int x = 0; x < out->width(); ++x, px += 3) {
          px[0] = bg.Red;
          px[1] = bg.Green;
          px[2] = bg.Blue;
        }
      }
    }
    return PaintFrame(h, *map, transparent, out);
  }
}

}  // namespace libshard::image::internal
