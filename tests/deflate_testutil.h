// zlib compression for tests that need gzip/zlib TFRecord files (link
// ZLIB::ZLIB).
#ifndef LIBSHARD_TESTS_DEFLATE_TESTUTIL_H_
#define LIBSHARD_TESTS_DEFLATE_TESTUTIL_H_

#include <gtest/gtest.h>
#include <zlib.h>

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

}  // namespace libshard::testing

#endif  // LIBSHARD_TESTS_DEFLATE_TESTUTIL_H_
