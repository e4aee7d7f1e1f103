// Dataset statistics: exact sums against a direct computation, Merge order
// independence, proto round trips and 128-bit text.
#include "libshard/convert/dataset_stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "fixtures.h"

namespace libshard::convert {
namespace {

using testing::RandomImage;

struct Direct {
  std::vector<uint64_t> count, sum;
  std::vector<unsigned __int128> sq;
  std::vector<double> dsum, dsq;
};

void AddDirect(const image::Image& img, Direct* d) {
  const int c = img.channels();
  if (d->count.size() < static_cast<size_t>(c)) {
    d->count.resize(c);
    d->sum.resize(c);
    d->sq.resize(c);
    d->dsum.resize(c);
    d->dsq.resize(c);
  }
  for (int y = 0; y < img.height(); ++y) {
    for (int x = 0; x < img.width(); ++x) {
      for (int k = 0; k < c; ++k) {
        const size_t i = (static_cast<size_t>(y) * img.width() + x) * c + k;
        const uint64_t v = img.bit_depth() == 16 ? img.samples16()[i] : img.data()[i];
        d->count[k] += 1;
        d->sum[k] += v;
        d->sq[k] += static_cast<unsigned __int128>(v) * v;
        d->dsum[k] += static_cast<double>(v);
        d->dsq[k] += static_cast<double>(v) * static_cast<double>(v);
      }
    }
  }
}

TEST(DatasetStatsTest, SumsMeanAndStdMatchADirectComputation) {
  struct Case {
    int w, h, c, bits;
  };
  // Sizes not a multiple of the 48 accumulation lanes, and a large 8-bit
  // image that crosses the 16384-block flush of the 32-bit lanes.
  const Case cases[] = {{1, 1, 1, 8},  {7, 5, 1, 8},   {13, 11, 2, 8}, {17, 9, 3, 8},     {5, 31, 4, 8},
                        {9, 7, 1, 16}, {11, 3, 3, 16}, {6, 6, 4, 16},  {1031, 797, 3, 8}, {3, 17, 2, 16}};
  for (int c = 1; c <= 4; ++c) {
    StatsAccumulator acc;
    Direct d;
    uint32_t seed = 1;
    for (const Case& k : cases) {
      if (k.c != c) continue;
      const image::Image img = RandomImage(k.w, k.h, k.c, k.bits, seed++);
      acc.AddPixels(img);
      AddDirect(img, &d);
    }
    DatasetStats p;
    acc.ToProto(&p);
    ASSERT_EQ(p.channels_size(), c);
    for (int k = 0; k < c; ++k) {
      const ChannelStats& ch = p.channels(k);
      EXPECT_EQ(ch.count(), d.count[k]) << c << "/" << k;
      EXPECT_EQ(ch.sum(), d.sum[k]) << c << "/" << k;
      EXPECT_EQ(ch.sum_squares(), U128ToString(d.sq[k])) << c << "/" << k;
      const double mean = d.dsum[k] / d.count[k];
      const double var = d.dsq[k] / d.count[k] - mean * mean;
      EXPECT_NEAR(ch.mean(), mean, 1e-9 * std::max(1.0, mean)) << c << "/" << k;
      EXPECT_NEAR(ch.std(), std::sqrt(std::max(0.0, var)), 1e-6 * std::max(1.0, mean)) << c << "/" << k;
    }
  }
}

TEST(DatasetStatsTest, WhiteImagesAcrossTheFlushesAreExact) {
  // All 255: the largest sums and squares, in images that end past several
  // flushes of the narrow accumulation lanes (256 steps of 48 samples, and
  // the 16384 blocks of 48 lanes), at an odd position.
  for (int c = 1; c <= 4; ++c) {
    for (int w : {48 * 256 / c + 1, 16384 * 48 / c + 7}) {
      image::Image img(w, 3, c);
      std::fill(img.data(), img.data() + img.byte_size(), uint8_t{255});
      StatsAccumulator acc;
      acc.AddPixels(img);
      DatasetStats p;
      acc.ToProto(&p);
      ASSERT_EQ(p.channels_size(), c);
      const uint64_t n = static_cast<uint64_t>(w) * 3;
      for (int k = 0; k < c; ++k) {
        EXPECT_EQ(p.channels(k).count(), n) << c << "/" << k;
        EXPECT_EQ(p.channels(k).sum(), n * 255) << c << "/" << k;
        EXPECT_EQ(p.channels(k).sum_squares(), std::to_string(n * 65025)) << c << "/" << k;
      }
    }
  }
}

TEST(DatasetStatsTest, KnownValues) {
  image::Image img(2, 1, 1);
  img.data()[0] = 0;
  img.data()[1] = 255;
  StatsAccumulator acc;
  acc.AddPixels(img);
  DatasetStats p;
  acc.ToProto(&p);
  ASSERT_EQ(p.channels_size(), 1);
  EXPECT_EQ(p.channels(0).sum(), 255u);
  EXPECT_EQ(p.channels(0).sum_squares(), "65025");
  EXPECT_DOUBLE_EQ(p.channels(0).mean(), 127.5);
  EXPECT_DOUBLE_EQ(p.channels(0).std(), 127.5);
  // An empty image adds nothing.
  acc.AddPixels(image::Image());
  acc.ToProto(&p);
  EXPECT_EQ(p.channels(0).count(), 2u);
}

StatsAccumulator Part(uint32_t seed) {
  StatsAccumulator a;
  a.AddPixels(RandomImage(7 + seed, 5, 1 + seed % 4, seed % 2 ? 16 : 8, seed));
  a.AddLabel(seed % 3);
  a.AddLabel(-1 + static_cast<int64_t>(seed));
  a.AddSource(seed % 2 ? "png" : "jpeg", 7 + seed, 5, 100 + seed);
  a.AddSource("png", 3, 3, 10);
  a.AddConverted(seed % 2 == 0, 50 + seed);
  if (seed % 3 == 0) a.AddRejected();
  return a;
}

std::string Bytes(const StatsAccumulator& a) {
  DatasetStats p;
  a.ToProto(&p);
  return p.SerializeAsString();
}

TEST(DatasetStatsTest, MergeIsAssociativeAndCommutative) {
  const StatsAccumulator a = Part(1), b = Part(2), c = Part(3), d = Part(4);
  StatsAccumulator left = a;  // ((a + b) + c) + d
  left.Merge(b);
  left.Merge(c);
  left.Merge(d);
  StatsAccumulator bc = b;  // a + (b + (c + d))
  StatsAccumulator cd = c;
  cd.Merge(d);
  bc.Merge(cd);
  StatsAccumulator right = a;
  right.Merge(bc);
  StatsAccumulator rev = d;  // d + c + b + a
  rev.Merge(c);
  rev.Merge(b);
  rev.Merge(a);
  EXPECT_EQ(Bytes(left), Bytes(right));
  EXPECT_EQ(Bytes(left), Bytes(rev));
  // Merging an empty accumulator changes nothing.
  StatsAccumulator e = left;
  e.Merge(StatsAccumulator());
  EXPECT_EQ(Bytes(e), Bytes(left));
  DatasetStats p;
  left.ToProto(&p);
  EXPECT_EQ(p.converted(), 4u);
  EXPECT_EQ(p.rejected(), 1u);
  EXPECT_EQ(p.passed_through(), 2u);
  EXPECT_EQ(p.source_bytes(), 100u * 4 + 1 + 2 + 3 + 4 + 40);
  EXPECT_EQ(p.output_bytes(), 50u * 4 + 10);
  EXPECT_EQ(p.channels_size(), 4);
  // Labels sorted, formats sorted by name, sizes by count descending.
  for (int i = 1; i < p.labels_size(); ++i) EXPECT_LT(p.labels(i - 1).label(), p.labels(i).label());
  ASSERT_EQ(p.source_formats_size(), 2);
  EXPECT_EQ(p.source_formats(0).name(), "jpeg");
  EXPECT_EQ(p.source_formats(1).name(), "png");
  EXPECT_EQ(p.source_formats(1).count(), 6u);
  ASSERT_GE(p.source_sizes_size(), 2);
  EXPECT_EQ(p.source_sizes(0).name(), "3x3");
  EXPECT_EQ(p.source_sizes(0).count(), 4u);
}

TEST(DatasetStatsTest, FromProtoRoundTrip) {
  StatsAccumulator a = Part(5);
  a.Merge(Part(6));
  a.Merge(Part(8));
  DatasetStats p;
  a.ToProto(&p);
  StatusOr<StatsAccumulator> back = StatsAccumulator::FromProto(p);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(Bytes(*back), p.SerializeAsString());
  EXPECT_EQ(back->converted(), a.converted());
  EXPECT_EQ(back->rejected(), a.rejected());

  DatasetStats bad = p;
  bad.mutable_channels(0)->set_sum_squares("12x");
  EXPECT_EQ(StatsAccumulator::FromProto(bad).status().code(), StatusCode::kInvalidArgument);
  bad = p;
  for (int i = 0; i < 5; ++i) bad.add_channels()->set_sum_squares("0");
  EXPECT_FALSE(StatsAccumulator::FromProto(bad).ok());
}

TEST(DatasetStatsTest, U128TextRoundTrip) {
  const unsigned __int128 two64 = static_cast<unsigned __int128>(1) << 64;
  const unsigned __int128 max = ~static_cast<unsigned __int128>(0);
  EXPECT_EQ(U128ToString(0), "0");
  EXPECT_EQ(U128ToString(18446744073709551615ull), "18446744073709551615");
  EXPECT_EQ(U128ToString(two64), "18446744073709551616");
  EXPECT_EQ(U128ToString(max), "340282366920938463463374607431768211455");
  for (unsigned __int128 v : {static_cast<unsigned __int128>(0), static_cast<unsigned __int128>(7), two64 - 1, two64,
                              two64 * 12345 + 678, max - 1, max}) {
    unsigned __int128 back = 1;
    ASSERT_TRUE(ParseU128(U128ToString(v), &back));
    EXPECT_TRUE(back == v) << U128ToString(v);
  }
  unsigned __int128 v;
  EXPECT_FALSE(ParseU128("", &v));
  EXPECT_FALSE(ParseU128("-1", &v));
  EXPECT_FALSE(ParseU128("1 ", &v));
  EXPECT_FALSE(ParseU128("340282366920938463463374607431768211456", &v));  // 2^128
  EXPECT_FALSE(ParseU128("9999999999999999999999999999999999999999", &v));
}

TEST(DatasetStatsTest, SumOfSquaresBeyond64BitsSurvivesTheProto) {
  // 65535^2 * 2^33 samples would exceed 2^64: build the sums by merging.
  StatsAccumulator a;
  image::Image img(1024, 1024, 1, 16);
  for (size_t i = 0; i < 1024 * 1024; ++i) img.samples16()[i] = 65535;
  a.AddPixels(img);
  StatsAccumulator total;
  for (int i = 0; i < 8; ++i) total.Merge(a);  // 2^23 samples of 65535^2 > 2^55
  StatsAccumulator big = total;
  for (int i = 0; i < 11; ++i) big.Merge(StatsAccumulator(big));  // 2^34 samples
  DatasetStats p;
  big.ToProto(&p);
  const unsigned __int128 expect = static_cast<unsigned __int128>(65535u * 65535u) << 34;
  EXPECT_EQ(p.channels(0).sum_squares(), U128ToString(expect));
  EXPECT_GT(expect, static_cast<unsigned __int128>(1) << 64);
  StatusOr<StatsAccumulator> back = StatsAccumulator::FromProto(p);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(Bytes(*back), p.SerializeAsString());
  EXPECT_DOUBLE_EQ(p.channels(0).mean(), 65535.0);
  EXPECT_NEAR(p.channels(0).std(), 0.0, 1e-3);
}

}  // namespace
}  // namespace libshard::convert

