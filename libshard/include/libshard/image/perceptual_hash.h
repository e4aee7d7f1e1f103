// Perceptual hash: a 64-bit fingerprint of what an image looks like, the same
// (or a few bits apart) for re-encodes, resized copies and slightly cropped
// copies, and about 32 bits apart for unrelated images. The converter's leak
// check (convert/duplicates.h) compares them by Hamming distance.
//
// The hash (the "DCT hash" of pHash / imagehash.phash, made exact here):
//   1. blocks: the image cut into blocks of k x k pixels, k = ceil(side /
//      128) per axis (kGrayPlaneCells; the last block of an axis may be
//      shorter), each block's value its mean Rec. 601 luma, (77 R + 150 G +
//      29 B) / 256 (gray as is; alpha ignored; 16-bit samples by their high
//      byte), over every step-th pixel per axis, step = ceil(k / 4)
//      (kGrayPlaneSamples: every pixel for images up to 512 a side);
//   2. a region (fractions of the width and height: the whole image, or one
//      of kHashRegionBounds) cut into 32x32 equal parts in pixel
//      coordinates, each the mean over it of the blocks taken as constants
//      (a block cut by a part counts by the area inside: the exact integral,
//      from a summed-area table of the blocks);
//   3. the orthonormal 2-D DCT-II of that grid, of which the 8x8 lowest
//      frequencies are kept;
//   4. bit 8 * v + u (v the vertical, u the horizontal frequency) is 1 when
//      coefficient (u, v) is above the median of the 63 coefficients other
//      than DC; bit 0 (DC) is always 0.
// The pixels are read once for all regions (the cost: docs/convert.md,
// "Leak check").
// HashRegions gives what the leak check stores (convert/duplicates.h): the
// 64-bit hash and a 256-bit "detail" hash (the same DCT's 16x16 lowest
// frequencies, one bit per coefficient above the median of the 255 other
// than DC) of ten regions: the whole image, the centred region (2.5 % off
// each side), the four 95 % x 95 % corner regions and the four regions with
// 5 % off one side. A copy with 5 % cut off (centred, at a corner or an
// edge) has its whole hashes near one region's hashes of the original.
// Beside them, each region's tone (RegionTone: mean and contrast), which the
// leak check compares too.
// And the whole image's two hashes mirrored left to right (the odd
// horizontal frequencies of the same DCT negated), so that a flipped copy is
// found too.
// HashRegions(img).phash[0] == PerceptualHash(img), phash[1] ==
// CentrePerceptualHash(img).
// The result depends only on the pixels (not on the thread, CPU or platform:
// the grid in double, the DCT in float (IEEE single: every x86-64 CPU
// rounds it alike), each with a fixed order of operations, the medians by
// integer counts, and the files compiled without floating-point
// contraction).
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

// Step 1's blocks: at most this many per axis, and pixels read per block
// and axis.
inline constexpr int kGrayPlaneCells = 128;
inline constexpr int kGrayPlaneSamples = 4;

// The 64-bit DCT hash of the centred region, kHashRegionBounds[1] (0 for an
// empty image).
uint64_t CentrePerceptualHash(const Image& img);

// The regions HashRegions hashes, in per mille of the width and height:
// kept [left, right) x [top, bottom) of the gray plane.
inline constexpr int kHashRegions = 10;
struct RegionPerMille {
  int left, top, right, bottom;
};
inline constexpr RegionPerMille kHashRegionBounds[kHashRegions] = {
    {0, 0, 1000, 1000},    // whole
    {25, 25, 975, 975},    // centre
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
// What the hashes leave out by design (they are unchanged when the gray
// levels are scaled or shifted): a region's brightness and contrast, from
// the same DCT: `mean` the mean luma of its 32x32 grid, `contrast` the
// standard deviation of that grid low-passed to the 16x16 lowest
// frequencies (the root of the summed squares of those 255 AC
// coefficients, orthonormal, over 32), both in 1/256 gray levels, rounded.
struct RegionTone {
  uint16_t mean = 0;
  uint16_t contrast = 0;
};
struct RegionHashes {
  std::array<uint64_t, kHashRegions> phash{};     // 64-bit hashes, [0] the whole image
  std::array<DetailHash, kHashRegions> detail{};  // 256-bit hashes of the same regions
  std::array<RegionTone, kHashRegions> tone{};    // the same regions' brightness and contrast
  // The whole image's hashes as they would be of the picture mirrored left
  // to right (its tone is tone[0]), from the same DCT: a horizontal flip of
  // the picture hashes near these (the block plane is cut from the left, so
  // within a few bits, not always exactly).
  uint64_t mirror = 0;
  DetailHash mirror_detail{};
};
// The hashes of the ten regions of `img` (all zero for an empty image).
RegionHashes HashRegions(const Image& img);

// The implementations, for tests and benchmarks (HashRegions and the
// single-region hashes use ActiveHashImpl()): the same source built for
// x86-64 and for AVX2 (with hand-written AVX2 block sums for 8-bit RGB
// images of 129..256 pixels a side), giving the same bits.
enum class HashImpl { kPortable, kAvx2 };
bool HashImplAvailable(HashImpl impl);
// The fastest implementation this CPU has.
HashImpl ActiveHashImpl();
// HashRegions with `impl` (the portable one where this CPU lacks `impl`).
RegionHashes HashRegionsWith(HashImpl impl, const Image& img);

// Bits that differ between two 256-bit hashes, 0..256.
inline int HammingDistance(const DetailHash& a, const DetailHash& b) {
  return __builtin_popcountll(a[0] ^ b[0]) + __builtin_popcountll(a[1] ^ b[1]) + __builtin_popcountll(a[2] ^ b[2]) +
         __builtin_popcountll(a[3] ^ b[3]);
}

// Bits that differ between two hashes, 0..64.
inline int HammingDistance(uint64_t a, uint64_t b) { return __builtin_popcountll(a ^ b); }

}  // namespace libshard::image

#endif  // LIBSHARD_IMAGE_PERCEPTUAL_HASH_H_
