// The leak check's search (duplicates.h): fingerprints, the multi-index
// hash tables, the pairs and their TSV. The manifest side is leak_check.cc.
#include "libshard/convert/duplicates.h"

#include "duplicate_search.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>
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
  f.has_mirror = true;
  if (!pixels.empty()) f.colour = MeanColourOf(pixels);
  return f;
}

namespace {

// A total order of the fingerprints' hashes, tones and colour (not the key):
// 0 for SameFingerprint.
int FingerprintOrder(const ImageFingerprint& a, const ImageFingerprint& b) {
  auto flags = [](const ImageFingerprint& f) {
    return std::make_tuple(f.regions, f.has_detail, f.has_tone, f.has_colour, f.has_mirror);
  };
  if (flags(a) != flags(b)) return flags(a) < flags(b) ? -1 : 1;
  if (a.hashes.phash != b.hashes.phash) return a.hashes.phash < b.hashes.phash ? -1 : 1;
  if (a.hashes.detail != b.hashes.detail) return a.hashes.detail < b.hashes.detail ? -1 : 1;
  if (a.has_mirror) {  // a function of the same DCT: equal where the rest is, but kept a total order
    const auto x = std::make_pair(a.hashes.mirror, a.hashes.mirror_detail);
    const auto y = std::make_pair(b.hashes.mirror, b.hashes.mirror_detail);
    if (x != y) return x < y ? -1 : 1;
  }
  for (int r = 0; r < image::kHashRegions; ++r) {
    const auto x = std::make_pair(a.hashes.tone[r].mean, a.hashes.tone[r].contrast);
    const auto y = std::make_pair(b.hashes.tone[r].mean, b.hashes.tone[r].contrast);
    if (x != y) return x < y ? -1 : 1;
  }
  if (a.colour != b.colour) return a.colour < b.colour ? -1 : 1;
  return 0;
}

// How closely two regions' tones (1/256 gray levels) agree: kLoose with
// mean luma within kToneMeanLevels and contrasts within kToneContrastNum /
// kToneContrastDen of each other or one gray level apart (a nearly flat
// region's contrast is mostly the encoder's noise); kClose with mean luma
// within kCloseToneMeanLevels and contrasts within kCloseToneContrastNum /
// kCloseToneContrastDen.
// kGain: one is the other brightened (kGainMin..kGainMax, duplicates.h),
// its mean and contrast scaled by one factor.
enum class ToneMatch { kNone, kLoose, kClose, kGain };
bool IsGain(const image::RegionTone& a, const image::RegionTone& b) {
  constexpr int64_t kLevel = 256;
  const image::RegionTone& bright = a.mean >= b.mean ? a : b;
  const image::RegionTone& dark = a.mean >= b.mean ? b : a;
  const int64_t mb = bright.mean, md = dark.mean, cb = bright.contrast, cd = dark.contrast;
  if (md < kGainMinMeanLevels * kLevel || cd < kLevel || cb < kLevel) return false;
  if (mb * kGainMinDen < md * kGainMinNum || mb * kGainMaxDen > md * kGainMaxNum) return false;
  // (cb / cd) / (mb / md) within kGainContrastDen / Num .. Num / Den.
  const int64_t contrast_gain = cb * md, mean_gain = cd * mb;
  return contrast_gain * kGainContrastNum >= mean_gain * kGainContrastDen &&
         contrast_gain * kGainContrastDen <= mean_gain * kGainContrastNum;
}
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
  if (IsGain(a, b)) return ToneMatch::kGain;
  return ToneMatch::kNone;
}

// What Confirmed compares of one side: a region's hashes and tone (the
// whole image's mirrored hashes with the whole image's tone, for a flip).
struct Side {
  uint64_t phash;
  const image::DetailHash& detail;
  const image::RegionTone& tone;
};
Side RegionSide(const ImageFingerprint& f, int r) { return {f.hashes.phash[r], f.hashes.detail[r], f.hashes.tone[r]}; }
Side MirrorSide(const ImageFingerprint& f) { return {f.hashes.mirror, f.hashes.mirror_detail, f.hashes.tone[0]}; }

