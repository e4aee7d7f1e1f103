// Reads the golden sets written by make_golden.py (see its docstring for the
// format) and compares decoded images with them.
#ifndef LIBSHARD_TESTS_IMAGE_GOLDEN_H_
#define LIBSHARD_TESTS_IMAGE_GOLDEN_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "libshard/image/image.h"

namespace libshard::testing {

struct GoldenEntry {
  int width = 0, height = 0, channels = 0, block = 1, tolerance = 0;
  std::vector<uint8_t> values;  // HWC, block means when block > 1
};

// tests/image/golden/<set>.tsv + .bin.zz, keyed by name. Fails the current
// test (and returns an empty map) when the files cannot be read.
std::map<std::string, GoldenEntry> LoadGoldenSet(const std::string& set);

// Block means of `img` (8-bit), computed as make_golden.py does.
std::vector<uint8_t> BlockMeans(const image::Image& img, int block);

// Largest and mean absolute difference between `img` and `g` over the first
// min(channels) channels; sets *compared = false when sizes differ.
struct Diff {
  bool same_shape = false;
  int max_abs = 0;
  double mean_abs = 0;
};
Diff Compare(const image::Image& img, const GoldenEntry& g);

// Golden path: tests/image/golden/<name> in the source tree.
std::string GoldenPath(const std::string& name);

// Rewrites the value of the EXIF Orientation tag in a JPEG's bytes (the
// first IFD entry with tag 0x0112); returns false when not found.
bool PatchExifOrientation(std::string* jpeg, int value);

}  // namespace libshard::testing

#endif  // LIBSHARD_TESTS_IMAGE_GOLDEN_H_
