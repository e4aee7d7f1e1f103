// EXIF orientation from an APP1 payload (after "Exif\0\0").
#ifndef LIBSHARD_SRC_IMAGE_EXIF_H_
#define LIBSHARD_SRC_IMAGE_EXIF_H_

#include <cstddef>

namespace libshard::image::internal {

// The IFD0 Orientation tag (0x0112) of a TIFF-structured EXIF block: 1..8,
// or 1 when the tag is absent, malformed or out of range.
int ExifOrientation(const unsigned char* tiff, size_t size);

}  // namespace libshard::image::internal

#endif  // LIBSHARD_SRC_IMAGE_EXIF_H_
