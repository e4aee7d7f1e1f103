// The leak check's search (convert/duplicates.h): the batch search finds
// exactly what comparing every pair finds, the pairs and their TSV, the
// entries' fingerprints, and the
// accuracy that sets --leak-distance's default: copies (exact, JPEG quality
// 60, resized by 0.5-0.9) are found, 1,000 distinct synthetic pictures are
// not paired (real pictures: leak_accuracy_test.cc).
#include "libshard/convert/duplicates.h"

#include <gtest/gtest.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

#include "libshard/convert/duplicate_index.h"
#include "libshard/image/decode.h"
#include "libshard/image/encode.h"
#include "libshard/image/perceptual_hash.h"
#include "libshard/image/resize.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/util/random.h"
#include "photo_testutil.h"
#include "testutil.h"

namespace libshard::convert {
namespace {

using testing::SyntheticPhoto;

// Random hashes, key i.
ImageFingerprint RandomPrint(util::SplitMix64& rng, int i) {
  ImageFingerprint f;
  f.key_sha256 = std::to_string(i);
  f.has_colour = false;  // never plain (their tones are 0): the hash search's pictures
  for (int r = 0; r < image::kHashRegions; ++r) {
    f.hashes.phash[r] = rng.Next();
    for (uint64_t& w : f.hashes.detail[r]) w = rng.Next();
  }
  f.hashes.mirror = rng.Next();
  for (uint64_t& w : f.hashes.mirror_detail) w = rng.Next();
  f.has_mirror = true;
  return f;
}

// n random fingerprints, a third of them copies of an earlier one (its
// whole hash a region's of the original one bit off, or the reverse).
std::vector<DuplicateImage> WithCopies(uint64_t seed, int n) {
  util::SplitMix64 rng(seed);
  std::vector<DuplicateImage> images;
  for (int i = 0; i < n; ++i) {
    ImageFingerprint f = RandomPrint(rng, i);
    if (i > 0 && rng.Below(3) == 0) {
      const ImageFingerprint& o = images[rng.Below(images.size())].fingerprint;
      const int r = static_cast<int>(rng.Below(image::kHashRegions));
      const bool reverse = rng.Below(2) == 1;
      f.hashes.phash[reverse ? r : 0] = o.hashes.phash[reverse ? 0 : r] ^ (uint64_t{1} << rng.Below(64));
      f.hashes.detail[reverse ? r : 0] = o.hashes.detail[reverse ? 0 : r];
    }
    images.push_back({i % 3 ? "train" : "val", std::to_string(i), f});
  }
  return images;
}

// FindDuplicates (on TBB's threads) lists what
// NearDistance over every pair of distinct keys finds.
TEST(FindDuplicatesTest, FindsWhatComparingEveryPairFinds) {
  const std::vector<DuplicateImage> images = WithCopies(11, 800);
  const DuplicateReport r = FindDuplicates(images, kDefaultLeakDistance);
  std::set<std::tuple<uint32_t, uint32_t, int>> found, want;
  for (const DuplicatePair& p : r.pairs) found.emplace(p.a, p.b, p.distance);
  for (uint32_t b = 0; b < images.size(); ++b) {
    for (uint32_t a = 0; a < b; ++a) {
      const int d = NearDistance(images[a].fingerprint, images[b].fingerprint, kDefaultLeakDistance);
      if (d <= kDefaultLeakDistance) want.emplace(a, b, d);
    }
  }
  EXPECT_EQ(found, want);
  EXPECT_GT(want.size(), 150u);
  EXPECT_EQ(r.pairs.size(), found.size());  // each once
}

// Random fingerprints with planted copies (a region's hash of an earlier
// one, 0..d + 1 bits off, as the whole hash or the reverse; or the same
// detail with a whole hash at exactly d and d + 1 bits): every band count,
// at several sizes and distances, lists exactly what NearDistance over every
// pair finds, each pair once.
TEST(FindDuplicatesTest, EveryBandCountFindsWhatComparingEveryPairFinds) {
  for (int n : {60, 400, 1200}) {
    for (int d : {0, 2, 6, 9, 16}) {
      util::SplitMix64 rng(static_cast<uint64_t>(n * 100 + d));
      std::vector<DuplicateImage> images;
      for (int i = 0; i < n; ++i) {
        ImageFingerprint f = RandomPrint(rng, i);
        if (i > 0 && rng.Below(2) == 0) {
          const ImageFingerprint& o = images[rng.Below(images.size())].fingerprint;
          const int r = static_cast<int>(rng.Below(image::kHashRegions));
          const bool reverse = rng.Below(2) == 1;
          uint64_t h = o.hashes.phash[reverse ? 0 : r];
          // Distinct bits: exactly `flips` apart.
          const int flips = static_cast<int>(rng.Below(static_cast<uint64_t>(d) + 2));
          for (int k = 0; k < flips;) {
            const uint64_t bit = uint64_t{1} << rng.Below(64);
            if ((h ^ o.hashes.phash[reverse ? 0 : r]) & bit) continue;
            h ^= bit;
            ++k;
          }
          f.hashes.phash[reverse ? r : 0] = h;
          f.hashes.detail[reverse ? r : 0] = o.hashes.detail[reverse ? 0 : r];
        }
        if (i % 11 == 5) f.regions = 2, f.has_detail = false;  // an older entry's
        images.push_back({i % 3 ? "train" : "val", std::to_string(i), f});
      }
      std::set<std::tuple<uint32_t, uint32_t, int>> want;
      for (uint32_t b = 0; b < images.size(); ++b) {
        for (uint32_t a = 0; a < b; ++a) {
          const int dist = NearDistance(images[a].fingerprint, images[b].fingerprint, d);
          if (dist <= d) want.emplace(a, b, dist);
        }
      }
      EXPECT_GT(want.size(), static_cast<size_t>(n / 8)) << n << " " << d;
      for (int bands = kMinSearchBands; bands <= kMaxSearchBands; ++bands) {
        for (bool vector : {true, false}) {
          const DuplicateReport r = FindDuplicates(images, d, bands, vector);
          std::set<std::tuple<uint32_t, uint32_t, int>> found;
          for (const DuplicatePair& p : r.pairs) found.emplace(p.a, p.b, p.distance);
          ASSERT_EQ(found, want) << n << " images, distance " << d << ", " << bands << " bands, vector " << vector;
          ASSERT_EQ(r.pairs.size(), found.size()) << "a pair listed twice";
        }
      }
      EXPECT_EQ(FindDuplicates(images, d).pairs.size(), want.size());
    }
  }
  // The layout the search picks grows its bands' width with the count.
  EXPECT_GE(SearchBands(kDefaultLeakDistance, 1000), SearchBands(kDefaultLeakDistance, 1'000'000));
}

// The report is the same on one thread and on many (the pairs are sorted
// after the search, whatever thread found them).
TEST(FindDuplicatesTest, SameReportOnAnyThreadCount) {
  const std::vector<DuplicateImage> images = WithCopies(13, 20000);
  std::string one, many;
  tbb::task_arena(1).execute([&] { one = DuplicatesTsv(images, FindDuplicates(images, kDefaultLeakDistance)); });
  tbb::task_arena(8).execute([&] { many = DuplicatesTsv(images, FindDuplicates(images, kDefaultLeakDistance)); });
  EXPECT_EQ(one, many);
  EXPECT_GT(std::count(many.begin(), many.end(), '\n'), 5000);
}

DuplicateImage Img(const std::string& split, const std::string& file, const std::string& key, uint64_t phash) {
  ImageFingerprint f;
  f.key_sha256 = key;
  f.hashes.phash.fill(phash);  // every region as the whole: only whole-whole distances
  return {split, file, f};
}

TEST(FindDuplicatesTest, ExactGroupsNearPairsAndLeaks) {
  const std::string k1(64, '1'), k2(64, '2'), k3(64, '3'), k4(64, '4');
  const std::vector<DuplicateImage> images = {
      Img("train", "a.png", k1, 0x0),                // 0
      Img("train", "a copy.png", k1, 0x0),           // 1: exact, within
      Img("val", "a again.png", k1, 0x0),            // 2: exact, leak with 0
      Img("val", "a again too.png", k1, 0x0),        // 3: exact, within val (with 2)
      Img("train", "far.png", k2, ~uint64_t{0}),     // 4: nothing
      Img("test", "near a.png", k3, 0x7),            // 5: near (3 bits) 0 and 2: two leaks
      Img("test", "too far.png", k4, 0x1ff0000000),  // 6: 9 bits from 0: nothing at d 8
  };
  const DuplicateReport r = FindDuplicates(images, 8);
  EXPECT_EQ(r.leaks, 3u);
  EXPECT_EQ(r.within, 2u);
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(DuplicatesTsv(images, r),
            "kind\tdistance\tsplit_a\tfile_a\tsplit_b\tfile_b\n"
            "exact\t0\ttrain\ta.png\tval\ta again.png\n"
            "near\t3\ttrain\ta.png\ttest\tnear a.png\n"
            "near\t3\tval\ta again.png\ttest\tnear a.png\n"
            "exact\t0\ttrain\ta.png\ttrain\ta copy.png\n"
            "exact\t0\tval\ta again.png\tval\ta again too.png\n");
  EXPECT_EQ(FindDuplicates(images, 9).leaks, 5u);  // 6 joins 0 and 2 at 9 bits
}

TEST(FindDuplicatesTest, TabsInNamesDoNotBreakTheTsv) {
  const std::string k(64, 'a');
  const std::vector<DuplicateImage> images = {Img("train", "x\ty.png", k, 1), Img("val", "z\n.png", k, 1)};
  EXPECT_EQ(DuplicatesTsv(images, FindDuplicates(images, 0)),
            "kind\tdistance\tsplit_a\tfile_a\tsplit_b\tfile_b\nexact\t0\ttrain\tx y.png\tval\tz .png\n");
}

TEST(FingerprintTest, PixelKeyCoversShapeAndSamples) {
  const image::Image a = SyntheticPhoto(64, 48, 1);
  image::Image b = a;
  EXPECT_EQ(FingerprintOf(a).key_sha256, FingerprintOf(b).key_sha256);
  b.row(47)[191] ^= 1;  // one sample, one bit
  EXPECT_NE(FingerprintOf(a).key_sha256, FingerprintOf(b).key_sha256);
  // 64x48: the gray plane is the pixels, so the whole and centre hashes are
  // PerceptualHash's and CentrePerceptualHash's.
  EXPECT_EQ(FingerprintOf(a).hashes.phash[0], image::PerceptualHash(a));
  EXPECT_EQ(FingerprintOf(a).hashes.phash[1], image::CentrePerceptualHash(a));
  // The same bytes in another shape are other pixels.
  image::Image flat(48, 64, 3);
  std::copy(a.data(), a.data() + a.byte_size(), flat.data());
  EXPECT_NE(FingerprintOf(a).key_sha256, FingerprintOf(flat).key_sha256);
  EXPECT_EQ(FingerprintOf(a).key_sha256.size(), 64u);
}

// A copy mirrored left to right is found by its hashes of the mirror (its
// whole hashes are far from the original's: a flip changes the sign of
// every odd horizontal frequency), in either order and by the index too;
// an entry of an older libshard, without the mirror hashes, is not.
TEST(FindDuplicatesTest, MirroredCopiesAreFound) {
  const image::Image photo = SyntheticPhoto(320, 240, 11);
  const ImageFingerprint original = FingerprintOf(photo), mirrored = FingerprintOf(testing::MirrorOf(photo));
  EXPECT_GT(image::HammingDistance(original.hashes.phash[0], mirrored.hashes.phash[0]), 16);
  EXPECT_LE(NearDistance(original, mirrored, kDefaultLeakDistance), 2);
  EXPECT_EQ(NearDistance(original, mirrored, kDefaultLeakDistance),
            NearDistance(mirrored, original, kDefaultLeakDistance));
  ImageFingerprint older = mirrored;
  older.has_mirror = false;
  EXPECT_GT(NearDistance(original, older, kDefaultLeakDistance), kDefaultLeakDistance);
  const ImageFingerprint other = FingerprintOf(SyntheticPhoto(320, 240, 12));
  EXPECT_GT(NearDistance(other, mirrored, kDefaultLeakDistance), kDefaultLeakDistance);
  for (bool mirror_first : {false, true}) {
    std::vector<DuplicateImage> images = {{"train", "a.png", original}, {"train", "b.png", other}};
    images.insert(mirror_first ? images.begin() : images.end(), {"val", "a flipped.png", mirrored});
    const DuplicateReport r = FindDuplicates(images, kDefaultLeakDistance);
    ASSERT_EQ(r.pairs.size(), 1u) << mirror_first;
    EXPECT_EQ(r.leaks, 1u);
    EXPECT_EQ(images[r.pairs[0].a].file + " " + images[r.pairs[0].b].file,
              mirror_first ? "a flipped.png a.png" : "a.png a flipped.png");
  }
  std::vector<DuplicateImage> old = {{"train", "a.png", original}, {"val", "a flipped.png", older}};
  EXPECT_EQ(FindDuplicates(old, kDefaultLeakDistance).pairs.size(), 0u);
  FingerprintIndex index(kDefaultLeakDistance, 4);
  index.Add(original);
  index.Add(other);
  std::vector<uint32_t> near;
  index.ForEachNear(mirrored, [&](uint32_t id, int) { near.push_back(id); });
  EXPECT_EQ(near, std::vector<uint32_t>{0});
}

// A brighter or darker copy (every sample times g) of a picture of levels
// 40..200 is found for gains within kGainMin..kGainMax (and below
// kGainMin by the loose tones), by its mean and contrast scaled alike; past
// 1.3, or with the contrast scaled otherwise, it is not.
TEST(FindDuplicatesTest, BrighterAndDarkerCopiesAreFound) {
  image::Image photo = SyntheticPhoto(256, 192, 21);
  for (size_t i = 0; i < photo.byte_size(); ++i) photo.data()[i] = static_cast<uint8_t>(40 + photo.data()[i] * 5 / 8);
  auto scaled = [&](double gain, double contrast) {  // around the mean: contrast 1 is a plain gain
    image::Image out = photo;
    double mean = 0;
    for (size_t i = 0; i < photo.byte_size(); ++i) mean += photo.data()[i];
    mean /= static_cast<double>(photo.byte_size());
    for (size_t i = 0; i < out.byte_size(); ++i) {
      const double v = (mean + (photo.data()[i] - mean) * contrast) * gain;
      out.data()[i] = static_cast<uint8_t>(std::clamp(std::round(v), 0.0, 255.0));
    }
    return FingerprintOf(out);
  };
  const ImageFingerprint original = FingerprintOf(photo);
  for (double gain : {0.8, 0.87, 1.1, 1.15, 1.25}) {
    EXPECT_LE(NearDistance(original, scaled(gain, 1), kDefaultLeakDistance), kDefaultLeakDistance) << gain;
    EXPECT_LE(NearDistance(scaled(gain, 1), original, kDefaultLeakDistance), kDefaultLeakDistance) << gain;
  }
  EXPECT_GT(NearDistance(original, scaled(1.45, 1), kDefaultLeakDistance), kDefaultLeakDistance);
  EXPECT_GT(NearDistance(original, scaled(1.15, 1.3), kDefaultLeakDistance), kDefaultLeakDistance);  // not a gain
  EXPECT_GT(NearDistance(original, scaled(1.15, 0.75), kDefaultLeakDistance), kDefaultLeakDistance);
}

// Entries store every hash in binary (a 32-byte key, 400 bytes of region
// hashes); an entry of an older libshard has them in hex, or has no region
// and detail hashes (or no centre hash either): its fingerprint has the
// regions it has and no detail.
TEST(FingerprintTest, EntriesCarryEveryHash) {
  ImageFingerprint f = FingerprintOf(SyntheticPhoto(200, 150, 3));
  f.key_sha256 = "00ff" + std::string(60, 'a');
  ShardEntry e;
  e.set_file("train-00000-of-00001.tfrecord");
  e.set_split("train");
  *e.add_image_hashes() = ImageHashOf("a.png", f);
  const ImageHash& stored = e.image_hashes(0);
  EXPECT_EQ(stored.pixels_key().size(), 32u);
  EXPECT_EQ(stored.pixels_key().substr(0, 3), std::string("\x00\xff\xaa", 3));
  EXPECT_EQ(stored.regions().size(), 400u);
  EXPECT_EQ(stored.region_tones().size(), 40u);
  EXPECT_TRUE(stored.pixels_sha256().empty() && stored.phash().empty() && stored.detail_hashes().empty());
  EXPECT_EQ(stored.colour().size(), 3u);
  EXPECT_EQ(stored.mirror().size(), 40u);
  EXPECT_LT(stored.ByteSizeLong(), 537u);
  EXPECT_EQ(static_cast<uint8_t>(stored.mirror()[0]), f.hashes.mirror & 0xff);
  EXPECT_EQ(static_cast<uint8_t>(stored.mirror()[8]), f.hashes.mirror_detail[0] & 0xff);
  EXPECT_EQ(static_cast<uint8_t>(stored.mirror()[39]), f.hashes.mirror_detail[3] >> 56);
  // Little-endian words: the whole hash's low byte first, the detail after the ten 64-bit hashes.
  EXPECT_EQ(static_cast<uint8_t>(stored.regions()[0]), f.hashes.phash[0] & 0xff);
  EXPECT_EQ(static_cast<uint8_t>(stored.regions()[79]), f.hashes.phash[9] >> 56);
  EXPECT_EQ(static_cast<uint8_t>(stored.regions()[80]), f.hashes.detail[0][0] & 0xff);
  // Tones: per region the mean, then the contrast, 16-bit little-endian.
  EXPECT_EQ(static_cast<uint8_t>(stored.region_tones()[0]), f.hashes.tone[0].mean & 0xff);
  EXPECT_EQ(static_cast<uint8_t>(stored.region_tones()[1]), f.hashes.tone[0].mean >> 8);
  EXPECT_EQ(static_cast<uint8_t>(stored.region_tones()[39]), f.hashes.tone[9].contrast >> 8);
  ImageFingerprint partial = f;
  partial.regions = 2;
  partial.has_detail = false;
  ImageHash old = ImageHashOf("b.png", partial);  // an older entry's, rewritten as it was
  EXPECT_TRUE(old.pixels_key().empty() && old.regions().empty());
  *e.add_image_hashes() = old;
  old.clear_centre_phash();
  *e.add_image_hashes() = old;
  std::vector<DuplicateImage> images;
  ASSERT_TRUE(AppendDuplicateImages(e, &images).ok());
  ASSERT_EQ(images.size(), 3u);
  EXPECT_EQ(images[0].fingerprint.key_sha256, f.key_sha256);
  EXPECT_EQ(images[0].fingerprint.hashes.phash, f.hashes.phash);
  EXPECT_EQ(images[0].fingerprint.hashes.detail, f.hashes.detail);
  EXPECT_EQ(images[0].fingerprint.regions, image::kHashRegions);
  EXPECT_TRUE(images[0].fingerprint.has_detail);
  EXPECT_TRUE(images[0].fingerprint.has_tone);
  EXPECT_TRUE(images[0].fingerprint.has_mirror);
  EXPECT_EQ(images[0].fingerprint.hashes.mirror, f.hashes.mirror);
  EXPECT_EQ(images[0].fingerprint.hashes.mirror_detail, f.hashes.mirror_detail);
  for (int r = 0; r < image::kHashRegions; ++r) {
    EXPECT_EQ(images[0].fingerprint.hashes.tone[r].mean, f.hashes.tone[r].mean);
    EXPECT_EQ(images[0].fingerprint.hashes.tone[r].contrast, f.hashes.tone[r].contrast);
  }
  EXPECT_EQ(images[1].fingerprint.regions, 2);
  EXPECT_FALSE(images[1].fingerprint.has_mirror);
  EXPECT_FALSE(images[1].fingerprint.has_detail);
  EXPECT_FALSE(images[1].fingerprint.has_tone);
  EXPECT_EQ(images[1].fingerprint.hashes.phash[1], f.hashes.phash[1]);
  EXPECT_EQ(images[2].fingerprint.regions, 1);
  EXPECT_EQ(NearDistance(images[0].fingerprint, images[1].fingerprint, 0), 0);
  e.mutable_image_hashes(1)->set_centre_phash("fedcba987654321g");
  const Status bad = AppendDuplicateImages(e, &images);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("train-00000-of-00001.tfrecord: image hash 1"), std::string::npos) << bad.message();
  // Mirrored hashes of another size than 40 bytes: refused by name.
  ShardEntry cut;
  cut.set_file("val-00000-of-00001.tfrecord");
  *cut.add_image_hashes() = ImageHashOf("a.png", f);
  cut.mutable_image_hashes(0)->mutable_mirror()->pop_back();
  std::vector<DuplicateImage> none;
  const Status short_mirror = AppendDuplicateImages(cut, &none);
  EXPECT_EQ(short_mirror.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(short_mirror.message().find("val-00000-of-00001.tfrecord: image hash 0 has 39 bytes of mirrored hashes, "
                                        "not 40"),
            std::string::npos)
      << short_mirror.message();
}

// An entry of the two-stage check before the binary fields: every hash in
// hex (golden: the words as written then), read as the binary form is.
TEST(FingerprintTest, OldHexEntriesAreRead) {
  ImageHash h;
  h.set_path("old.png");
  h.set_pixels_sha256("ABCDEF" + std::string(58, '0'));
  h.set_phash("0123456789abcdef");
  h.set_centre_phash("fedcba9876543210");
  std::string regions, detail;
  for (int r = 2; r < image::kHashRegions; ++r) regions += "000000000000000" + std::to_string(r);
  for (int w = 0; w < 4 * image::kHashRegions; ++w) detail += w % 2 ? "8000000000000001" : "00000000000000ff";
  h.set_region_phashes(regions);
  h.set_detail_hashes(detail);
  ShardEntry e;
  e.set_file("val-00000-of-00001.tfrecord");
  *e.add_image_hashes() = h;
  std::vector<DuplicateImage> images;
  ASSERT_TRUE(AppendDuplicateImages(e, &images).ok());
  const ImageFingerprint& f = images[0].fingerprint;
  EXPECT_EQ(f.key_sha256, "abcdef" + std::string(58, '0'));
  EXPECT_EQ(f.hashes.phash[0], 0x0123456789abcdefu);
  EXPECT_EQ(f.hashes.phash[1], 0xfedcba9876543210u);
  for (int r = 2; r < image::kHashRegions; ++r) EXPECT_EQ(f.hashes.phash[r], static_cast<uint64_t>(r));
  const image::DetailHash want = {0xff, 0x8000000000000001u, 0xff, 0x8000000000000001u};
  for (const image::DetailHash& d : f.hashes.detail) EXPECT_EQ(d, want);
  EXPECT_EQ(f.regions, image::kHashRegions);
  EXPECT_TRUE(f.has_detail);
  EXPECT_FALSE(f.has_tone);
  // Written again, it is the binary form (without tones: it has none), and
  // reads back the same.
  ShardEntry again;
  *again.add_image_hashes() = ImageHashOf("old.png", f);
  EXPECT_EQ(again.image_hashes(0).regions().size(), 400u);
  EXPECT_TRUE(again.image_hashes(0).region_tones().empty());
  std::vector<DuplicateImage> back;
  ASSERT_TRUE(AppendDuplicateImages(again, &back).ok());
  EXPECT_EQ(back[0].fingerprint.key_sha256, f.key_sha256);
  EXPECT_EQ(back[0].fingerprint.hashes.phash, f.hashes.phash);
  EXPECT_EQ(back[0].fingerprint.hashes.detail, f.hashes.detail);
  EXPECT_FALSE(back[0].fingerprint.has_tone);
  for (const char* bad_detail : {"12", ""}) {
    ShardEntry b = e;
    b.mutable_image_hashes(0)->set_detail_hashes(bad_detail);
    const Status bad = AppendDuplicateImages(b, &images);
    EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(bad.message().find("val-00000-of-00001.tfrecord: image hash 0"), std::string::npos) << bad.message();
  }
}

// SHARD.json's entries (the shared manifest printer, manifest::ToJson): an
// image's entry names only the fields it has (no empty hex fields beside
// the binary ones), reads back the same, and an entry of an older libshard
// that wrote every field (empty ones too) is still read.
TEST(FingerprintJsonTest, EntriesLeaveOutEmptyFieldsAndOldOnesStillRead) {
  ImageFingerprint f = FingerprintOf(SyntheticPhoto(160, 120, 3));
  ShardEntry e;
  e.set_file("train-00000-of-00001.tfrecord");
  e.set_split("train");
  for (int i = 0; i < 100; ++i) *e.add_image_hashes() = ImageHashOf("photos/" + std::to_string(1000 + i) + ".jpg", f);
  const std::string json = manifest::ToJson(e);
  ShardEntry none = e;
  none.clear_image_hashes();
  const double per_image = static_cast<double>(json.size() - manifest::ToJson(none).size()) / 100;
  std::printf("SHARD.json bytes per image entry: %.1f\n", per_image);
  for (const char* field : {"pixels_sha256", "\"phash\"", "centre_phash", "region_phashes", "detail_hashes"}) {
    EXPECT_EQ(json.find(field), std::string::npos) << field;
  }
  // path, key, regions, tones, colour, mirror (base64) and the JSON around them: 830
  EXPECT_LT(per_image, 850);
  ShardEntry back;
  ASSERT_TRUE(manifest::FromJson(json, &back).ok());
  std::vector<DuplicateImage> images;
  ASSERT_TRUE(AppendDuplicateImages(back, &images).ok());
  ASSERT_EQ(images.size(), 100u);
  EXPECT_EQ(images[99].file, "photos/1099.jpg");
  EXPECT_EQ(images[99].fingerprint.key_sha256, f.key_sha256);
  EXPECT_EQ(images[99].fingerprint.hashes.phash, f.hashes.phash);
  EXPECT_EQ(images[99].fingerprint.hashes.detail, f.hashes.detail);
  // An older libshard's entry: every field written, the hex ones empty.
  const ImageHash& h = back.image_hashes(0);
  std::string old_json = json.substr(0, json.find("\"image_hashes\""));
  std::string key64, regions64;
  {
    const size_t k = json.find("\"pixels_key\": \"") + 15, r = json.find("\"regions\": \"") + 12;
    key64 = json.substr(k, json.find('"', k) - k);
    regions64 = json.substr(r, json.find('"', r) - r);
  }
  old_json +=
      "\"image_hashes\": [{\"path\": \"old.jpg\", \"pixels_sha256\": \"\", \"phash\": \"\", \"centre_phash\": \"\", "
      "\"region_phashes\": \"\", \"detail_hashes\": \"\", \"pixels_key\": \"" +
      key64 + "\", \"regions\": \"" + regions64 + "\"}]}";
  ShardEntry old;
  ASSERT_TRUE(manifest::FromJson(old_json, &old).ok()) << old_json;
  images.clear();
  ASSERT_TRUE(AppendDuplicateImages(old, &images).ok());
  ASSERT_EQ(images.size(), 1u);
  EXPECT_EQ(images[0].file, "old.jpg");
  EXPECT_EQ(images[0].fingerprint.key_sha256, f.key_sha256);
  EXPECT_EQ(images[0].fingerprint.hashes.phash, f.hashes.phash);
  EXPECT_EQ(images[0].fingerprint.hashes.detail, f.hashes.detail);
  EXPECT_EQ(h.pixels_key().size(), 32u);
  // Binary fields of the wrong size read from JSON are still refused, naming the shard.
  const std::string cut = old_json.replace(old_json.find(key64), key64.size(), key64.substr(0, 40));
  ASSERT_TRUE(manifest::FromJson(cut, &old).ok());
  images.clear();
  const Status st = AppendDuplicateImages(old, &images);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("shard train-00000-of-00001.tfrecord: image hash 0 has a 30-byte key"), std::string::npos)
      << st.message();
}

// Binary fields of any other size (cut, grown, one missing) are refused,
// naming the shard, the image and the sizes; nothing is appended.
TEST(FingerprintTest, DamagedBinaryEntriesAreRefused) {
  ImageFingerprint f = FingerprintOf(SyntheticPhoto(120, 90, 4));
  ShardEntry e;
  e.set_file("test-00003-of-00004.tfrecord");
  *e.add_image_hashes() = ImageHashOf("a.png", f);
  *e.add_image_hashes() = ImageHashOf("b.png", f);
  const ImageHash good = e.image_hashes(1);
  std::vector<std::pair<std::string, std::string>> damaged = {
      {good.pixels_key().substr(1), good.regions()},
      {good.pixels_key() + "x", good.regions()},
      {good.pixels_key(), good.regions().substr(0, 399)},
      {good.pixels_key(), good.regions() + std::string(8, '\0')},
      {"", good.regions()},
      {good.pixels_key(), ""},
  };
  for (const auto& [key, regions] : damaged) {
    ShardEntry bad = e;
    bad.mutable_image_hashes(1)->set_pixels_key(key);
    bad.mutable_image_hashes(1)->set_regions(regions);
    bad.mutable_image_hashes(1)->set_phash("0123456789abcdef");  // hex beside does not rescue it
    std::vector<DuplicateImage> images;
    const Status st = AppendDuplicateImages(bad, &images);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << key.size() << " " << regions.size();
    EXPECT_NE(st.message().find("shard test-00003-of-00004.tfrecord: image hash 1 has a " + std::to_string(key.size()) +
                                "-byte key and " + std::to_string(regions.size()) +
                                " bytes of region hashes, not 32 and 400"),
              std::string::npos)
        << st.message();
  }
}

// Tones of another size than 40 bytes, or tones without the binary
// hashes, are refused; a binary entry without tones (written before them)
// is read with has_tone false.
TEST(FingerprintTest, DamagedTonesAreRefused) {
  const ImageFingerprint f = FingerprintOf(SyntheticPhoto(120, 90, 5));
  ShardEntry e;
  e.set_file("val-00001-of-00002.tfrecord");
  *e.add_image_hashes() = ImageHashOf("a.png", f);
  const std::string tones = e.image_hashes(0).region_tones();
  ASSERT_EQ(tones.size(), 40u);
  for (const std::string& bad_tones : {tones.substr(0, 39), tones + "x", std::string(80, '\0')}) {
    ShardEntry bad = e;
    bad.mutable_image_hashes(0)->set_region_tones(bad_tones);
    std::vector<DuplicateImage> images;
    const Status st = AppendDuplicateImages(bad, &images);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad_tones.size();
    EXPECT_NE(st.message().find("shard val-00001-of-00002.tfrecord: image hash 0 has " +
                                std::to_string(bad_tones.size()) + " bytes of region tones, not 40"),
              std::string::npos)
        << st.message();
    EXPECT_TRUE(images.empty());
  }
  ShardEntry alone;  // tones without the key and the hashes
  alone.set_file("val-00001-of-00002.tfrecord");
  alone.add_image_hashes()->set_region_tones(tones);
  std::vector<DuplicateImage> images;
  const Status lone = AppendDuplicateImages(alone, &images);
  EXPECT_EQ(lone.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(lone.message().find("shard val-00001-of-00002.tfrecord: image hash 0 has a 0-byte key and 0 bytes of "
                                "region hashes, not 32 and 400"),
            std::string::npos)
      << lone.message();
  ShardEntry before = e;  // written before the tones
  before.mutable_image_hashes(0)->clear_region_tones();
  ASSERT_TRUE(AppendDuplicateImages(before, &images).ok());
  ASSERT_EQ(images.size(), 1u);
  EXPECT_FALSE(images[0].fingerprint.has_tone);
  EXPECT_EQ(images[0].fingerprint.hashes.detail, f.hashes.detail);
}

image::Image Decoded(const std::string& bytes) {
  StatusOr<image::Image> img = image::DecodeImage(bytes, image::DecodeOptions{});
  EXPECT_TRUE(img.ok()) << img.status();
  return img.ok() ? std::move(*img) : image::Image();
}

image::Image Jpeg60(const image::Image& img) {
  image::JpegEncodeOptions o;
  o.quality = 60;
  return Decoded(*image::EncodeJpeg(img, o));
}

image::Image Scaled(const image::Image& img, double f) {
  return *image::Resize(img, static_cast<int>(img.width() * f), static_cast<int>(img.height() * f),
                        image::Filter::kBilinear);
}

// `img` with every sample mapped to gain * v + offset (gray levels, no
// clipping for the values used here).
image::Image Toned(const image::Image& img, double gain, double offset) {
  image::Image out = img;
  for (size_t i = 0; i < out.byte_size(); ++i) {
    out.data()[i] = static_cast<uint8_t>(std::clamp(std::lround(gain * img.data()[i] + offset), 0l, 255l));
  }
  return out;
}

// The hashes keep only the layout: a picture's gray levels scaled or
// shifted hash (nearly) alike, as smooth pictures of one layout do (the
// wallpaper corpus' false pairs). The tones tell them apart; copies (JPEG
// quality 60, resized, 5 % cropped) keep theirs, and an entry without tones
// (older) is confirmed by the hashes alone.
TEST(ConfirmationTest, TonesTellApartPicturesTheHashesCannot) {
  const image::Image photo = SyntheticPhoto(320, 240, 21);
  const ImageFingerprint base = FingerprintOf(Toned(photo, 0.5, 64));  // levels 64..191
  // Brighter by 8 and 40 levels; contrast x0.75 and x1.5 about level 128.
  for (const auto& [gain, offset] : {std::pair{0.5, 72.0}, {0.5, 104.0}, {0.375, 80.0}, {0.75, 32.0}}) {
    ImageFingerprint other = FingerprintOf(Toned(photo, gain, offset));
    other.has_tone = false;  // as an older entry: the hashes alone pair them
    EXPECT_LE(NearDistance(base, other, kDefaultLeakDistance), kDefaultLeakDistance) << gain;
    other.has_tone = true;
    EXPECT_GT(NearDistance(base, other, kDefaultLeakDistance), kDefaultLeakDistance) << gain << " " << offset;
    EXPECT_GT(NearDistance(other, base, kDefaultLeakDistance), kDefaultLeakDistance) << gain << " " << offset;
  }
  const image::Image toned = Toned(photo, 0.5, 64);
  for (const image::Image& copy :
       {Jpeg60(toned), Scaled(toned, 0.6), Toned(toned, 1, 2), testing::CropOf(toned, 8, 6, 304, 228)}) {
    EXPECT_LE(NearDistance(base, FingerprintOf(copy), kDefaultLeakDistance), kDefaultLeakDistance);
  }
}

image::Image Plain(int width, int height, std::array<uint8_t, 3> rgb) {
  image::Image img(width, height, 3);
  for (size_t i = 0; i < img.byte_size(); ++i) img.data()[i] = rgb[i % 3];
  return img;
}

// Plain pictures of one brightness hash and tone alike whatever their
// colour (the fingerprints are of luma): the mean colour tells them apart,
// while a plain picture's copies (JPEG quality 60, resized, gray ones) keep
// theirs; an entry without colour (older) pairs them by the tones as before;
// pictures with detail are not affected.
TEST(ConfirmationTest, ColourTellsApartPlainPicturesOfOneBrightness) {
  // Luma (77 R + 150 G + 29 B) / 256: 124.4, 125.5, 124.0.
  const ImageFingerprint orange = FingerprintOf(Plain(96, 64, {200, 100, 50}));
  for (const std::array<uint8_t, 3> rgb : {std::array<uint8_t, 3>{80, 150, 120}, {124, 124, 124}}) {
    ImageFingerprint other = FingerprintOf(Plain(96, 64, rgb));
    EXPECT_GT(NearDistance(orange, other, kDefaultLeakDistance), kDefaultLeakDistance) << int{rgb[0]};
    EXPECT_GT(NearDistance(other, orange, kDefaultLeakDistance), kDefaultLeakDistance) << int{rgb[0]};
  }
  ImageFingerprint older = FingerprintOf(Plain(96, 64, {80, 150, 120}));
  older.has_colour = false;  // as an older entry: the luma alone, which pairs them
  EXPECT_LE(NearDistance(orange, older, kDefaultLeakDistance), kDefaultLeakDistance);
  EXPECT_EQ(orange.colour, (std::array<uint8_t, 3>{200, 100, 50}));
  const image::Image plain = Plain(96, 64, {200, 100, 50});
  for (const image::Image& copy : {Jpeg60(plain), Scaled(plain, 0.5), Plain(40, 30, {202, 99, 53})}) {
    EXPECT_LE(NearDistance(orange, FingerprintOf(copy), kDefaultLeakDistance), kDefaultLeakDistance);
  }
  image::Image gray(50, 40, 1);
  std::fill(gray.data(), gray.data() + gray.byte_size(), uint8_t{124});
  EXPECT_EQ(FingerprintOf(gray).colour, (std::array<uint8_t, 3>{124, 124, 124}));
  image::Image deep(30, 20, 4, 16);  // RGBA, 16-bit samples: their high bytes, alpha left out
  uint16_t* sample = reinterpret_cast<uint16_t*>(deep.data());
  for (size_t i = 0; i < deep.byte_size() / 2; ++i)
    sample[i] = std::array<uint16_t, 4>{0xC8FF, 0x6400, 0x3280, 0}[i % 4];
  EXPECT_EQ(FingerprintOf(deep).colour, (std::array<uint8_t, 3>{200, 100, 50}));
  EXPECT_LE(NearDistance(FingerprintOf(gray), FingerprintOf(Plain(96, 64, {124, 124, 124})), kDefaultLeakDistance),
            kDefaultLeakDistance);
  // A photo and its copy with the colours moved apart: not plain, so the colour is not compared.
  const image::Image photo = SyntheticPhoto(200, 150, 8);
  const ImageFingerprint a = FingerprintOf(photo);
  ImageFingerprint b = a;
  b.colour[0] = static_cast<uint8_t>(a.colour[0] / 2);
  EXPECT_EQ(NearDistance(a, b, kDefaultLeakDistance), 0);
}

// Issue 46 item 10: a plain picture pairs only with a plain or nearly
// plain one of its colour; a picture with detail is not its copy, whatever
// their hashes and tones say.
TEST(ConfirmationTest, PlainPicturesPairOnlyWithPlainOnesOfTheirColour) {
  ImageFingerprint plain;
  plain.hashes.tone.fill({128 * 256, 100});
  plain.colour = {120, 130, 140};
  ImageFingerprint nearly = plain;
  nearly.hashes.tone.fill({128 * 256, 300});  // the tones agree: contrasts within one gray level
  nearly.colour = {124, 126, 144};
  EXPECT_TRUE(IsPlain(plain));
  EXPECT_FALSE(IsPlain(nearly));
  EXPECT_TRUE(IsNearlyPlain(nearly));
  EXPECT_EQ(NearDistance(plain, nearly, 0), 0);
  nearly.colour[2] = 145;  // 5 levels off
  EXPECT_GT(NearDistance(plain, nearly, kDefaultLeakDistance), kDefaultLeakDistance);
  ImageFingerprint detailed = plain;  // the same hashes, but more contrast
  detailed.hashes.tone.fill({128 * 256, kNearlyPlainContrast + 1});
  EXPECT_GT(NearDistance(plain, detailed, kDefaultLeakDistance), kDefaultLeakDistance);
  EXPECT_GT(NearDistance(detailed, plain, kDefaultLeakDistance), kDefaultLeakDistance);
  nearly.colour[2] = 144;
  EXPECT_EQ(NearDistance(nearly, detailed, 0), 0);  // neither plain: the tones decide (contrasts 300, 513)
  detailed.has_colour = false;  // an older entry: paired with a plain one by the hashes and tones, as before
  EXPECT_FALSE(IsPlain(detailed));
  detailed.hashes.tone.fill({128 * 256, 300});
  EXPECT_EQ(NearDistance(plain, detailed, 0), 0);
}

// Plain fingerprints (no detail, one hash, a random colour, a contrast up to
// max_contrast; a quarter copies of an earlier one, their colour up to 5
// levels off), key i.
std::vector<DuplicateImage> PlainPictures(uint64_t seed, int n, int max_contrast) {
  util::SplitMix64 rng(seed);
  std::vector<DuplicateImage> images;
  for (int i = 0; i < n; ++i) {
    ImageFingerprint f;
    f.key_sha256 = std::to_string(i);
    const uint16_t contrast = static_cast<uint16_t>(rng.Below(static_cast<uint64_t>(max_contrast) + 1));
    f.hashes.tone.fill({static_cast<uint16_t>(rng.Below(65536)), contrast});
    f.hashes.phash.fill(rng.Below(4) == 0 ? uint64_t{1} << rng.Below(64) : 0);  // all alike, or one bit off
    for (uint8_t& c : f.colour) c = static_cast<uint8_t>(rng.Below(256));
    if (i > 0 && rng.Below(4) == 0) {  // a copy: the colour a few levels off, the tone as the original's
      const ImageFingerprint& o = images[rng.Below(images.size())].fingerprint;
      for (int c = 0; c < 3; ++c) {
        f.colour[c] = static_cast<uint8_t>(std::clamp<int>(o.colour[c] + static_cast<int>(rng.Below(11)) - 5, 0, 255));
      }
      f.hashes.tone = o.hashes.tone;
    }
    images.push_back({i % 3 ? "train" : "val", std::to_string(i), f});
  }
  return images;
}

// Issue 46 item 10: plain pictures all hash alike, so the hash search
// compared every pair of them (10,000: about a minute); they are paired by
// colour now, and still exactly what comparing every pair finds.
TEST(FindDuplicatesTest, PlainPicturesArePairedByColourAsComparingEveryPairDoes) {
  // Plain, nearly plain (found by both searches) and not quite plain ones.
  const std::vector<DuplicateImage> images = PlainPictures(5, 3000, kNearlyPlainContrast + 64);
  std::set<std::tuple<uint32_t, uint32_t, int>> want, found;
  for (uint32_t b = 0; b < images.size(); ++b) {
    for (uint32_t a = 0; a < b; ++a) {
      const int d = NearDistance(images[a].fingerprint, images[b].fingerprint, kDefaultLeakDistance);
      if (d <= kDefaultLeakDistance) want.emplace(a, b, d);
    }
  }
  const DuplicateReport r = FindDuplicates(images, kDefaultLeakDistance);
  for (const DuplicatePair& p : r.pairs) found.emplace(p.a, p.b, p.distance);
  EXPECT_EQ(found, want);
  EXPECT_EQ(r.pairs.size(), found.size());
  EXPECT_GT(want.size(), 100u);
  EXPECT_FALSE(r.search_cut);
  // With older entries among them (no colour: paired by the hashes and
  // tones), still what comparing every pair finds.
  std::vector<DuplicateImage> mixed(images.begin(), images.begin() + 1000);
  for (size_t i = 7; i < mixed.size(); i += 50) mixed[i].fingerprint.has_colour = false;
  want.clear();
  found.clear();
  for (uint32_t b = 0; b < mixed.size(); ++b) {
    for (uint32_t a = 0; a < b; ++a) {
      const int d = NearDistance(mixed[a].fingerprint, mixed[b].fingerprint, kDefaultLeakDistance);
      if (d <= kDefaultLeakDistance) want.emplace(a, b, d);
    }
  }
  for (const DuplicatePair& p : FindDuplicates(mixed, kDefaultLeakDistance).pairs) found.emplace(p.a, p.b, p.distance);
  EXPECT_EQ(found, want);
  // 100,000 of them: the work is the pairs in neighbouring colour cells, not
  // every pair (5 * 10^9 before).
  const DuplicateReport big = FindDuplicates(PlainPictures(6, 100000, kPlainContrast), kDefaultLeakDistance);
  EXPECT_GT(big.within + big.leaks, 5000u);
  EXPECT_FALSE(big.search_cut);
}

// Issue 46 item 9: copies whose pixels agree but whose bytes do not (a
// JPEG's metadata) have one fingerprint: a group per split as for exact
// copies, each copy listed once with its split's first, the firsts with
// each other (4,500 copies were 10 million pairs, 392 MB of duplicates.tsv
// and 959 MB of memory); the headline counts images, and the largest groups
// are named.
TEST(FindDuplicatesTest, CopiesWithOneFingerprintAreOneGroup) {
  util::SplitMix64 rng(3);
  const ImageFingerprint photo = RandomPrint(rng, 0);
  std::vector<DuplicateImage> images;
  for (int i = 0; i < 20000; ++i) {
    ImageFingerprint f = photo;
    f.key_sha256 = "other bytes " + std::to_string(i % 19000);  // and 1,000 of them with equal bytes too
    images.push_back({i % 10 == 9 ? "val" : "train", "copy" + std::to_string(i), f});
  }
  for (int i = 0; i < 50; ++i) images.push_back({"train", "distinct" + std::to_string(i), RandomPrint(rng, i + 1)});
  const DuplicateReport r = FindDuplicates(images, kDefaultLeakDistance);
  EXPECT_EQ(r.within, 20000u - 2);  // each copy once with its split's first
  EXPECT_EQ(r.leaks, 1u);           // the two firsts
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.pairs.size(), 20000u - 1);
  EXPECT_EQ(r.pairs[0].a, 0u);
  EXPECT_EQ(r.pairs[0].b, 9u);
  EXPECT_FALSE(r.pairs[0].exact);
  EXPECT_EQ(r.leaked_images, 20000u);
  EXPECT_EQ(r.leaked_by_split.at("train"), 18000u);
  EXPECT_EQ(r.leaked_by_split.at("val"), 2000u);
  ASSERT_EQ(r.largest.size(), 2u);
  EXPECT_EQ(r.largest[0].first, 0u);
  EXPECT_EQ(r.largest[0].copies, 18000u);
  EXPECT_EQ(r.largest[1].first, 9u);
  EXPECT_EQ(r.largest[1].copies, 2000u);
  // Equal bytes stay "exact": copy 19000 is copy 0's bytes, in train.
  bool exact_seen = false;
  for (const DuplicatePair& p : r.pairs) exact_seen |= p.exact && p.a == 0 && p.b == 19000;
  EXPECT_TRUE(exact_seen);
}

// Issue 13 of 46's headline: nine val copies of nine train images (one
// exact group each side) are one pair but 18 leaked images.
TEST(FindDuplicatesTest, HeadlineCountsImagesNotGroups) {
  const std::string k(64, '9');
  std::vector<DuplicateImage> images;
  for (int i = 0; i < 9; ++i) images.push_back(Img("train", "t" + std::to_string(i), k, 0x55));
  for (int i = 0; i < 9; ++i) images.push_back(Img("val", "v" + std::to_string(i), k, 0x55));
  images.push_back(Img("val", "alone", std::string(64, '8'), ~uint64_t{0x55}));
  const DuplicateReport r = FindDuplicates(images, kDefaultLeakDistance);
  EXPECT_EQ(r.leaks, 1u);
  EXPECT_EQ(r.within, 16u);
  EXPECT_EQ(r.leaked_images, 18u);
  EXPECT_EQ(r.leaked_by_split.at("train"), 9u);
  EXPECT_EQ(r.leaked_by_split.at("val"), 9u);
}

// Issue 46 item 9: the pairs the search holds are bounded (pictures that
// share hash values and confirm each other: every pair of 3,000 is 4.5
// million): past kMaxSearchPairs the search stops and says so, and
// duplicates.tsv lists kMaxDuplicatePairs.
TEST(FindDuplicatesTest, PairsHeldAreBounded) {
  util::SplitMix64 rng(8);
  const ImageFingerprint photo = RandomPrint(rng, 0);
  std::vector<DuplicateImage> images;
  for (int i = 0; i < 3000; ++i) {
    ImageFingerprint f = photo;
    f.key_sha256 = std::to_string(i);
    f.hashes.detail[0][0] ^= uint64_t{1} << (i % 64);  // one fingerprint each, all within the distance
    f.hashes.detail[0][1] ^= uint64_t{1} << (i / 64 % 64);
    images.push_back({"train", std::to_string(i), f});
  }
  const DuplicateReport r = FindDuplicates(images, kDefaultLeakDistance);
  EXPECT_TRUE(r.search_cut);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(r.pairs.size(), kMaxDuplicatePairs);
  EXPECT_GE(r.within, kMaxDuplicatePairs);
  EXPECT_LE(r.within, kMaxSearchPairs);
}

// The colour is kept in the entry (3 bytes) and read back; an entry without
// it reads with has_colour false; any other size is refused.
TEST(FingerprintTest, ColourIsKeptAndDamagedColourRefused) {
  const ImageFingerprint f = FingerprintOf(Plain(64, 48, {10, 200, 30}));
  ShardEntry e;
  e.set_file("train-00000-of-00001.tfrecord");
  *e.add_image_hashes() = ImageHashOf("a.png", f);
  EXPECT_EQ(e.image_hashes(0).colour(), std::string("\x0a\xc8\x1e", 3));
  std::vector<DuplicateImage> images;
  ASSERT_TRUE(AppendDuplicateImages(e, &images).ok());
  ASSERT_EQ(images.size(), 1u);
  EXPECT_TRUE(images[0].fingerprint.has_colour);
  EXPECT_EQ(images[0].fingerprint.colour, f.colour);
  ShardEntry before = e;
  before.mutable_image_hashes(0)->clear_colour();
  images.clear();
  ASSERT_TRUE(AppendDuplicateImages(before, &images).ok());
  EXPECT_FALSE(images[0].fingerprint.has_colour);
  for (const std::string& bad_colour : {std::string("\x01\x02"), std::string("\x01\x02\x03\x04")}) {
    ShardEntry bad = e;
    bad.mutable_image_hashes(0)->set_colour(bad_colour);
    images.clear();
    const Status st = AppendDuplicateImages(bad, &images);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("image hash 0 has " + std::to_string(bad_colour.size()) + " bytes of colour, not 3"),
              std::string::npos)
        << st.message();
    EXPECT_TRUE(images.empty());
  }
}