// The 64-bit distance of side x of a and side y of b when their detail
// hashes and their tones confirm it, else kUnconfirmed: detail within
// kDetailDistance and tones agreeing, or detail within
// kCloseToneDetailDistance and tones agreeing closely. Without tones on
// either side (an older entry), the detail alone; without detail, the
// 64-bit distance alone.
constexpr int kUnconfirmed = 65;
int ConfirmedSides(const ImageFingerprint& a, const Side& x, const ImageFingerprint& b, const Side& y,
                   int max_distance) {
  const int d = image::HammingDistance(x.phash, y.phash);
  if (d > max_distance) return kUnconfirmed;
  if (!a.has_detail || !b.has_detail) return d;
  const int detail = image::HammingDistance(x.detail, y.detail);
  if (!a.has_tone || !b.has_tone) return detail <= kDetailDistance ? d : kUnconfirmed;
  switch (ToneMatchOf(x.tone, y.tone)) {
    case ToneMatch::kClose:
      return detail <= kCloseToneDetailDistance ? d : kUnconfirmed;
    case ToneMatch::kLoose:
      return detail <= kDetailDistance ? d : kUnconfirmed;
    case ToneMatch::kGain:
      return detail <= kGainDetailDistance ? d : kUnconfirmed;
    case ToneMatch::kNone:
      break;
  }
  return kUnconfirmed;
}

// Region ra of a against region rb of b (one of them 0).
int Confirmed(const ImageFingerprint& a, int ra, const ImageFingerprint& b, int rb, int max_distance) {
  return ConfirmedSides(a, RegionSide(a, ra), b, RegionSide(b, rb), max_distance);
}

// One mirrored against the other's whole image (both sides: the block plane
// is cut from the left, so a's mirror and b's whole, and b's mirror and a's
// whole, may differ by a bit or two); kUnconfirmed where either lacks the
// mirror.
int MirrorConfirmed(const ImageFingerprint& a, const ImageFingerprint& b, int max_distance) {
  if (!a.has_mirror || !b.has_mirror) return kUnconfirmed;
  return std::min(ConfirmedSides(a, MirrorSide(a), b, RegionSide(b, 0), max_distance),
                  ConfirmedSides(a, RegionSide(a, 0), b, MirrorSide(b), max_distance));
}

// The plain rule (kNearlyPlainContrast): one of them plain and the other
// not nearly plain, or their colours apart. A property of the pair, whatever
// regions are compared.
// An older entry (no colour or tones) is paired by its hashes and tones as
// before, plain or not.
bool PlainRuleRefuses(const ImageFingerprint& a, const ImageFingerprint& b) {
  if (!a.has_colour || !a.has_tone || !b.has_colour || !b.has_tone) return false;
  if (!IsPlain(a) && !IsPlain(b)) return false;
  if (!IsNearlyPlain(a) || !IsNearlyPlain(b)) return true;
  for (int c = 0; c < 3; ++c) {
    if (std::abs(a.colour[c] - b.colour[c]) > kColourLevels) return true;
  }
  return false;
}

}  // namespace

bool IsPlain(const ImageFingerprint& f) {
  return f.has_colour && f.has_tone && f.hashes.tone[0].contrast <= kPlainContrast;
}

bool IsNearlyPlain(const ImageFingerprint& f) {
  return f.has_colour && f.has_tone && f.hashes.tone[0].contrast <= kNearlyPlainContrast;
}

bool SameFingerprint(const ImageFingerprint& a, const ImageFingerprint& b) {
  return FingerprintOrder(a, b) == 0;
}

