// The leak check's search (duplicates.h): fingerprints, the multi-index
// hash tables, the pairs and their TSV. The manifest side is leak_check.cc.
#include "libshard/convert/duplicates.h"

#include "duplicate_search.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include "libshard/image/perceptual_hash.h"
#include "libshard/util/sha256.h"

namespace libshard::convert {

StatusOr<LeakMode> ParseLeakMode(std::string_view name) {
  if (name == "off") return LeakMode::kOff;
  if (name == "warn") return LeakMode::kWarn;
  if (name == "fail") return LeakMode::kFail;
  return InvalidArgumentError("--leaks must be fail, warn or off, not '" + std::string(name) + "'");
}

const char* LeakModeName(LeakMode mode) {
  switch (mode) {
    case LeakMode::kOff:
      return "off";
    case LeakMode::kWarn:
      return "warn";
    case LeakMode::kFail:
      return "fail";
  }
  return "?";
}

ImageFingerprint FingerprintOf(const image::Image& pixels) {
  char shape[64];
  std::snprintf(shape, sizeof(shape), "%dx%dx%d/%d\n", pixels.width(), pixels.height(), pixels.channels(),
                pixels.bit_depth());
  return FingerprintOf(pixels, util::Sha256Hex(shape, std::string_view(reinterpret_cast<const char*>(pixels.data()),
                                                                       pixels.byte_size())));
}

namespace {

// ImageFingerprint::colour of `img` (not empty): 16x16 pixels, spread
// evenly (plain pictures are what it is for; a few hundred pixels give
// their mean).
std::array<uint8_t, 3> MeanColourOf(const image::Image& img) {
  constexpr int kSide = 16;
  const int bytes = img.bytes_per_sample();
  const size_t pixel = static_cast<size_t>(img.channels()) * bytes;
  const int high = bytes == 2 ? 1 : 0;  // the high byte of a little-endian 16-bit sample
  size_t at[kSide];
  for (int i = 0; i < kSide; ++i) {
    at[i] = static_cast<size_t>((2 * i + 1) * static_cast<int64_t>(img.width()) / (2 * kSide)) * pixel + high;
  }
  const bool gray = img.channels() < 3;
  uint32_t sum[3] = {0, 0, 0};
  for (int j = 0; j < kSide; ++j) {
    const uint8_t* row = img.row(static_cast<int>((2 * j + 1) * static_cast<int64_t>(img.height()) / (2 * kSide)));
    for (int i = 0; i < kSide; ++i) {
      const uint8_t* px = row + at[i];
      sum[0] += px[0];
      if (!gray) {
        sum[1] += px[bytes];
        sum[2] += px[2 * bytes];
      }
    }
  }
  if (gray) sum[1] = sum[2] = sum[0];
  std::array<uint8_t, 3> mean{};
  for (int c = 0; c < 3; ++c) mean[c] = static_cast<uint8_t>((sum[c] + kSide * kSide / 2) / (kSide * kSide));
  return mean;
}

}  // namespace

ImageFingerprint FingerprintOf(const image::Image& pixels, std::string key_sha256) {
  ImageFingerprint f;
  f.key_sha256 = std::move(key_sha256);
  f.hashes = image::HashRegions(pixels);
  if (!pixels.empty()) f.colour = MeanColourOf(pixels);
  return f;
}

namespace {

// How closely two regions' tones (1/256 gray levels) agree: kLoose with
// mean luma within kToneMeanLevels and contrasts within kToneContrastNum /
// kToneContrastDen of each other or one gray level apart (a nearly flat
// region's contrast is mostly the encoder's noise); kClose with mean luma
// within kCloseToneMeanLevels and contrasts within kCloseToneContrastNum /
// kCloseToneContrastDen.
enum class ToneMatch { kNone, kLoose, kClose };
ToneMatch ToneMatchOf(const image::RegionTone& a, const image::RegionTone& b) {
  constexpr int kLevel = 256;
  const int mean_gap = std::abs(a.mean - b.mean);
  const int high = std::max(a.contrast, b.contrast), low = std::min(a.contrast, b.contrast);
  if (mean_gap <= kCloseToneMeanLevels * kLevel && high * kCloseToneContrastDen <= low * kCloseToneContrastNum) {
    return ToneMatch::kClose;
  }
  if (mean_gap <= kToneMeanLevels * kLevel &&
      (high * kToneContrastDen <= low * kToneContrastNum || high - low <= kLevel)) {
    return ToneMatch::kLoose;
  }
  return ToneMatch::kNone;
}

// The 64-bit distance of region ra of a and region rb of b (one of them 0)
// when their detail hashes and their tones confirm it, else kUnconfirmed:
// detail within kDetailDistance and tones agreeing, or detail within
// kCloseToneDetailDistance and tones agreeing closely. Without tones on
// either side (an older entry), the detail alone; without detail, the
// 64-bit distance alone.
constexpr int kUnconfirmed = 65;
int Confirmed(const ImageFingerprint& a, int ra, const ImageFingerprint& b, int rb, int max_distance) {
  const int d = image::HammingDistance(a.hashes.phash[ra], b.hashes.phash[rb]);
  if (d > max_distance) return kUnconfirmed;
  if (!a.has_detail || !b.has_detail) return d;
  const int detail = image::HammingDistance(a.hashes.detail[ra], b.hashes.detail[rb]);
  if (!a.has_tone || !b.has_tone) return detail <= kDetailDistance ? d : kUnconfirmed;
  switch (ToneMatchOf(a.hashes.tone[ra], b.hashes.tone[rb])) {
    case ToneMatch::kClose:
      return detail <= kCloseToneDetailDistance ? d : kUnconfirmed;
    case ToneMatch::kLoose:
      return detail <= kDetailDistance ? d : kUnconfirmed;
    case ToneMatch::kNone:
      break;
  }
  return kUnconfirmed;
}

// Both plain (kPlainContrast) and their colours apart: a property of the
// pair, whatever regions are compared.
bool PlainColoursDiffer(const ImageFingerprint& a, const ImageFingerprint& b) {
  if (!a.has_colour || !b.has_colour || !a.has_tone || !b.has_tone) return false;
  if (a.hashes.tone[0].contrast > kPlainContrast || b.hashes.tone[0].contrast > kPlainContrast) return false;
  for (int c = 0; c < 3; ++c) {
    if (std::abs(a.colour[c] - b.colour[c]) > kColourLevels) return true;
  }
  return false;
}

}  // namespace

int NearDistance(const ImageFingerprint& a, const ImageFingerprint& b, int max_distance) {
  if (PlainColoursDiffer(a, b)) return kUnconfirmed;
  int best = Confirmed(a, 0, b, 0, max_distance);
  for (int r = 1; r < b.regions; ++r) best = std::min(best, Confirmed(a, 0, b, r, max_distance));
  for (int r = 1; r < a.regions; ++r) best = std::min(best, Confirmed(a, r, b, 0, max_distance));
  return best;
}

DuplicateReport FindDuplicates(const std::vector<DuplicateImage>& images, int max_distance) {
  return FindDuplicates(images, max_distance, SearchBands(max_distance, images.size()));
}

DuplicateReport FindDuplicates(const std::vector<DuplicateImage>& images, int max_distance, int bands, bool vector) {
  max_distance = std::clamp(max_distance, 0, kMaxLeakDistance);
  // Exact: per pixel key, the first image of each split (as ids); the first
  // images ("reps") are what the near search sees.
  std::vector<std::vector<std::pair<uint32_t, bool>>> exact(images.size());  // by b: (a, exact)
  std::unordered_map<std::string, std::map<std::string, uint32_t>> firsts;
  firsts.reserve(images.size());
  std::vector<uint32_t> reps;
  for (uint32_t i = 0; i < images.size(); ++i) {
    const DuplicateImage& img = images[i];
    std::map<std::string, uint32_t>& group = firsts[img.fingerprint.key_sha256];
    auto same = group.find(img.split);
    if (same != group.end()) {
      exact[i].emplace_back(same->second, true);
      continue;
    }
    for (const auto& [split, first] : group) exact[i].emplace_back(first, true);
    group.emplace(img.split, i);
    reps.push_back(i);
  }
  // Near: among the first images (duplicate_search.cc); equal keys are
  // exact pairs already.
  std::vector<const ImageFingerprint*> prints;
  prints.reserve(reps.size());
  for (uint32_t rep : reps) prints.push_back(&images[rep].fingerprint);
  std::vector<std::vector<std::pair<uint32_t, int>>> near(images.size());  // by b: (a, distance)
  for (const NearPair& p : SearchNearPairs(prints, max_distance, bands, vector)) {
    if (prints[p.a]->key_sha256 == prints[p.b]->key_sha256) continue;
    near[reps[p.b]].emplace_back(reps[p.a], p.distance);  // reps ascend: a before b
  }
  prints.clear();
  DuplicateReport report;
  std::vector<DuplicatePair> leaks, within;
  auto add = [&](uint32_t a, uint32_t b, bool is_exact, int distance) {
    const bool leak = images[a].split != images[b].split;
    (leak ? report.leaks : report.within) += 1;
    std::vector<DuplicatePair>& list = leak ? leaks : within;
    if (leaks.size() + within.size() >= kMaxDuplicatePairs) {
      report.truncated = true;
      return;
    }
    list.push_back({is_exact, distance, a, b});
  };
  for (uint32_t b = 0; b < images.size(); ++b) {
    for (const auto& [a, is_exact] : exact[b]) add(a, b, is_exact, 0);
    for (const auto& [a, d] : near[b]) add(a, b, false, d);  // by a, each once
  }
  report.pairs = std::move(leaks);
  report.pairs.insert(report.pairs.end(), within.begin(), within.end());
  return report;
}

std::string DuplicatesTsv(const std::vector<DuplicateImage>& images, const DuplicateReport& report) {
  auto field = [](std::string s) {
    for (char& c : s) {
      if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    }
    return s;
  };
  std::string text = "kind\tdistance\tsplit_a\tfile_a\tsplit_b\tfile_b\n";
  for (const DuplicatePair& p : report.pairs) {
    const DuplicateImage& a = images[p.a];
    const DuplicateImage& b = images[p.b];
    text += std::string(p.exact ? "exact" : "near") + "\t" + std::to_string(p.distance) + "\t" + field(a.split) + "\t" +
            field(a.file) + "\t" + field(b.split) + "\t" + field(b.file) + "\n";
  }
  return text;
}

}  // namespace libshard::convert