// Originals in train, their copies in val: each copy must come out as a
// leak paired with its own original, and nothing else may be paired.
TEST(LeakAccuracyTest, CopiesAreFoundAndDistinctPicturesAreNot) {
  std::vector<DuplicateImage> images;
  auto add = [&images](const std::string& split, const std::string& name, const image::Image& img) {
    images.push_back({split, name, FingerprintOf(img)});
  };
  const int originals = 60;
  std::vector<image::Image> photos;
  for (int i = 0; i < originals; ++i) {
    photos.push_back(SyntheticPhoto(400, 300, i));
    add("train", std::to_string(i), photos.back());
  }
  for (int i = 0; i < 1000 - originals; ++i) add("train", "distinct", SyntheticPhoto(320, 240, 10'000 + i));
  const char* kinds[] = {"exact", "q60", "x0.5", "x0.6", "x0.7", "x0.8", "x0.9"};
  int worst = 0;
  for (int i = 0; i < originals; ++i) {
    const image::Image& p = photos[i];
    const image::Image copies[] = {
        p, Jpeg60(p), Scaled(p, 0.5), Scaled(p, 0.6), Scaled(p, 0.7), Scaled(p, 0.8), Scaled(p, 0.9)};
    for (size_t k = 0; k < std::size(copies); ++k) {
      add("val", std::to_string(i) + " " + kinds[k], copies[k]);
      worst = std::max(worst, image::HammingDistance(images[i].fingerprint.hashes.phash[0],
                                                     images.back().fingerprint.hashes.phash[0]));
    }
  }
  const DuplicateReport r = FindDuplicates(images, kDefaultLeakDistance);
  std::set<std::string> found;
  for (const DuplicatePair& p : r.pairs) {
    const DuplicateImage& a = images[p.a];
    const DuplicateImage& b = images[p.b];
    if (a.split == b.split) {
      // Copies of one original are near each other too: that is right.
      ASSERT_EQ(a.split, "val") << a.file << " paired with " << b.file << " (" << p.distance << " bits)";
      EXPECT_EQ(a.file.substr(0, a.file.find(' ')), b.file.substr(0, b.file.find(' ')));
      continue;
    }
    ASSERT_NE(a.file, "distinct") << b.file << " paired with a distinct picture (" << p.distance << " bits)";
    EXPECT_EQ(a.file, b.file.substr(0, b.file.find(' '))) << "copy " << b.file << " paired with " << a.file;
    found.insert(b.file);
  }
  EXPECT_EQ(found.size(), static_cast<size_t>(originals) * std::size(kinds));
  EXPECT_EQ(r.leaks, found.size());
  // The margin the default keeps: the farthest copy is well inside it.
  EXPECT_LE(worst, kDefaultLeakDistance - 2);
  std::printf("farthest copy: %d bits (default distance %d)\n", worst, kDefaultLeakDistance);
}

}  // namespace
}  // namespace libshard::convert
