// The leak check's incremental index (convert/duplicate_index.h, --dedup
// within): every band count finds exactly what comparing every pair finds,
// hashes and fingerprints (confirmed by NearDistance) alike.
#include "libshard/convert/duplicate_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "libshard/image/perceptual_hash.h"
#include "libshard/util/random.h"

namespace libshard::convert {
namespace {

// Every (earlier id, distance) within d of hash i, by comparing all pairs.
std::set<std::pair<uint32_t, int>> BruteForce(const std::vector<uint64_t>& hashes, size_t i, int d) {
  std::set<std::pair<uint32_t, int>> out;
  for (size_t j = 0; j < i; ++j) {
    const int dist = image::HammingDistance(hashes[i], hashes[j]);
    if (dist <= d) out.emplace(static_cast<uint32_t>(j), dist);
  }
  return out;
}

// `h` with `flips` distinct bits flipped.
uint64_t Flipped(util::SplitMix64& rng, uint64_t h, int flips) {
  uint64_t mask = 0;
  while (__builtin_popcountll(mask) < flips) mask |= uint64_t{1} << rng.Below(64);
  return h ^ mask;
}

// Every band count (3..16, and the one chosen for the count) at distances
// 0..16 finds exactly what comparing all pairs finds: random hashes, and
// copies of earlier ones exactly d bits off (spread at random over the
// bands: some spread so that a single band's radius one short misses
// them), d + 1 bits off (never found) or 0..d.
TEST(DuplicateIndexTest, EveryBandCountFindsWhatComparingEveryPairFinds) {
  util::SplitMix64 rng(5);
  for (int d : {0, 1, 2, 4, 6, 7, 9, 12, 16}) {
    std::vector<uint64_t> hashes;
    for (int i = 0; i < 1200; ++i) {
      if (i < 10 || rng.Below(3) == 0) {
        hashes.push_back(rng.Next());
        continue;
      }
      const uint64_t from = hashes[rng.Below(hashes.size())];
      const uint64_t kind = rng.Below(4);
      hashes.push_back(Flipped(rng, from, kind < 2 ? d : kind == 2 ? d + 1 : static_cast<int>(rng.Below(d + 1))));
    }
    std::vector<std::set<std::pair<uint32_t, int>>> want;
    uint64_t pairs = 0;
    for (size_t i = 0; i < hashes.size(); ++i) {
      want.push_back(BruteForce(hashes, i, d));
      pairs += want.back().size();
    }
    EXPECT_GT(pairs, 300u) << d;
    for (int bands = kMinSearchBands - 1; bands <= kMaxSearchBands; ++bands) {
      // kMinSearchBands - 1: the count's own choice.
      DuplicateIndex index(d, hashes.size(),
                           bands < kMinSearchBands ? DuplicateIndex::BandsFor(d, hashes.size()) : bands);
      for (size_t i = 0; i < hashes.size(); ++i) {
        std::set<std::pair<uint32_t, int>> found;
        size_t calls = 0;
        index.ForEachNear(hashes[i], [&](uint32_t id, int distance) {
          found.emplace(id, distance);
          ++calls;
        });
        EXPECT_EQ(calls, found.size()) << "a pair reported twice, d " << d << ", bands " << index.bands();
        ASSERT_EQ(found, want[i]) << "hash " << i << ", d " << d << ", bands " << index.bands();
        index.Add(hashes[i]);
      }
      EXPECT_EQ(index.size(), hashes.size());
    }
  }
  // The counts pick wide bands for many hashes, narrow ones for few.
  EXPECT_EQ(DuplicateIndex::BandsFor(6, 1'000'000), 4);
  EXPECT_GE(DuplicateIndex::BandsFor(6, 1'000), 7);
}

// Crowded buckets and differences that hide from a short view of the hash:
// hundreds of equal hashes (one bucket per band holds them all), hashes that
// share every band but one with them, and hashes d + 1..d + 8 bits off whose
// differing bits come in pairs 32 apart (bit i and bit i + 32: a 32-bit fold
// of the two would cancel them), each found exactly as comparing every pair
// finds, for every band count and the distances 0, 6 and 16.
TEST(DuplicateIndexTest, CrowdedBucketsAndPairedBitsAsComparingEveryPair) {
  for (int d : {0, 6, 16}) {
    util::SplitMix64 rng(13 + d);
    const uint64_t base = rng.Next();
    std::vector<uint64_t> hashes;
    for (int i = 0; i < 900; ++i) {
      const uint64_t kind = rng.Below(5);
      uint64_t h = base;
      if (kind == 1) {  // base's bands but one (a run of 20 bits) at random
        const int from = static_cast<int>(rng.Below(45));
        h ^= (rng.Next() & ((uint64_t{1} << 20) - 1)) << from;
      } else if (kind == 2) {  // paired bits: 2 * pairs bits off, the halves' difference cancelling
        const int pairs = (d + 1) / 2 + static_cast<int>(rng.Below(5));
        uint64_t low = 0;
        while (__builtin_popcountll(low) < pairs) low |= uint64_t{1} << rng.Below(32);
        h ^= low | low << 32;
      } else if (kind == 3) {
        h = Flipped(rng, base, static_cast<int>(rng.Below(d + 2)));
      } else if (kind == 4) {
        h = rng.Next();
      }
      hashes.push_back(h);
    }
    std::vector<std::set<std::pair<uint32_t, int>>> want;
    uint64_t pairs = 0;
    for (size_t i = 0; i < hashes.size(); ++i) {
      want.push_back(BruteForce(hashes, i, d));
      pairs += want.back().size();
    }
    EXPECT_GT(pairs, 10'000u) << d;
    for (int bands = kMinSearchBands - 1; bands <= kMaxSearchBands; ++bands) {
      DuplicateIndex index(d, hashes.size(),
                           bands < kMinSearchBands ? DuplicateIndex::BandsFor(d, hashes.size()) : bands);
      for (size_t i = 0; i < hashes.size(); ++i) {
        std::vector<std::pair<uint32_t, int>> found;
        index.AppendNear(hashes[i], &found);
        std::sort(found.begin(), found.end());
        const std::set<std::pair<uint32_t, int>> distinct(found.begin(), found.end());
        ASSERT_EQ(distinct, want[i]) << "hash " << i << ", d " << d << ", bands " << index.bands();
        ASSERT_EQ(found.size(), want[i].size()) << "a pair reported twice, hash " << i << ", d " << d;
        index.Add(hashes[i]);
      }
    }
  }
}

// Ids given with Add (several hashes of one id, out of order) come back as
// given, once per hash within the distance; AppendNear of several hashes
// is the concatenation of each one's.
TEST(DuplicateIndexTest, GivenIdsAndSeveralQueriesAtOnce) {
  util::SplitMix64 rng(11);
  DuplicateIndex index(6, 1000);
  std::vector<uint64_t> hashes;
  for (int i = 0; i < 1000; ++i) {
    hashes.push_back(i % 2 ? Flipped(rng, hashes[rng.Below(hashes.size())], 3) : rng.Next());
    index.Add(hashes.back(), static_cast<uint32_t>(7 * (i / 3)));
  }
  std::vector<std::pair<uint32_t, int>> one_by_one, at_once;
  for (uint64_t h : hashes) index.AppendNear(h, &one_by_one);
  index.AppendNear(hashes.data(), hashes.size(), &at_once);
  std::sort(one_by_one.begin(), one_by_one.end());
  std::sort(at_once.begin(), at_once.end());
  EXPECT_EQ(at_once, one_by_one);
  std::vector<std::pair<uint32_t, int>> want;
  for (uint64_t q : hashes) {
    for (size_t j = 0; j < hashes.size(); ++j) {
      const int dist = image::HammingDistance(q, hashes[j]);
      if (dist <= 6) want.emplace_back(static_cast<uint32_t>(7 * (j / 3)), dist);
    }
  }
  std::sort(want.begin(), want.end());
  EXPECT_EQ(at_once, want);
  EXPECT_GT(want.size(), 1500u);
}

// Fingerprints (whole and centre hashes): the index finds every earlier
// fingerprint within FingerprintDistance, once, with that distance.
// Random fingerprints and copies (a copy's whole hashes are a region's of
// an earlier one, a few bits off; or the reverse), some with their detail
// hashes too far off: the index finds exactly what NearDistance over every
// pair finds, which confirms by the detail hashes.
TEST(FingerprintIndexTest, FindsWhatComparingEveryPairFinds) {
  util::SplitMix64 rng(7);
  std::vector<ImageFingerprint> prints;
  auto flipped = [&rng](uint64_t h) {
    for (uint64_t k = rng.Below(9); k > 0; --k) h ^= uint64_t{1} << rng.Below(64);
    return h;
  };
  auto detail_flipped = [&rng](image::DetailHash d) {
    for (uint64_t k = rng.Below(60); k > 0; --k) {
      const uint64_t bit = rng.Below(256);
      d[bit / 64] ^= uint64_t{1} << (bit % 64);
    }
    return d;
  };
  for (int i = 0; i < 1500; ++i) {
    ImageFingerprint f;
    for (int r = 0; r < image::kHashRegions; ++r) {
      f.hashes.phash[r] = rng.Next();
      for (uint64_t& w : f.hashes.detail[r]) w = rng.Next();
    }
    if (i > 10) {
      const ImageFingerprint& o = prints[rng.Below(prints.size())];
      const int r = static_cast<int>(rng.Below(image::kHashRegions));
      if (rng.Below(2) == 0) {  // a resized or cropped copy: whole near a region
        f.hashes.phash[0] = flipped(o.hashes.phash[r]);
        f.hashes.detail[0] = detail_flipped(o.hashes.detail[r]);
      } else {  // the reverse: the earlier one is the crop
        f.hashes.phash[r] = flipped(o.hashes.phash[0]);
        f.hashes.detail[r] = detail_flipped(o.hashes.detail[0]);
      }
    }
    if (i % 7 == 0) f.regions = 2, f.has_detail = false;  // an older entry's
    prints.push_back(f);
  }
  for (int d : {0, 4, 6, 9, 16}) {
    std::vector<std::vector<std::pair<uint32_t, int>>> want(prints.size());
    uint64_t pairs = 0, unconfirmed = 0;
    for (size_t i = 0; i < prints.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        const int dist = NearDistance(prints[i], prints[j], d);
        if (dist <= d) want[i].emplace_back(static_cast<uint32_t>(j), dist);
        ImageFingerprint loose = prints[j];
        loose.has_detail = false;
        unconfirmed += dist > d && NearDistance(prints[i], loose, d) <= d;
      }
      pairs += want[i].size();
    }
    EXPECT_GT(pairs, d == 0 ? 0u : 100u) << d;
    if (d >= 4) {
      EXPECT_GT(unconfirmed, 10u) << d;  // the detail hashes did turn some down
    }
    // Every band count in both indexes (0: chosen for the counts).
    for (int bands : {0, 3, 4, 5, 6, 7, 8, 10, 12, 16}) {
      if (d == 16 && bands > 0 && bands < 10) continue;  // millions of probes a query: slow
      FingerprintIndex index(d, prints.size(), bands);
      for (size_t i = 0; i < prints.size(); ++i) {
        std::vector<std::pair<uint32_t, int>> found;
        index.ForEachNear(prints[i], [&](uint32_t id, int distance) { found.emplace_back(id, distance); });
        ASSERT_EQ(found, want[i]) << "fingerprint " << i << ", d " << d << ", bands " << bands;  // by id, once each
        index.Add(prints[i]);
      }
    }
  }
  // Region against region is not a match; the detail hashes must agree.
  ImageFingerprint a, b;
  a.hashes.phash.fill(0);
  b.hashes.phash.fill(~uint64_t{0});
  a.hashes.phash[1] = b.hashes.phash[1] = 0xffffffff;
  EXPECT_EQ(NearDistance(a, b, 16), 65);
  b.hashes.phash[3] = 1;
  EXPECT_EQ(NearDistance(a, b, 16), 1);
  b.hashes.detail[3][2] = ~uint64_t{0};  // 64 detail bits apart: enough with equal tones
  EXPECT_EQ(NearDistance(a, b, 16), 1);
  b.hashes.tone[3].mean = 2 * 256;  // tones 2 levels apart: 30 bits at most
  EXPECT_EQ(NearDistance(a, b, 16), 65);
  b.hashes.tone[3].mean = 0;
  b.hashes.detail[3][1] = 1;  // 65 bits apart
  EXPECT_EQ(NearDistance(a, b, 16), 65);
  b.has_detail = false;
  EXPECT_EQ(NearDistance(a, b, 16), 1);
}

}  // namespace
}  // namespace libshard::convert
