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
// HashRegions gives what the leak check stores (convert/duplicates.h): the
// 64-bit hash and a 256-bit "detail" hash (the same DCT's 16x16 lowest
// frequencies, one bit per coefficient above the median of the 255 other
// than DC) of ten regions: the whole image, the centred region, the four
// 95 % x 95 % corner regions and the four regions with 5 % off one side.
// A copy with 5 % cut off (centred, at a corner or an edge) has its whole
// hashes near one region's hashes of the original. The regions' 32x32 grids
// are averaged from one gray plane of at most 256x256 cell means (one pass
// over the pixels; a summed-area table for the regions), so
// HashRegions(img).phash[0] is near PerceptualHash(img), equal for images up
// to 256 pixels a side (and phash[1] CentrePerceptualHash(img)).
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

#include <array>
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

// The regions HashRegions hashes, in per mille of the width and height:
// kept [left, right) x [top, bottom), margins rounded down (as
// CentreRegionOf's) on the gray plane.
inline constexpr int kHashRegions = 10;
struct RegionPerMille {
  int left, top, right, bottom;
};
inline constexpr RegionPerMille kHashRegionBounds[kHashRegions] = {
    {0, 0, 1000, 1000},    // whole
    {25, 25, 975, 975},    // centre (CentreRegionOf)
    {0, 0, 950, 950},      // top-left 95 % x 95 %
    {50, 0, 1000, 950},    // top-right
    {0, 50, 950, 1000},    // bottom-left
    {50, 50, 1000, 1000},  // bottom-right
    {0, 0, 950, 1000},     // 5 % off the right
    {50, 0, 1000, 1000},   // 5 % off the left
    {0, 0, 1000, 950},     // 5 % off the bottom
    {0, 50, 1000, 1000},   // 5 % off the top
};
using DetailHash = std::array<uint64_t, 4>;  // 256 bits: bit 16 * v + u in word bit / 64
struct RegionHashes {
  std::array<uint64_t, kHashRegions> phash{};     // 64-bit hashes, [0] the whole image
  std::array<DetailHash, kHashRegions> detail{};  // 256-bit hashes of the same regions
};
// The hashes of the ten regions of `img` (all zero for an empty image).
RegionHashes HashRegions(const Image& img);

// Bits that differ between two 256-bit hashes, 0..256.
inline int HammingDistance(const DetailHash& a, const DetailHash& b) {
  return __builtin_popcountll(a[0] ^ b[0]) + __builtin_popcountll(a[1] ^ b[1]) + __builtin_popcountll(a[2] ^ b[2]) +
         __builtin_popcountll(a[3] ^ b[3]);
}

// Bits that differ between two hashes, 0..64.
inline int HammingDistance(uint64_t a, uint64_t b) { return __builtin_popcountll(a ^ b); }

}  // namespace libshard::image

#endif  // LIBSHARD_IMAGE_PERCEPTUAL_HASH_H_
