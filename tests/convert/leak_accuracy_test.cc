// The leak check's accuracy on real pictures (the corpus): 1,000
// distinct crops of Debian's plasma-workspace-wallpapers
// (tests/wallpaper_corpus.h) in train, and copies of every fifth in val:
// exact, JPEG quality 60, resized by 0.5-0.9, and 5 % of each side's length
// cropped off (centred: 2.5 % a side; from the top-left and from the
// bottom-right corners; from the right edge only; from the top edge only),
// mirrored left to right, brightened x1.15 (clipped), and 15 % cropped off
// (centred, not sought). Five such sets: the one the defaults were chosen
// on (the corpus' seed) and four held out (other crops of the same
// wallpapers): seed 2026, checked after the tones were chosen (and looked
// at for the close tones' detail distance), seed 7777, checked after
// everything, and seeds 4242 and 9001, drawn after the mirror and gain
// rules. The test prints the recall of each kind and the false
// pairs at distances 0..10 (the table behind --leak-distance's default), and
// holds the figures docs/convert.md states.
// Without the wallpapers it skips, or fails under LOCAL_WALLPAPERS_REQUIRED=1.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "libshard/convert/duplicates.h"
#include "libshard/image/decode.h"
#include "libshard/image/encode.h"
#include "libshard/image/resize.h"
#include "photo_testutil.h"
#include "wallpaper_corpus.h"

