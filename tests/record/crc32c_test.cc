// CRC-32C: one parameterized suite run over every implementation this CPU
// has (portable slice-by-8, SSE4.2 three-stream, AVX-512 folding), checked against published
// known answers and against a bit-at-a-time reference written here from the
// polynomial alone.
#include "libshard/crc32c.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace libshard::crc32c {
namespace {

// The definition: reflected CRC-32C, polynomial 0x82F63B78, one bit at a time.
uint32_t ReferenceExtend(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t c = ~crc;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int b = 0; b < 8; ++b) c = (c >> 1) ^ ((c & 1u) ? 0x82F63B78u : 0u);
  }
  return ~c;
}

class Crc32cTest : public ::testing::TestWithParam<Impl> {
 protected:
  void SetUp() override {
    if (!ImplAvailable(GetParam())) GTEST_SKIP() << ImplName(GetParam()) << " not available on this CPU";
  }
  uint32_t Ext(uint32_t crc, const void* data, size_t n) const { return ExtendWith(GetParam(), crc, data, n); }
  uint32_t Val(const void* data, size_t n) const { return Ext(0, data, n); }
  uint32_t Val(const std::string& s) const { return Val(s.data(), s.size()); }
};

// Published known answers (RFC 3720 B.4 and the CRC catalogue's check value).
TEST_P(Crc32cTest, KnownAnswers) {
  EXPECT_EQ(Val("123456789"), 0xE3069283u);
  EXPECT_EQ(Val(std::string(32, '\x00')), 0x8A9136AAu);
  EXPECT_EQ(Val(std::string(32, '\xff')), 0x62A8AB43u);
  std::string up(32, '\0'), down(32, '\0');
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<char>(i);
    down[i] = static_cast<char>(31 - i);
  }
  EXPECT_EQ(Val(up), 0x46DD794Eu);
  EXPECT_EQ(Val(down), 0x113FDB5Cu);
  EXPECT_EQ(Val(nullptr, 0), 0u);
  EXPECT_EQ(Ext(0x12345678u, nullptr, 0), 0x12345678u);
}

TEST_P(Crc32cTest, ReferenceAgreesWithKnownAnswers) {
  // The reference itself is checked, so agreeing with it means something.
  EXPECT_EQ(ReferenceExtend(0, "123456789", 9), 0xE3069283u);
  EXPECT_EQ(ReferenceExtend(0, std::string(32, '\xff').data(), 32), 0x62A8AB43u);
}

// Extend() over two pieces equals one pass, for every split point, including
// buffers long enough for the multi-stream paths.
TEST_P(Crc32cTest, ExtendSplitAtEveryPoint) {
  std::mt19937_64 rng(1);
  for (size_t len : {size_t{0}, size_t{1}, size_t{63}, size_t{2000}}) {
    std::string buf(len, '\0');
    for (char& c : buf) c = static_cast<char>(rng());
    const uint32_t whole = Val(buf);
    ASSERT_EQ(whole, ReferenceExtend(0, buf.data(), len));
    for (size_t split = 0; split <= len; ++split) {
      ASSERT_EQ(Ext(Val(buf.data(), split), buf.data() + split, len - split), whole)
          << "len " << len << " split " << split;
    }
  }
  // A long buffer (three-stream blocks of 4 KiB and 256 B), split at a stride.
  std::string big(40000, '\0');
  for (char& c : big) c = static_cast<char>(rng());
  const uint32_t whole = ReferenceExtend(0, big.data(), big.size());
  ASSERT_EQ(Val(big), whole);
  for (size_t split = 0; split <= big.size(); split += 61) {
    ASSERT_EQ(Ext(Val(big.data(), split), big.data() + split, big.size() - split), whole) << "split " << split;
  }
  // Three pieces.
  for (size_t a = 0; a < 3000; a += 257) {
    for (size_t b = a; b < 20000; b += 1531) {
      uint32_t c = Val(big.data(), a);
      c = Ext(c, big.data() + a, b - a);
      c = Ext(c, big.data() + b, big.size() - b);
      ASSERT_EQ(c, whole) << a << " " << b;
    }
  }
}

// Random buffers of many lengths and every misalignment against the reference
// (and so against each other).
TEST_P(Crc32cTest, RandomBuffersMatchReference) {
  std::mt19937_64 rng(GetParam() == Impl::kPortable ? 11 : 12);
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 1100; ++n) lengths.push_back(n);
  // Around the block thresholds: 3 * 256 and 3 * 4096 bytes (three-stream),
  // 256 + k * 256 (folding).
  for (size_t edge :
       {size_t{768}, size_t{1536}, size_t{12288}, size_t{24576}, size_t{36864}, size_t{2048}, size_t{65536}}) {
    for (size_t d = 0; d < 10; ++d) {
      lengths.push_back(edge + d);
      lengths.push_back(edge - 1 - d);
    }
  }
  for (int i = 0; i < 60; ++i) lengths.push_back(rng() % 70001);
  lengths.push_back(70000);

  std::vector<unsigned char> storage(70000 + 16);
  for (size_t n : lengths) {
    for (size_t misalign = 0; misalign < 8; misalign += (n > 2000 ? 3 : 1)) {
      unsigned char* p = storage.data() + misalign;
      for (size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(rng());
      const uint32_t seed = (n % 3 == 0) ? 0 : static_cast<uint32_t>(rng());
      ASSERT_EQ(Ext(seed, p, n), ReferenceExtend(seed, p, n)) << "length " << n << " misalignment " << misalign;
    }
  }
}

