// Private: step 1 of the perceptual hash (libshard/image/perceptual_hash.h),
// the image read once into blocks and kept as a summed-area table, which
// perceptual_hash.cc reads at each region's grid lines. Two builds of the
// same source (portable, and AVX2 with hand-written block sums for 8-bit
// RGB images of 129..256 pixels a side) that give the same values: integer
// sums, then double additions of whole numbers or in a fixed order.
#ifndef LIBSHARD_SRC_IMAGE_PERCEPTUAL_HASH_PLANE_H_
#define LIBSHARD_SRC_IMAGE_PERCEPTUAL_HASH_PLANE_H_

#include <algorithm>
#include <array>
#include <cstddef>

#include "libshard/image/image.h"
#include "libshard/image/perceptual_hash.h"

namespace libshard::image::internal {

constexpr int kPlane = kGrayPlaneCells;
constexpr int kMaxSamples = kGrayPlaneSamples;

// One axis of the plane: blocks of k pixels (k = ceil(size / kPlane)),
// block i covering pixels [i k, min((i + 1) k, size)) (the last may be
// shorter), of which every step-th is read, step = ceil(k / kMaxSamples).
struct Axis {
  int size = 0, k = 1, n = 0, step = 1;
  int lo(int i) const { return i * k; }
  int hi(int i) const { return std::min((i + 1) * k, size); }
  int samples(int i) const { return (hi(i) - lo(i) + step - 1) / step; }
  // Block and fraction of pixel coordinate p (0..size).
  void Locate(double p, int* block, double* frac) const {
    *block = std::min(static_cast<int>(p / k), n - 1);
    *frac = (p - lo(*block)) / (hi(*block) - lo(*block));
  }
};
inline Axis AxisOf(int size) {
  Axis a;
  a.size = size;
  a.k = (size + kPlane - 1) / kPlane;
  a.n = (size + a.k - 1) / a.k;
  a.step = (a.k + kMaxSamples - 1) / kMaxSamples;
  return a;
}

// The plane as a summed-area table of its blocks: sat[y * (x_axis.n + 1) +
// x] is the luma * 256 summed over the pixels of blocks of rows < y and
// columns < x, each block's pixels counted at the mean of those read (the
// exact sum where every pixel is read, blocks of up to 4 pixels a side).
struct Plane {
  Axis x, y;
  std::array<double, (kPlane + 1) * (kPlane + 1)> sat{};
  size_t stride() const { return static_cast<size_t>(x.n) + 1; }
};

// The plane of `img` (not empty) into *plane.
void GrayPlanePortable(const Image& img, Plane* plane);
// The same values, faster; only where the CPU has AVX2.
void GrayPlaneAvx2(const Image& img, Plane* plane);

}  // namespace libshard::image::internal

#endif  // LIBSHARD_SRC_IMAGE_PERCEPTUAL_HASH_PLANE_H_
