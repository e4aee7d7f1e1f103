// TIFF, GIF and BMP writers for tests (formats_testutil.h).
#include "formats_testutil.h"

#include <gif_lib.h>
#include <gtest/gtest.h>
#include <tiffio.h>

#include "testutil.h"

namespace libshard::testing {

std::string TiffBytes(const std::vector<TiffPage>& pages, const std::string& dir) {
  const std::string path = dir + "/written.tif";
  TIFF* tif = TIFFOpen(path.c_str(), "w");
  if (!tif) {
    ADD_FAILURE() << "TIFFOpen " << path;
    return "";
  }
  for (const TiffPage& p : pages) {
    const bool palette = !p.red.empty();
    TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, static_cast<uint32_t>(p.width));
    TIFFSetField(tif, TIFFTAG_IMAGELENGTH, static_cast<uint32_t>(p.height));
    TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, static_cast<uint16_t>(p.channels));
    TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, static_cast<uint16_t>(p.bits));
    TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(tif, TIFFTAG_COMPRESSION, static_cast<uint16_t>(p.compression));
    TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, 3u);
    uint16_t photometric = p.channels >= 3  ? PHOTOMETRIC_RGB
                           : p.min_is_white ? PHOTOMETRIC_MINISWHITE
                                            : PHOTOMETRIC_MINISBLACK;
    if (palette) {
      photometric = PHOTOMETRIC_PALETTE;
      TIFFSetField(tif, TIFFTAG_COLORMAP, p.red.data(), p.green.data(), p.blue.data());
    }
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, photometric);
    if (p.channels == 2 || p.channels == 4) {
      const uint16_t extra[1] = {EXTRASAMPLE_UNASSALPHA};
      TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, extra);
    }
    if (pages.size() > 1) TIFFSetField(tif, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
    const size_t row = size_t(p.width) * p.channels * (p.bits / 8);
    std::vector<uint8_t> line(row);
    for (int y = 0; y < p.height; ++y) {
      std::copy(p.samples.begin() + y * row, p.samples.begin() + (y + 1) * row, line.begin());
      if (TIFFWriteScanline(tif, line.data(), static_cast<uint32_t>(y), 0) < 0) ADD_FAILURE() << "scanline " << y;
    }
    if (!TIFFWriteDirectory(tif)) ADD_FAILURE() << "TIFFWriteDirectory";
  }
  TIFFClose(tif);
  return ReadFileOrDie(path);
}

namespace {
int AppendToString(GifFileType* gif, const GifByteType* data, int len) {
  static_cast<std::string*>(gif->UserData)->append(reinterpret_cast<const char*>(data), static_cast<size_t>(len));
  return len;
}
}  // namespace

std::string GifBytes(int screen_w, int screen_h, const std::vector<uint8_t>& palette, int background,
                     const std::vector<GifFrame>& frames) {
  std::string out;
  int err = 0;
  GifFileType* gif = EGifOpen(&out, AppendToString, &err);
  if (!gif) {
    ADD_FAILURE() << "EGifOpen " << err;
    return "";
  }
  EGifSetGifVersion(gif, true);
  int entries = 2;
  while (entries * 3 < static_cast<int>(palette.size())) entries *= 2;
  std::vector<GifColorType> colors(static_cast<size_t>(entries), GifColorType{0, 0, 0});
  for (size_t i = 0; i * 3 + 2 < palette.size(); ++i)
    colors[i] = {palette[i * 3], palette[i * 3 + 1], palette[i * 3 + 2]};
  ColorMapObject* map = GifMakeMapObject(entries, colors.data());
  int bits = 1;
  while ((1 << bits) < entries) ++bits;
  EXPECT_EQ(EGifPutScreenDesc(gif, screen_w, screen_h, bits, background, map), GIF_OK);
  for (const GifFrame& f : frames) {
    if (f.transparent >= 0) {
      const GifByteType gcb[4] = {1, 0, 0, static_cast<GifByteType>(f.transparent)};
      EXPECT_EQ(EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, gcb), GIF_OK);
    }
    EXPECT_EQ(EGifPutImageDesc(gif, f.left, f.top, f.width, f.height, f.interlace, nullptr), GIF_OK);
    // giflib takes rows in file order: the interlaced passes when interlaced.
    std::vector<int> order;
    if (f.interlace) {
      for (int y = 0; y < f.height; y += 8) order.push_back(y);
      for (int y = 4; y < f.height; y += 8) order.push_back(y);
      for (int y = 2; y < f.height; y += 4) order.push_back(y);
      for (int y = 1; y < f.height; y += 2) order.push_back(y);
    } else {
      for (int y = 0; y < f.height; ++y) order.push_back(y);
    }
    for (int y : order) {
      std::vector<GifPixelType> line(f.indices.begin() + size_t(y) * f.width,
                                     f.indices.begin() + size_t(y + 1) * f.width);
      EXPECT_EQ(EGifPutLine(gif, line.data(), f.width), GIF_OK);
    }
  }
  EXPECT_EQ(EGifCloseFile(gif, &err), GIF_OK) << err;
  GifFreeMapObject(map);
  return out;
}

std::string Bmp24Bytes(int width, int height, const std::vector<uint8_t>& rgb) {
  const size_t stride = (size_t(width) * 3 + 3) / 4 * 4;
  const uint32_t offset = 14 + 40, size = static_cast<uint32_t>(offset + stride * height);
  std::string s;
  auto le = [&](uint32_t v, int n) {
    for (int i = 0; i < n; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  };
  s += "BM";
  le(size, 4), le(0, 4), le(offset, 4);
  le(40, 4), le(static_cast<uint32_t>(width), 4), le(static_cast<uint32_t>(height), 4), le(1, 2), le(24, 2);
  le(0, 4), le(static_cast<uint32_t>(stride * height), 4), le(2835, 4), le(2835, 4), le(0, 4), le(0, 4);
  for (int y = height - 1; y >= 0; --y) {
    for (int x = 0; x < width; ++x) {
      const uint8_t* p = rgb.data() + (size_t(y) * width + x) * 3;
      s.push_back(static_cast<char>(p[2]));
      s.push_back(static_cast<char>(p[1]));
      s.push_back(static_cast<char>(p[0]));
    }
    s.append(stride - size_t(width) * 3, '\0');
  }
  return s;
}

std::vector<uint8_t> PatternBytes(size_t n, int seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 37 + i / 7 + seed * 101) & 0xFF);
  return v;
}

}  // namespace libshard::testing