TEST_P(Crc32cTest, AgreesWithActiveImplementation) {
  std::mt19937_64 rng(3);
  std::string buf(50001, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  for (size_t n : {size_t{0}, size_t{5}, size_t{767}, size_t{769}, size_t{12289}, size_t{50000}}) {
    EXPECT_EQ(Val(buf.data() + 1, n), Value(buf.data() + 1, n)) << n;
  }
}

INSTANTIATE_TEST_SUITE_P(AllImpls, Crc32cTest, ::testing::Values(Impl::kPortable, Impl::kSse42, Impl::kAvx512),
                         [](const ::testing::TestParamInfo<Impl>& info) {
                           switch (info.param) {
                             case Impl::kPortable:
                               return "Portable";
                             case Impl::kSse42:
                               return "Sse42";
                             case Impl::kAvx512:
                               return "Avx512";
                           }
                           return "Unknown";
                         });

TEST(Crc32cMaskTest, RoundTrip) {
  std::mt19937 rng(4);
  for (uint32_t v : {0u, 1u, 0xffffffffu, kMaskDelta, 0x80000000u}) {
    EXPECT_EQ(Unmask(Mask(v)), v);
    EXPECT_EQ(Mask(Unmask(v)), v);
  }
  for (int i = 0; i < 10000; ++i) {
    uint32_t v = rng();
    ASSERT_EQ(Unmask(Mask(v)), v);
    ASSERT_NE(Mask(v), v);
  }
}

// The stored CRCs of TensorFlow's record for "foo" (apache/beam's test file,
// written by tf.python_io.TFRecordWriter): header 03 00 00 00 00 00 00 00
// b0 99 49 0e, footer 61 8a be fe.
TEST(Crc32cMaskTest, TensorFlowMaskedValues) {
  const unsigned char length[8] = {3, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(Mask(Value(length, 8)), 0x0e4999b0u);
  EXPECT_EQ(Mask(Value("foo", 3)), 0xfebe8a61u);
  EXPECT_EQ(Unmask(0xfebe8a61u), Value("foo", 3));
  // The mask itself: rotate right by 15, add 0xa282ead8.
  EXPECT_EQ(Mask(0x00000001u), 0x00020000u + 0xa282ead8u);
  EXPECT_EQ(Mask(0x00008000u), 0x00000001u + 0xa282ead8u);
}

TEST(Crc32cImplTest, ActiveIsAvailable) {
  EXPECT_TRUE(ImplAvailable(Impl::kPortable));
  EXPECT_TRUE(ImplAvailable(ActiveImpl()));
  EXPECT_STREQ(ImplName(Impl::kPortable), "portable");
  EXPECT_STREQ(ImplName(Impl::kSse42), "sse4.2");
  EXPECT_STREQ(ImplName(Impl::kAvx512), "avx512-vpclmulqdq");
  // The fastest available one is active.
  if (ImplAvailable(Impl::kAvx512)) {
    EXPECT_EQ(ActiveImpl(), Impl::kAvx512);
  } else if (ImplAvailable(Impl::kSse42)) {
    EXPECT_EQ(ActiveImpl(), Impl::kSse42);
  } else {
    EXPECT_EQ(ActiveImpl(), Impl::kPortable);
  }
#if defined(__x86_64__)
  // Every x86-64 CPU this project targets has SSE4.2; say so if one does not,
  // since the fast path then goes untested.
  if (!ImplAvailable(Impl::kSse42)) GTEST_SKIP() << "SSE4.2 path not tested on this CPU";
#endif
}

}  // namespace
}  // namespace libshard::crc32c

namespace libshard {
namespace {

TEST(Crc32cCombineTest, CombinedPartsEqualTheWhole) {
  std::string data;
  for (int i = 0; i < 5000; ++i) data.push_back(static_cast<char>((i * 131 + i / 7) & 0xff));
  const uint32_t whole = crc32c::Value(data.data(), data.size());
  for (size_t cut : {size_t{0}, size_t{1}, size_t{7}, size_t{64}, size_t{4095}, data.size()}) {
    const uint32_t a = crc32c::Value(data.data(), cut);
    const uint32_t b = crc32c::Value(data.data() + cut, data.size() - cut);
    EXPECT_EQ(crc32c::Combine(a, b, data.size() - cut), whole) << cut;
  }
  // Three parts, combined left to right; "123456789" is 0xE3069283.
  const std::string check = "123456789";
  uint32_t c = crc32c::Value(check.data(), 2);
  c = crc32c::Combine(c, crc32c::Value(check.data() + 2, 4), 4);
  c = crc32c::Combine(c, crc32c::Value(check.data() + 6, 3), 3);
  EXPECT_EQ(c, 0xE3069283u);
}

}  // namespace
}  // namespace libshard
