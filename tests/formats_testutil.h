// Real TIFF, GIF and BMP files made by the tests: TIFF by libtiff, GIF by
// giflib, BMP byte by byte (the format is small; docs/image.md).
#ifndef LIBSHARD_TESTS_FORMATS_TESTUTIL_H_
#define LIBSHARD_TESTS_FORMATS_TESTUTIL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace libshard::testing {

// One TIFF page: width x height pixels of `channels` samples (1 gray, 2 gray
// + alpha, 3 RGB, 4 RGBA; alpha unassociated) at 8 or 16 bits, stored in
// `samples` (16-bit: native uint16_t pairs), written in strips of 3 rows
// with `compression` (a libtiff COMPRESSION_ value; 1 = none).
struct TiffPage {
  int width = 0, height = 0, channels = 1, bits = 8;
  std::vector<uint8_t> samples;
  int compression = 1;
  bool min_is_white = false;
  // A palette page: `samples` are 8-bit indices, colours 16-bit per libtiff.
  std::vector<uint16_t> red, green, blue;
};
// The pages as one TIFF file's bytes (libtiff writes it in `dir`).
std::string TiffBytes(const std::vector<TiffPage>& pages, const std::string& dir);

// One GIF frame: indices into `palette` (RGB triples, 2..256 entries).
struct GifFrame {
  int left = 0, top = 0, width = 0, height = 0;
  bool interlace = false;
  int transparent = -1;  // a graphic control extension names it when >= 0
  std::vector<uint8_t> indices;
};
// A GIF89a file (giflib) with a global colour map of `palette`.
std::string GifBytes(int screen_w, int screen_h, const std::vector<uint8_t>& palette, int background,
                     const std::vector<GifFrame>& frames);

// A 24-bit bottom-up BITMAPINFOHEADER BMP of RGB pixels (rows padded to 4).
std::string Bmp24Bytes(int width, int height, const std::vector<uint8_t>& rgb);

// Deterministic samples: n values with a pattern of `seed`, as bytes.
std::vector<uint8_t> PatternBytes(size_t n, int seed);

}  // namespace libshard::testing

#endif  // LIBSHARD_TESTS_FORMATS_TESTUTIL_H_
