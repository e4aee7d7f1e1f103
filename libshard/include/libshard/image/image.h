// Image: an owned pixel buffer, the value every image codec stage passes on.
//
// Pixels are stored row-major, interleaved (HWC): the sample for channel c of
// pixel (x, y) is at index (y * width + x) * channels + c. Channels are
//   1 = gray, 2 = gray + alpha, 3 = RGB, 4 = RGBA
// and bit_depth is 8 (one uint8_t per sample) or 16 (one native-endian
// uint16_t per sample, read through samples16()). Alpha is straight
// (not premultiplied). There is no row padding.
//
//   libshard::image::Image img(224, 224, 3);     // zero-filled RGB8
//   img.row(0)[0] = 255;                         // red of pixel (0, 0)
//
// Ownership: the Image owns its std::vector storage; copying copies pixels.
// Thread-safety: a value type; distinct objects may be used from distinct
// threads, one object from one thread at a time.
#ifndef LIBSHARD_IMAGE_IMAGE_H_
#define LIBSHARD_IMAGE_IMAGE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace libshard::image {

// A rectangle of an image, in pixels (x + width <= the image's width, y +
// height <= its height where a function says so): crops, crop-decode regions.
struct PixelRect {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
};

class Image {
 public:
  Image() = default;
  // A zero-filled image. bit_depth must be 8 or 16, channels 1..4.
  Image(int width, int height, int channels, int bit_depth = 8) { Reset(width, height, channels, bit_depth); }

  // Reshapes the image, keeping the allocation when it is large enough (so a
  // per-thread Image can be reused for decode after decode). Sample values
  // are unspecified afterwards where the old buffer is reused.
  void Reset(int width, int height, int channels, int bit_depth = 8) {
    width_ = width;
    height_ = height;
    channels_ = channels;
    bit_depth_ = bit_depth;
    data_.resize(byte_size());
  }

  int width() const { return width_; }
  int height() const { return height_; }
  int channels() const { return channels_; }
  int bit_depth() const { return bit_depth_; }
  int bytes_per_sample() const { return bit_depth_ == 16 ? 2 : 1; }
  bool has_alpha() const { return channels_ == 2 || channels_ == 4; }
  bool empty() const { return width_ == 0 || height_ == 0; }

  size_t row_bytes() const { return static_cast<size_t>(width_) * channels_ * bytes_per_sample(); }
  size_t byte_size() const { return row_bytes() * static_cast<size_t>(height_); }

  uint8_t* data() { return data_.data(); }
  const uint8_t* data() const { return data_.data(); }
  uint8_t* row(int y) { return data_.data() + row_bytes() * y; }
  const uint8_t* row(int y) const { return data_.data() + row_bytes() * y; }
  // 16-bit view; only meaningful when bit_depth() == 16.
  uint16_t* samples16() { return reinterpret_cast<uint16_t*>(data_.data()); }
  const uint16_t* samples16() const { return reinterpret_cast<const uint16_t*>(data_.data()); }

  // The storage itself, e.g. to move the bytes into a record.
  std::vector<uint8_t>& storage() { return data_; }
  const std::vector<uint8_t>& storage() const { return data_; }

  friend bool operator==(const Image& a, const Image& b) {
    return a.width_ == b.width_ && a.height_ == b.height_ && a.channels_ == b.channels_ &&
           a.bit_depth_ == b.bit_depth_ && a.data_ == b.data_;
  }

 private:
  int width_ = 0;
  int height_ = 0;
  int channels_ = 0;
  int bit_depth_ = 8;
  std::vector<uint8_t> data_;
};

}  // namespace libshard::image

#endif  // LIBSHARD_IMAGE_IMAGE_H_
