// The TFRecord framing, exactly as TensorFlow's RecordWriter writes it. A file
// is a sequence of records with no file header or footer:
//
//   offset  size  field
//   0       8     length       uint64, little-endian: number of data bytes
//   8       4     length_crc   uint32 LE: Mask(CRC32C(bytes 0..7))
//   12      N     data         the payload (usually a serialized tf.Example)
//   12+N    4     data_crc     uint32 LE: Mask(CRC32C(data))
//
// Mask() is TensorFlow's: rotate right by 15 bits, add 0xa282ead8 (see
// libshard/crc32c.h). A record therefore occupies N + 16 bytes ("framed
// size"). The length CRC must be checked before the length is trusted.
// docs/formats.md describes the same layout.
#ifndef LIBSHARD_RECORD_FORMAT_H_
#define LIBSHARD_RECORD_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace libshard::record {

constexpr size_t kLengthSize = 8;
constexpr size_t kHeaderSize = kLengthSize + 4;  // length + masked CRC of length
constexpr size_t kFooterSize = 4;                // masked CRC of data
constexpr size_t kFramingOverhead = kHeaderSize + kFooterSize;

// Records longer than this are treated as corrupt unless the caller raises
// the limit (ReaderOptions::max_record_length).
constexpr uint64_t kDefaultMaxRecordLength = uint64_t{1} << 30;  // 1 GiB

// Writes the 12-byte header for a record of `length` data bytes into `out`.
void EncodeHeader(uint64_t length, char out[kHeaderSize]);
// Writes the 4-byte footer for `data` into `out`.
void EncodeFooter(std::string_view data, char out[kFooterSize]);

inline uint32_t DecodeFixed32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{u[0]} | (uint32_t{u[1]} << 8) | (uint32_t{u[2]} << 16) | (uint32_t{u[3]} << 24);
}
inline uint64_t DecodeFixed64(const char* p) {
  return uint64_t{DecodeFixed32(p)} | (uint64_t{DecodeFixed32(p + 4)} << 32);
}
inline void EncodeFixed32(uint32_t v, char* p) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xffu);
}
inline void EncodeFixed64(uint64_t v, char* p) {
  EncodeFixed32(static_cast<uint32_t>(v), p);
  EncodeFixed32(static_cast<uint32_t>(v >> 32), p + 4);
}

}  // namespace libshard::record

#endif  // LIBSHARD_RECORD_FORMAT_H_
