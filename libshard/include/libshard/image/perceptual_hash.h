// Perceptual hash: a 64-bit fingerprint of what an image looks like, the same
// (or a few bits apart) for re-encodes, resized copies and slightly cropped
// copies, and about 32 bits apart for unrelated images. The converter's leak
// check (convert/duplicates.h) compares them by Hamming distance.
//
// The hash (the "DCT hash" of pHash / imagehash.phash, made exact here):
//   1. the image to gray (Rec. 601 luma: (77 R + 150 G + 29 B) / 256; gray
//      as is; alpha ignored; 16-bit samples use their high byte), averaged
//      onto a 32x32 grid: cell i of an axis of size S covers pixels
//      floor(i * S / 32) up to floor((i + 1) * S / 32) (at least one), and its
//      value is the mean over every k-th of them on each axis, k = ceil(cell
//      side / 16) (every pixel for images up to 512 on a side; at most 256
//      samples per cell for larger ones, which keeps a 12-megapixel image's
//      hash at a fraction of a millisecond);
//   2. the orthonormal 2-D DCT-II of that grid, of which the 8x8 lowest
//      frequencies are kept;
//   3. bit 8 * v + u (v the vertical, u the horizontal frequency) is 1 when
//      coefficient (u, v) is above the median of the 63 coefficients other
//      than DC; bit 0 (DC) is always 0.
// A second hash, of the centred region (CentreRegionOf: 2.5 % of the width
// off the left and right, 2.5 % of the height off the top and bottom),
// finds copies with about 5 % of each side cropped off: the copy's whole
// hash is near the original's centre hash (the leak check compares both
// ways; convert/duplicates.h).
// The result depends only on the pixels (not on the thread, CPU or platform:
// the DCT runs in double with a fixed order of operations).
//
//   uint64_t a = PerceptualHash(img), b = PerceptualHash(other);
//   if (HammingDistance(a, b) <= 6) { ... looks the same ... }
//
// Errors: none; an empty image hashes to 0.
// Thread-safety: pure functions.
#ifndef LIBSHARD_IMAGE_PERCEPTUAL_HASH_H_
#define LIBSHARD_IMAGE_PERCEPTUAL_HASH_H_

#include <cstdint>

#include "libshard/image/image.h"

namespace libshard::image {

// The 64-bit DCT hash of `img` (any channels 1..4, 8- or 16-bit).
uint64_t PerceptualHash(const Image& img);

// The centred region the second hash covers: floor(width * 25 / 1000)
// pixels off the left and the right, floor(height * 25 / 1000) off the top
// and the bottom.
inline constexpr int kCentreMarginPerMille = 25;
PixelRect CentreRegionOf(int width, int height);

// The 64-bit DCT hash of CentreRegionOf(img) (0 for an empty image).
uint64_t CentrePerceptualHash(const Image& img);

// Bits that differ between two hashes, 0..64.
inline int HammingDistance(uint64_t a, uint64_t b) { return __builtin_popcountll(a ^ b); }

}  // namespace libshard::image

#endif  // LIBSHARD_IMAGE_PERCEPTUAL_HASH_H_
