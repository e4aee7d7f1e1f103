// The leak check's search (duplicates.h): fingerprints, the multi-index
// hash tables, the pairs and their TSV. The manifest side is leak_check.cc.
#include "libshard/convert/duplicates.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <unordered_map>

#include "libshard/image/perceptual_hash.h"
#include "libshard/util/sha256.h"

namespace libshard::convert {
namespace {

// Calls each(v) for the values v that differ from `value` (a `bits`-bit
// number) in 1..left more bits, all above bit `from`, each once.
template <typename F>
void FlipMore(uint32_t value, int bits, int left, int from, const F& each) {
  for (int bit = from; bit < bits; ++bit) {
    const uint32_t v = value ^ (uint32_t{1} << bit);
    each(v);
    if (left > 1) FlipMore(v, bits, left - 1, bit + 1, each);
  }
}

// The values within `radius` bits of `value`, itself first, each once.
template <typename F>
void ForEachWithin(uint32_t value, int bits, int radius, const F& each) {
  each(value);
  if (radius > 0) FlipMore(value, bits, radius, 0, each);
}

// sum_{k <= r} C(b, k): the values a query looks up in one band.
double Probes(int bits, int radius) {
  double total = 0, c = 1;
  for (int k = 0; k <= radius; ++k) {
    total += c;
    c = c * (bits - k) / (k + 1);
  }
  return total;
}

}  // namespace

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
  ImageFingerprint f;
  f.pixels_sha256 =
      util::Sha256Hex(shape, std::string_view(reinterpret_cast<const char*>(pixels.data()), pixels.byte_size()));
  f.phash = image::PerceptualHash(pixels);
  f.centre_phash = image::CentrePerceptualHash(pixels);
  return f;
}

int FingerprintDistance(const ImageFingerprint& a, const ImageFingerprint& b) {
  return std::min({image::HammingDistance(a.phash, b.phash), image::HammingDistance(a.centre_phash, b.phash),
                   image::HammingDistance(a.phash, b.centre_phash)});
}

FingerprintIndex::FingerprintIndex(int max_distance, uint64_t expected_count)
    : whole_(max_distance, expected_count), centre_(max_distance, expected_count) {}

void FingerprintIndex::Add(const ImageFingerprint& f) {
  whole_.Add(f.phash);
  centre_.Add(f.centre_phash);
}

void FingerprintIndex::ForEachNear(const ImageFingerprint& f, const std::function<void(uint32_t, int)>& found) const {
  std::vector<std::pair<uint32_t, int>> near;
  auto collect = [&near](uint32_t id, int distance) { near.emplace_back(id, distance); };
  whole_.ForEachNear(f.phash, collect);
  centre_.ForEachNear(f.phash, collect);
  whole_.ForEachNear(f.centre_phash, collect);
  std::sort(near.begin(), near.end());  // by id, the least distance first
  for (size_t i = 0; i < near.size(); ++i) {
    if (i == 0 || near[i].first != near[i - 1].first) found(near[i].first, near[i].second);
  }
}

DuplicateIndex::DuplicateIndex(int max_distance, uint64_t expected_count)
    : max_distance_(std::clamp(max_distance, 0, kMaxLeakDistance)) {
  // The band count with the least expected work per query: probes per band
  // times (1 + the hashes expected in each probed value).
  const double n = static_cast<double>(std::max<uint64_t>(expected_count, 1));
  double best = std::numeric_limits<double>::max();
  for (int m = 3; m <= std::max(3, max_distance_ + 1); ++m) {
    const int bits = (64 + m - 1) / m;  // the widest band
    const int r = max_distance_ / m;
    const double cost = m * Probes(bits, r) * (1 + n / static_cast<double>(uint64_t{1} << bits));
    if (cost < best) {
      best = cost;
      bands_ = m;
      radius_ = r;
    }
  }
  int shift = 0;
  for (int b = 0; b < bands_; ++b) {
    const int bits = 64 / bands_ + (b < 64 % bands_ ? 1 : 0);
    shift_.push_back(shift);
    bits_.push_back(bits);
    shift += bits;
    head_.emplace_back(size_t{1} << bits, 0);
    next_.emplace_back();
  }
}

uint32_t DuplicateIndex::BandOf(uint64_t hash, int band) const {
  return static_cast<uint32_t>((hash >> shift_[band]) & ((uint64_t{1} << bits_[band]) - 1));
}

void DuplicateIndex::Add(uint64_t hash) {
  const uint32_t id = size();
  hashes_.push_back(hash);
  for (int b = 0; b < bands_; ++b) {
    uint32_t& head = head_[b][BandOf(hash, b)];
    next_[b].push_back(head);
    head = id + 1;
  }
}

void DuplicateIndex::ForEachNear(uint64_t hash, const std::function<void(uint32_t, int)>& found) const {
  for (int b = 0; b < bands_; ++b) {
    ForEachWithin(BandOf(hash, b), bits_[b], radius_, [&](uint32_t value) {
      for (uint32_t link = head_[b][value]; link != 0; link = next_[b][link - 1]) {
        const uint32_t id = link - 1;
        const uint64_t other = hashes_[id];
        const int distance = image::HammingDistance(hash, other);
        if (distance > max_distance_) continue;
        // Reported from the first band where the two are within the radius.
        bool earlier = false;
        for (int e = 0; e < b && !earlier; ++e) {
          earlier = __builtin_popcount(BandOf(hash, e) ^ BandOf(other, e)) <= radius_;
        }
        if (!earlier) found(id, distance);
      }
    });
  }
}

DuplicateReport FindDuplicates(const std::vector<DuplicateImage>& images, int max_distance) {
  DuplicateReport report;
  std::vector<DuplicatePair> leaks, within;
  auto add = [&](uint32_t a, uint32_t b, bool exact, int distance) {
    const bool leak = images[a].split != images[b].split;
    (leak ? report.leaks : report.within) += 1;
    std::vector<DuplicatePair>& list = leak ? leaks : within;
    if (leaks.size() + within.size() >= kMaxDuplicatePairs) {
      report.truncated = true;
      return;
    }
    list.push_back({exact, distance, a, b});
  };
  // Exact: per pixel key, the first image of each split (as ids).
  std::unordered_map<std::string, std::map<std::string, uint32_t>> firsts;
  // Near: the first images, in the index under their position in `reps`.
  std::vector<uint32_t> reps;
  FingerprintIndex index(max_distance, images.size());
  for (uint32_t i = 0; i < images.size(); ++i) {
    const DuplicateImage& img = images[i];
    std::map<std::string, uint32_t>& group = firsts[img.fingerprint.pixels_sha256];
    auto same = group.find(img.split);
    if (same != group.end()) {
      add(same->second, i, true, 0);
      continue;
    }
    for (const auto& [split, first] : group) add(first, i, true, 0);
    group.emplace(img.split, i);
    std::vector<std::pair<uint32_t, int>> near;
    index.ForEachNear(img.fingerprint, [&](uint32_t rep, int distance) {
      if (images[reps[rep]].fingerprint.pixels_sha256 != img.fingerprint.pixels_sha256) {
        near.emplace_back(reps[rep], distance);
      }
    });
    std::sort(near.begin(), near.end());
    for (const auto& [a, distance] : near) add(a, i, false, distance);
    index.Add(img.fingerprint);
    reps.push_back(i);
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