int NearDistance(const ImageFingerprint& a, const ImageFingerprint& b, int max_distance) {
  if (PlainRuleRefuses(a, b)) return kUnconfirmed;
  int best = Confirmed(a, 0, b, 0, max_distance);
  for (int r = 1; r < b.regions; ++r) best = std::min(best, Confirmed(a, 0, b, r, max_distance));
  for (int r = 1; r < a.regions; ++r) best = std::min(best, Confirmed(a, r, b, 0, max_distance));
  return std::min(best, MirrorConfirmed(a, b, max_distance));
}

DuplicateReport FindDuplicates(const std::vector<DuplicateImage>& images, int max_distance) {
  return FindDuplicates(images, max_distance, SearchBands(max_distance, images.size()));
}

DuplicateReport FindDuplicates(const std::vector<DuplicateImage>& images, int max_distance, int bands, bool vector) {
  max_distance = std::clamp(max_distance, 0, kMaxLeakDistance);
  const uint32_t n = static_cast<uint32_t>(images.size());
  // listed[b]: the pairs (a, exact) of the copy groups, a < b. group[i]:
  // the first image of i's copy group (its split, its fingerprint).
  std::vector<std::vector<std::pair<uint32_t, bool>>> listed(n);
  std::vector<uint32_t> group(n);
  // 1. Equal stored bytes: per key, the first image of each split ("reps").
  std::vector<uint32_t> reps;
  {
    std::unordered_map<std::string, std::map<std::string, uint32_t>> firsts;
    firsts.reserve(images.size());
    for (uint32_t i = 0; i < n; ++i) {
      const DuplicateImage& img = images[i];
      std::map<std::string, uint32_t>& key_group = firsts[img.fingerprint.key_sha256];
      auto same = key_group.find(img.split);
      if (same != key_group.end()) {
        listed[i].emplace_back(same->second, true);
        group[i] = same->second;
        continue;
      }
      for (const auto& [split, first] : key_group) listed[i].emplace_back(first, true);
      key_group.emplace(img.split, i);
      reps.push_back(i);
      group[i] = i;
    }
  }
  // 2. Equal fingerprints among the reps (the same pixels in other bytes):
  // sorted by fingerprint, then plan order; per run of equal ones, the first
  // of each split stands for the others of its split (near at 0) and is
  // paired with each other split's first (unless their bytes are equal too:
  // an exact pair of step 1). Those firsts are what the search sees.
  std::vector<uint32_t> searched;
  std::vector<uint32_t> run_of(n, 0);  // the run of a searched image
  {
    std::vector<uint32_t> order = reps;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
      return FingerprintOrder(images[x].fingerprint, images[y].fingerprint) < 0;
    });
    uint32_t run = 0;
    for (size_t r0 = 0; r0 < order.size(); ++run) {
      size_t r1 = r0 + 1;
      while (r1 < order.size() && SameFingerprint(images[order[r0]].fingerprint, images[order[r1]].fingerprint)) ++r1;
      std::map<std::string, uint32_t> split_first;
      for (size_t k = r0; k < r1; ++k) {  // ascending plan order within the run
        const uint32_t img = order[k];
        auto same = split_first.find(images[img].split);
        if (same != split_first.end()) {
          listed[img].emplace_back(same->second, false);
          group[img] = same->second;
          continue;
        }
        for (const auto& [split, first] : split_first) {
          if (images[first].fingerprint.key_sha256 != images[img].fingerprint.key_sha256) {
            listed[img].emplace_back(first, false);
          }
        }
        split_first.emplace(images[img].split, img);
        searched.push_back(img);
        run_of[img] = run;
      }
      r0 = r1;
    }
    std::sort(searched.begin(), searched.end());
  }
  for (uint32_t i = 0; i < n; ++i) group[i] = group[group[i]];  // an exact copy's rep has its group now
  // 3. Near pairs among the searched images: plain ones by colour, the
  // others through the hashes (duplicate_search.cc); pairs within one run
  // are step 2's.
  DuplicateReport report;
  std::vector<std::vector<std::pair<uint32_t, int>>> near(n);  // by b: (a, distance)
  {
    // With older entries (no colour: paired with plain ones by the hashes),
    // the plain ones are searched through the hashes too.
    const bool older = std::any_of(searched.begin(), searched.end(), [&](uint32_t img) {
      return !images[img].fingerprint.has_colour || !images[img].fingerprint.has_tone;
    });
    std::vector<const ImageFingerprint*> hashed, plain;
    std::vector<uint32_t> hashed_image, plain_image;
    for (uint32_t img : searched) {
      const ImageFingerprint& f = images[img].fingerprint;
      if (!IsPlain(f) || older) {
        hashed.push_back(&f);
        hashed_image.push_back(img);
      }
      if (IsNearlyPlain(f)) {
        plain.push_back(&f);
        plain_image.push_back(img);
      }
    }
    bool cut_hashed = false, cut_plain = false;
    std::vector<NearPair> found = SearchNearPairs(hashed, max_distance, bands, vector, kMaxSearchPairs, &cut_hashed);
    for (NearPair& p : found) p = {hashed_image[p.a], hashed_image[p.b], p.distance};
    std::vector<NearPair> plain_found = SearchPlainPairs(plain, max_distance, kMaxSearchPairs, &cut_plain);
    for (const NearPair& p : plain_found) found.push_back({plain_image[p.a], plain_image[p.b], p.distance});
    plain_found = {};
    report.search_cut = cut_hashed || cut_plain;
    // A nearly plain pair is found by both searches: once each.
    std::sort(found.begin(), found.end(),
              [](const NearPair& x, const NearPair& y) { return x.a != y.a ? x.a < y.a : x.b < y.b; });
    found.erase(std::unique(found.begin(), found.end(),
                            [](const NearPair& x, const NearPair& y) { return x.a == y.a && x.b == y.b; }),
                found.end());
    for (const NearPair& p : found) {
      if (run_of[p.a] == run_of[p.b]) continue;
      near[p.b].emplace_back(p.a, p.distance);
    }
  }
  // The list and the counts.
  std::vector<DuplicatePair> leaks, within;
  std::vector<bool> leaked(n, false);
  auto add = [&](uint32_t a, uint32_t b, bool is_exact, int distance) {
    const bool leak = images[a].split != images[b].split;
    if (leak) leaked[group[a]] = leaked[group[b]] = true;
    (leak ? report.leaks : report.within) += 1;
    std::vector<DuplicatePair>& list = leak ? leaks : within;
    if (leaks.size() + within.size() >= kMaxDuplicatePairs) {
      report.truncated = true;
      return;
    }
    list.push_back({is_exact, distance, a, b});
  };
  for (uint32_t b = 0; b < n; ++b) {
    for (const auto& [a, is_exact] : listed[b]) add(a, b, is_exact, 0);
    for (const auto& [a, d] : near[b]) add(a, b, false, d);  // by a, each once
  }
  report.pairs = std::move(leaks);
  report.pairs.insert(report.pairs.end(), within.begin(), within.end());
  std::vector<uint64_t> copies(n, 0);
  for (uint32_t i = 0; i < n; ++i) ++copies[group[i]];
  for (uint32_t i = 0; i < n; ++i) {
    if (!leaked[group[i]]) continue;
    ++report.leaked_images;
    ++report.leaked_by_split[images[i].split];
  }
  for (uint32_t g = 0; g < n; ++g) {
    if (copies[g] < 2) continue;
    report.largest.push_back({g, copies[g]});
    std::sort(report.largest.begin(), report.largest.end(), [](const CopyGroup& x, const CopyGroup& y) {
      return x.copies != y.copies ? x.copies > y.copies : x.first < y.first;
    });
    if (report.largest.size() > kLargestGroups) report.largest.pop_back();
  }
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
