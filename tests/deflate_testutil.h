// zlib compression for tests that need gzip/zlib TFRecord files (link
// ZLIB::ZLIB).
#ifndef LIBSHARD_TESTS_DEFLATE_TESTUTIL_H_
#define LIBSHARD_TESTS_DEFLATE_TESTUTIL_H_

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>

namespace libshard::testing {

// gzip (wbits 16+15) or zlib (15) compression of `data` at `level`.
inline std::string Deflate(const std::string& data, int wbits, int level = 6) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, wbits, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A valid PNG of `width` x `height` RGBA, 16 bits per channel, every pixel
// 0: 8 bytes a pixel to decode (10000 x 10000: 800 MB) from a file of about
// a thousandth of that, compressed row by row (no buffer of the full size).
inline std::string BlankRgba16Png(uint32_t width, uint32_t height) {
  auto be32 = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
  };
  auto chunk = [&](const std::string& type, const std::string& data) {
    const std::string body = type + data;
    return be32(static_cast<uint32_t>(data.size())) + body +
           be32(static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size())));
  };
  z_stream z{};
  EXPECT_EQ(deflateInit(&z, 9), Z_OK);
  const std::string row(1 + size_t{width} * 8, '\0');  // filter byte 0, then the pixels
  std::string idat, buf(1 << 16, '\0');
  for (uint32_t y = 0; y < height; ++y) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(row.data()));
    z.avail_in = static_cast<uInt>(row.size());
    const int flush = y + 1 == height ? Z_FINISH : Z_NO_FLUSH;
    int rc = Z_OK;
    do {
      z.next_out = reinterpret_cast<Bytef*>(buf.data());
      z.avail_out = static_cast<uInt>(buf.size());
      rc = deflate(&z, flush);
      idat.append(buf.data(), buf.size() - z.avail_out);
    } while (z.avail_in > 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  }
  deflateEnd(&z);
  const std::string ihdr = be32(width) + be32(height) + std::string{16, 6, 0, 0, 0};  // 16-bit RGBA
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IDAT", idat) + chunk("IEND", "");
}

}  // namespace libshard::testing

#endif  // LIBSHARD_TESTS_DEFLATE_TESTUTIL_H_