namespace libshard::convert {
namespace {

// The mask histogram of two random 1-channel masks (8- and 16-bit) against a
// direct count, merged either way and through the proto.
TEST(DatasetStatsTest, MaskPixelHistogramIsExactAndMerges) {
  const image::Image a = testing::RandomImage(37, 11, 1, 8, 3);
  const image::Image b = testing::RandomImage(5, 9, 1, 16, 4);
  std::map<int64_t, uint64_t> direct;
  for (size_t i = 0; i < size_t(37) * 11; ++i) ++direct[a.data()[i]];
  for (size_t i = 0; i < size_t(5) * 9; ++i) ++direct[b.samples16()[i]];
  StatsAccumulator sa, sb;
  sa.AddMaskPixels(a);
  sb.AddMaskPixels(b);
  sb.AddMaskPixels(testing::RandomImage(4, 4, 3, 8, 1));  // not a mask: ignored
  StatsAccumulator ab = sa, ba = sb;
  ab.Merge(sb);
  ba.Merge(sa);
  DatasetStats pab, pba;
  ab.ToProto(&pab);
  ba.ToProto(&pba);
  EXPECT_EQ(pab.SerializeAsString(), pba.SerializeAsString());
  std::map<int64_t, uint64_t> got;
  int64_t last = -1;
  for (const LabelCount& l : pab.mask_pixels()) {
    EXPECT_GT(l.label(), last) << "sorted by index";
    last = l.label();
    got[l.label()] = l.count();
  }
  EXPECT_EQ(got, direct);
  StatusOr<StatsAccumulator> back = StatsAccumulator::FromProto(pab);
  ASSERT_TRUE(back.ok()) << back.status();
  back->Merge(sa);
  DatasetStats twice;
  back->ToProto(&twice);
  uint64_t total = 0;
  for (const LabelCount& l : twice.mask_pixels()) total += l.count();
  EXPECT_EQ(total, 2u * 37 * 11 + 5 * 9);
}

}  // namespace
}  // namespace libshard::convert
