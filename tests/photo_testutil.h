// Synthetic "photos" for the tests of perceptual hashes and the leak check:
// smooth, varied, deterministic images (integer arithmetic only, so the
// pixels are the same on every platform and compiler).
#ifndef LIBSHARD_TESTS_PHOTO_TESTUTIL_H_
#define LIBSHARD_TESTS_PHOTO_TESTUTIL_H_

#include <cstdint>

#include "libshard/image/image.h"

namespace libshard::testing {

// An RGB8 width x height picture drawn from `seed`: a two-colour gradient in
// a random direction, 4..11 filled ellipses and rectangles of random colours
// and sizes, and +-6 of per-pixel noise. Different seeds look different.
image::Image SyntheticPhoto(int width, int height, uint64_t seed);

// The top-left-anchored crop (x, y, w, h) of `img` (inside it), a copy.
image::Image CropOf(const image::Image& img, int x, int y, int w, int h);

// `img` mirrored left to right, a copy.
image::Image MirrorOf(const image::Image& img);

}  // namespace libshard::testing

#endif  // LIBSHARD_TESTS_PHOTO_TESTUTIL_H_