namespace libshard::convert {
namespace {

using image::Image;

Image Jpeg60(const Image& img) {
  image::JpegEncodeOptions o;
  o.quality = 60;
  StatusOr<std::string> jpeg = image::EncodeJpeg(img, o);
  EXPECT_TRUE(jpeg.ok()) << jpeg.status();
  StatusOr<Image> back = image::DecodeImage(*jpeg);
  EXPECT_TRUE(back.ok()) << back.status();
  return back.ok() ? std::move(*back) : Image();
}

Image Scaled(const Image& img, double f) {
  StatusOr<Image> out = image::Resize(img, static_cast<int>(img.width() * f), static_cast<int>(img.height() * f),
                                      image::Filter::kBilinear);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? std::move(*out) : Image();
}

// `img` less the given fractions of its width (left, right) and height
// (top, bottom).
Image Cut(const Image& img, double left, double top, double right, double bottom) {
  const int x0 = static_cast<int>(img.width() * left + 0.5), y0 = static_cast<int>(img.height() * top + 0.5);
  const int x1 = img.width() - static_cast<int>(img.width() * right + 0.5);
  const int y1 = img.height() - static_cast<int>(img.height() * bottom + 0.5);
  return testing::CropOf(img, x0, y0, x1 - x0, y1 - y0);
}

// Every sample times `gain`, clipped (PIL's ImageEnhance.Brightness,
// torchvision's adjust_brightness).
Image Brighter(const Image& img, double gain) {
  Image out = img;
  for (size_t i = 0; i < out.byte_size(); ++i) {
    out.data()[i] = static_cast<uint8_t>(std::min(255.0, std::round(img.data()[i] * gain)));
  }
  return out;
}

struct Kind {
  const char* name;
  Image (*make)(const Image&);
  // The least share found, per mille, on every set (the figures docs/convert.md states); 0 for a kind the check
  // is not built to find (measured, not asserted). JPEG q60's is the set's (ExpectAtLeast).
  int min_per_mille = 1000;
};
const Kind kKinds[] = {
    {"exact", [](const Image& p) { return p; }},
    {"jpeg q60", Jpeg60},
    {"resized x0.5", [](const Image& p) { return Scaled(p, 0.5); }},
    {"resized x0.6", [](const Image& p) { return Scaled(p, 0.6); }},
    {"resized x0.7", [](const Image& p) { return Scaled(p, 0.7); }},
    {"resized x0.8", [](const Image& p) { return Scaled(p, 0.8); }},
    {"resized x0.9", [](const Image& p) { return Scaled(p, 0.9); }},
    {"crop 5% centred", [](const Image& p) { return Cut(p, 0.025, 0.025, 0.025, 0.025); }},
    {"crop 5% top-left", [](const Image& p) { return Cut(p, 0.05, 0.05, 0, 0); }},
    {"crop 5% bottom-right", [](const Image& p) { return Cut(p, 0, 0, 0.05, 0.05); }},
    {"crop 5% right edge", [](const Image& p) { return Cut(p, 0, 0, 0.05, 0); }},
    {"crop 5% top edge", [](const Image& p) { return Cut(p, 0, 0.05, 0, 0); }},
    // The mirror hashes and the gain rule (issue 46 item 13): 99.5-100 % and 82.5-88 % on the five sets.
    {"mirrored", testing::MirrorOf, 990},
    {"brightness x1.15", [](const Image& p) { return Brighter(p, 1.15); }, 800},
    // What the check is blind to, measured, not asserted: 11-18 %.
    {"crop 15% centred", [](const Image& p) { return Cut(p, 0.075, 0.075, 0.075, 0.075); }, 0},
};
constexpr size_t kKindCount = std::size(kKinds);
constexpr int kDistinct = 1000, kEvery = 5;  // copies of every fifth crop
constexpr uint64_t kHeldOutSeed = 2026, kFreshSeed = 7777;
// Two more, drawn after the mirror and gain rules were written (the gain's
// detail distance was then tightened from 30 to 20 on 9001's false pair).
constexpr uint64_t kMirrorGainSeedA = 4242, kMirrorGainSeedB = 9001;

// One set: the crops' fingerprints, their names, the copies' of every fifth.
struct Corpus {
  const char* title = "";
  std::vector<ImageFingerprint> originals;
  std::vector<std::string> names;
  std::vector<ImageFingerprint> copies[kKindCount];
};

std::string LoadCorpus(const char* title, uint64_t seed, Corpus* set) {
  set->title = title;
  const auto t0 = std::chrono::steady_clock::now();
  StatusOr<std::vector<testing::CorpusImage>> corpus = testing::WallpaperCrops(kDistinct, seed);
  if (!corpus.ok()) return corpus.status().ToString();
  for (const testing::CorpusImage& c : *corpus) {
    set->originals.push_back(FingerprintOf(c.pixels));
    set->names.push_back(c.name);
  }
  for (int i = 0; i < kDistinct; i += kEvery) {
    for (const Kind& k : kKinds) set->copies[&k - kKinds].push_back(FingerprintOf(k.make((*corpus)[i].pixels)));
  }
  std::printf("%s: %d crops of %s (seed %llu), copies of %d: %.1f s\n", set->title, kDistinct,
              testing::WallpaperDir().c_str(), static_cast<unsigned long long>(seed), kDistinct / kEvery,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return "";
}

// Each test runs in a process of its own (gtest_discover_tests), so a set is
// loaded when a test first asks for it: a process loads the sets its test
// reads, not all five (each costs seconds, more under the sanitizers).
enum SetId { kChosen, kHeldOut, kFresh, kLaterA, kLaterB, kSetCount };

class WallpaperLeakAccuracyTest : public ::testing::Test {
 protected:
  // Loads the sets a test reads (each once a process); without the corpus, a
  // failure under LOCAL_WALLPAPERS_REQUIRED=1, else a skip. A test returns
  // when Loaded() is false.
  bool Loaded(std::initializer_list<SetId> ids) {
    Load(ids);
    return !IsSkipped() && !HasFatalFailure();
  }
  static const Corpus& Set(SetId id) { return sets_[id]; }

 private:
  void Load(std::initializer_list<SetId> ids) {
    static const struct {
      const char* title;
      uint64_t seed;
    } kSets[kSetCount] = {{"chosen set", testing::kWallpaperSeed},
                          {"held-out set", kHeldOutSeed},
                          {"fresh held-out set", kFreshSeed},
                          {"mirror and gain set A", kMirrorGainSeedA},
                          {"mirror and gain set B", kMirrorGainSeedB}};
    for (SetId id : ids) {
      if (missing_.empty() && !loaded_[id]) {
        loaded_[id] = true;
        missing_ = LoadCorpus(kSets[id].title, kSets[id].seed, &sets_[id]);
      }
    }
    if (missing_.empty()) return;
    if (testing::WallpapersRequired()) FAIL() << "LOCAL_WALLPAPERS_REQUIRED=1: " << missing_;
    GTEST_SKIP() << missing_ << " (tools/setup.sh --wallpapers installs plasma-workspace-wallpapers)";
  }

  static std::string missing_;
  static Corpus sets_[kSetCount];
  static bool loaded_[kSetCount];
};
std::string WallpaperLeakAccuracyTest::missing_;
Corpus WallpaperLeakAccuracyTest::sets_[kSetCount];
bool WallpaperLeakAccuracyTest::loaded_[kSetCount];

// The distances behind the default: copies against their originals, and
// every pair of distinct crops; printed as a table per distance, with the
// full confirmation (NearDistance), without the tones (the two hash stages)
// and with the 64-bit stage alone.
void PrintDistanceTable(const Corpus& set) {
  auto without_tone = [](ImageFingerprint f) {
    f.has_tone = false;
    return f;
  };
  auto hashes_alone = [](ImageFingerprint f) {
    f.has_tone = false;
    f.has_detail = false;
    return f;
  };
  std::vector<int> distinct(11, 0), untoned(11, 0), loose(11, 0);
  for (size_t i = 0; i < set.originals.size(); ++i) {
    for (size_t j = i + 1; j < set.originals.size(); ++j) {
      for (int d = 0; d <= 10; ++d) {
        distinct[d] += NearDistance(set.originals[i], set.originals[j], d) <= d;
        untoned[d] += NearDistance(set.originals[i], without_tone(set.originals[j]), d) <= d;
        loose[d] += NearDistance(set.originals[i], hashes_alone(set.originals[j]), d) <= d;
      }
    }
  }
  std::printf("%s\n%-22s", set.title, "distance <=");
  for (int d = 0; d <= 10; d += 2) std::printf("%6d", d);
  std::printf(
      "   (recall of %d copies per kind; 64-bit distance, confirmed by the detail hashes within %d and the tones, or "
      "within %d and close tones)\n",
      kDistinct / kEvery, kDetailDistance, kCloseToneDetailDistance);
  for (size_t k = 0; k < kKindCount; ++k) {
    std::printf("%-22s", kKinds[k].name);
    for (int d = 0; d <= 10; d += 2) {
      int found = 0;
      for (size_t c = 0; c < set.copies[k].size(); ++c) {
        found += NearDistance(set.originals[c * kEvery], set.copies[k][c], d) <= d;
      }
      std::printf("%5.1f%%", 100.0 * found / set.copies[k].size());
    }
    std::printf("\n");
  }
  std::printf("%-22s", "false pairs");
  for (int d = 0; d <= 10; d += 2) std::printf("%6d", distinct[d]);
  std::printf("   (of %d distinct crops, %d pairs)\n%-22s", kDistinct, kDistinct * (kDistinct - 1) / 2,
              "  without the tones");
  for (int d = 0; d <= 10; d += 2) std::printf("%6d", untoned[d]);
  std::printf("\n%-22s", "  64-bit stage alone");
  for (int d = 0; d <= 10; d += 2) std::printf("%6d", loose[d]);
  std::printf("\n");
}

TEST_F(WallpaperLeakAccuracyTest, DistanceTable) {
  if (!Loaded({kChosen, kHeldOut, kFresh})) return;
  PrintDistanceTable(Set(kChosen));
  PrintDistanceTable(Set(kHeldOut));
  PrintDistanceTable(Set(kFresh));
}

// What FindDuplicates finds at the default distance, as a conversion sees
// them: originals in train, copies in val.
struct Found {
  std::vector<int> per_kind = std::vector<int>(kKindCount, 0);  // copies paired with their own original
  int false_pairs = 0;                                          // two distinct crops
  int wrong_original = 0;                                       // a copy paired with another crop
};
Found FindAtDefault(const Corpus& set) {
  std::vector<DuplicateImage> images;
  for (size_t i = 0; i < set.originals.size(); ++i) images.push_back({"train", std::to_string(i), set.originals[i]});
  for (size_t k = 0; k < kKindCount; ++k) {
    for (size_t c = 0; c < set.copies[k].size(); ++c) {
      images.push_back({"val", std::to_string(c * kEvery) + " " + std::to_string(k), set.copies[k][c]});
    }
  }
  const DuplicateReport r = FindDuplicates(images, kDefaultLeakDistance);
  Found f;
  for (const DuplicatePair& p : r.pairs) {
    const DuplicateImage& a = images[p.a];
    const DuplicateImage& b = images[p.b];
    if (a.split == "train" && b.split == "train") {
      ++f.false_pairs;
      std::printf("false pair at %d bits: %s and %s\n", p.distance, set.names[p.a].c_str(), set.names[p.b].c_str());
    } else if (a.split == "train") {
      const size_t space = b.file.find(' ');
      if (a.file == b.file.substr(0, space)) {
        ++f.per_kind[std::stoul(b.file.substr(space + 1))];
      } else {
        ++f.wrong_original;
        std::printf("copy %s paired with %s\n", b.file.c_str(), set.names[p.a].c_str());
      }
    }
  }
  std::printf("%s, at the default distance %d:\n", set.title, kDefaultLeakDistance);
  for (size_t k = 0; k < kKindCount; ++k) {
    std::printf("  %-22s %3d of %zu found\n", kKinds[k].name, f.per_kind[k], set.copies[k].size());
  }
  std::printf("  false pairs among the %d distinct crops: %d; copies also paired with another crop: %d\n", kDistinct,
              f.false_pairs, f.wrong_original);
  return f;
}

// The recall of each kind and the false pairs held at what docs/convert.md
// states (2026-11-27, the hashes of the block plane, the detail
// confirmation within 30 bits with the tones within 3 gray levels and 5/4,
// or within 64 with the tones within 1 level and 21/20).
void ExpectAtLeast(const Found& f, const Corpus& set, int q60_per_mille, int crops_per_mille = 1000,
                   int wrong_originals = 0) {
  const int n = static_cast<int>(set.copies[0].size());
  EXPECT_EQ(f.per_kind[0], n) << set.title;                         // exact
  EXPECT_GE(f.per_kind[1] * 1000, n * q60_per_mille) << set.title;  // JPEG q60
  for (size_t k = 2; k < kKindCount; ++k) {  // resizes, 5 % crops, mirrored, brighter
    const int want = std::min(kKinds[k].min_per_mille, crops_per_mille);
    EXPECT_GE(f.per_kind[k] * 1000, n * want) << set.title << ": " << kKinds[k].name;
  }
  EXPECT_LE(f.wrong_original, wrong_originals) << set.title;
}

// Chosen set: q60 98 % (95.5 % before the tones), every resize and 5 % crop
// 100 %, mirrored 100 %, brighter 84.5 %, no false pair (2 without the
// tones, 87 with the 64-bit stage alone), no copy paired with another crop
// (5 without the tones).
TEST_F(WallpaperLeakAccuracyTest, DefaultDistanceFindsCopiesAndNoFalsePairs) {
  if (!Loaded({kChosen})) return;
  const Found f = FindAtDefault(Set(kChosen));
  ExpectAtLeast(f, Set(kChosen), 980);
  EXPECT_EQ(f.false_pairs, 0);
}

// Held-out sets: q60 98.5 % and 99 % (96.5 % and 97 % before the tones),
// every resize and 5 % crop 100 %, no copy paired with another crop (19
// and 1 without the tones); the first has one false pair (5 without the
// tones): two crops of the Kokkini wallpaper (a faint grid over one
// gradient) that look alike, mean luma 1.5 gray levels and contrast 5 %
// apart; the second none (3 without the tones). Mirrored 100 % on both,
// brighter 88 % and 87 %.
TEST_F(WallpaperLeakAccuracyTest, HeldOutSetsFindCopiesAndAtMostOneFalsePair) {
  if (!Loaded({kHeldOut, kFresh})) return;
  const Found held_out = FindAtDefault(Set(kHeldOut));
  ExpectAtLeast(held_out, Set(kHeldOut), 980);
  EXPECT_LE(held_out.false_pairs, 1);
  const Found fresh = FindAtDefault(Set(kFresh));
  ExpectAtLeast(fresh, Set(kFresh), 980);
  EXPECT_EQ(fresh.false_pairs, 0);
}

// The sets drawn after the mirror and gain rules (measured 2026-12-02):
// A, mirrored 100 %, brighter 86 %, no false pair, one copy (a 5 % crop) also
// paired with another crop of its wallpaper (Kite); B, mirrored 100 %,
// brighter 82.5 %, one 5 % bottom-right crop of 200 missed, one false pair
// (two Volna crops at 2 bits) and two copies also paired with another Elarun
// crop (one of them by the gain rule). Without the gain rule: brighter 0-2
// of 200, and not that pairing.
TEST_F(WallpaperLeakAccuracyTest, SetsDrawnAfterTheMirrorAndGainRules) {
  if (!Loaded({kLaterA, kLaterB})) return;
  const Found a = FindAtDefault(Set(kLaterA));
  ExpectAtLeast(a, Set(kLaterA), 980, 1000, 1);
  EXPECT_EQ(a.false_pairs, 0);
  const Found b = FindAtDefault(Set(kLaterB));
  ExpectAtLeast(b, Set(kLaterB), 980, 995, 2);
  EXPECT_LE(b.false_pairs, 1);
}

}  // namespace
}  // namespace libshard::convert
