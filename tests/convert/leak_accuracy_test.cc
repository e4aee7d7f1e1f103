// The leak check's accuracy on real pictures (the corpus): 1,000
// distinct crops of Debian's plasma-workspace-wallpapers
// (tests/wallpaper_corpus.h) in train, and copies of every fifth in val:
// exact, JPEG quality 60, resized by 0.5-0.9, and 5 % of each side's length
// cropped off (centred: 2.5 % a side; from the top-left and from the
// bottom-right corners; from the right edge only; from the top edge only). The test prints the recall
// of each kind and the false pairs at distances 0..10 (the table behind
// --leak-distance's default), and holds the figures docs/convert.md states.
// Without the wallpapers it skips, or fails under LOCAL_WALLPAPERS_REQUIRED=1.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
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

struct Kind {
  const char* name;
  Image (*make)(const Image&);
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
};
constexpr size_t kKindCount = std::size(kKinds);
constexpr int kDistinct = 1000, kEvery = 5;  // copies of every fifth crop

class WallpaperLeakAccuracyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto t0 = std::chrono::steady_clock::now();
    StatusOr<std::vector<testing::CorpusImage>> corpus = testing::WallpaperCrops(kDistinct);
    if (!corpus.ok()) {
      missing_ = corpus.status().ToString();
      return;
    }
    for (const testing::CorpusImage& c : *corpus) {
      originals_.push_back(FingerprintOf(c.pixels));
      names_.push_back(c.name);
    }
    for (int i = 0; i < kDistinct; i += kEvery) {
      for (const Kind& k : kKinds) copies_[&k - kKinds].push_back(FingerprintOf(k.make((*corpus)[i].pixels)));
    }
    std::printf("corpus: %d crops of %s, copies of %d: %.1f s\n", kDistinct, testing::WallpaperDir().c_str(),
                kDistinct / kEvery, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  void SetUp() override {
    if (missing_.empty()) return;
    if (testing::WallpapersRequired()) FAIL() << "LOCAL_WALLPAPERS_REQUIRED=1: " << missing_;
    GTEST_SKIP() << missing_ << " (tools/setup.sh --wallpapers installs plasma-workspace-wallpapers)";
  }

  static std::string missing_;
  static std::vector<ImageFingerprint> originals_;
  static std::vector<std::string> names_;
  static std::vector<ImageFingerprint> copies_[kKindCount];
};
std::string WallpaperLeakAccuracyTest::missing_;
std::vector<ImageFingerprint> WallpaperLeakAccuracyTest::originals_;
std::vector<std::string> WallpaperLeakAccuracyTest::names_;
std::vector<ImageFingerprint> WallpaperLeakAccuracyTest::copies_[kKindCount];

// The distances behind the default: copies against their originals, and
// every pair of distinct crops; printed as a table per distance, with the
// detail hashes' confirmation (NearDistance) and without it (the 64-bit
// stage alone).
TEST_F(WallpaperLeakAccuracyTest, DistanceTable) {
  auto unconfirmed = [](ImageFingerprint f) {
    f.has_detail = false;
    return f;
  };
  std::vector<int> distinct(11, 0), loose(11, 0);
  for (size_t i = 0; i < originals_.size(); ++i) {
    for (size_t j = i + 1; j < originals_.size(); ++j) {
      for (int d = 0; d <= 10; ++d) {
        distinct[d] += NearDistance(originals_[i], originals_[j], d) <= d;
        loose[d] += NearDistance(originals_[i], unconfirmed(originals_[j]), d) <= d;
      }
    }
  }
  std::printf("%-22s", "distance <=");
  for (int d = 0; d <= 10; d += 2) std::printf("%6d", d);
  std::printf("   (recall of %d copies per kind; 64-bit distance, confirmed by the detail hashes within %d)\n",
              kDistinct / kEvery, kDetailDistance);
  for (size_t k = 0; k < kKindCount; ++k) {
    std::printf("%-22s", kKinds[k].name);
    for (int d = 0; d <= 10; d += 2) {
      int found = 0;
      for (size_t c = 0; c < copies_[k].size(); ++c) {
        found += NearDistance(originals_[c * kEvery], copies_[k][c], d) <= d;
      }
      std::printf("%5.1f%%", 100.0 * found / copies_[k].size());
    }
    std::printf("\n");
  }
  std::printf("%-22s", "false pairs");
  for (int d = 0; d <= 10; d += 2) std::printf("%6d", distinct[d]);
  std::printf("   (of %d distinct crops, %d pairs)\n%-22s", kDistinct, kDistinct * (kDistinct - 1) / 2,
              "  64-bit stage alone");
  for (int d = 0; d <= 10; d += 2) std::printf("%6d", loose[d]);
  std::printf("\n");
}

// Through FindDuplicates at the default distance, as a conversion sees them:
// originals in train, copies in val. Each copy found must be a leak with its
// own original; the recall of each kind and the false pairs are held at
// what docs/convert.md states.
TEST_F(WallpaperLeakAccuracyTest, DefaultDistanceFindsCopiesAndFewFalsePairs) {
  std::vector<DuplicateImage> images;
  for (size_t i = 0; i < originals_.size(); ++i) images.push_back({"train", std::to_string(i), originals_[i]});
  for (size_t k = 0; k < kKindCount; ++k) {
    for (size_t c = 0; c < copies_[k].size(); ++c) {
      images.push_back({"val", std::to_string(c * kEvery) + " " + std::to_string(k), copies_[k][c]});
    }
  }
  const DuplicateReport r = FindDuplicates(images, kDefaultLeakDistance);
  std::vector<int> found(kKindCount, 0);
  int false_pairs = 0, wrong_original = 0;
  for (const DuplicatePair& p : r.pairs) {
    const DuplicateImage& a = images[p.a];
    const DuplicateImage& b = images[p.b];
    if (a.split == "train" && b.split == "train") {
      ++false_pairs;
      std::printf("false pair at %d bits: %s and %s\n", p.distance, names_[p.a].c_str(), names_[p.b].c_str());
    } else if (a.split == "train") {
      const size_t space = b.file.find(' ');
      if (a.file == b.file.substr(0, space)) {
        ++found[std::stoul(b.file.substr(space + 1))];
      } else {
        ++wrong_original;
      }
    }
  }
  std::printf("at the default distance %d:\n", kDefaultLeakDistance);
  for (size_t k = 0; k < kKindCount; ++k) {
    std::printf("  %-22s %3d of %zu found\n", kKinds[k].name, found[k], copies_[k].size());
  }
  std::printf("  false pairs among the %d distinct crops: %d; copies also paired with another crop: %d\n", kDistinct,
              false_pairs, wrong_original);
  // What docs/convert.md states (2026-11-27, the hashes of the block plane
  // and the detail confirmation within 30 bits: q60 95.5 %, every resize
  // and 5 % crop 100 %, 2 false pairs; the 64-bit stage alone pairs 87).
  const int n = static_cast<int>(copies_[0].size());
  EXPECT_EQ(found[0], n);             // exact
  EXPECT_GE(found[1] * 100, n * 95);  // JPEG q60
  for (size_t k = 2; k <= 6; ++k) EXPECT_GE(found[k] * 100, n * 99) << kKinds[k].name;
  for (size_t k = 7; k <= 11; ++k) EXPECT_GE(found[k] * 100, n * 99) << kKinds[k].name;  // 5 % crops
  EXPECT_LE(false_pairs, 2);
}

}  // namespace
}  // namespace libshard::convert
