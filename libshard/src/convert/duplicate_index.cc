// The leak check's incremental search (duplicate_index.h).
#include "libshard/convert/duplicate_index.h"

#include <algorithm>
#include <limits>

#include "duplicate_search.h"
#include "libshard/image/perceptual_hash.h"

namespace libshard::convert {

FingerprintIndex::FingerprintIndex(int max_distance, uint64_t expected_count)
    : max_distance_(std::clamp(max_distance, 0, kMaxLeakDistance)),
      whole_(max_distance, expected_count),
      regions_(max_distance, expected_count * (image::kHashRegions - 1)) {}

void FingerprintIndex::Add(const ImageFingerprint& f) {
  whole_.Add(f.hashes.phash[0]);
  for (int r = 1; r < image::kHashRegions; ++r) {
    // Missing regions of an older entry: the whole hash again (ids must
    // stay image * 9 + region - 1; NearDistance looks at known regions only).
    regions_.Add(r < f.regions ? f.hashes.phash[r] : f.hashes.phash[0]);
  }
  ImageFingerprint kept = f;
  kept.key_sha256.clear();
  prints_.push_back(std::move(kept));
}

void FingerprintIndex::ForEachNear(const ImageFingerprint& f, const std::function<void(uint32_t, int)>& found) const {
  std::vector<std::pair<uint32_t, int>> near;
  auto check = [&](uint32_t id) {
    const int d = NearDistance(f, prints_[id], max_distance_);
    if (d <= max_distance_) near.emplace_back(id, d);
  };
  whole_.ForEachNear(f.hashes.phash[0], [&](uint32_t id, int) { check(id); });
  regions_.ForEachNear(f.hashes.phash[0], [&](uint32_t id, int) { check(id / (image::kHashRegions - 1)); });
  for (int r = 1; r < f.regions; ++r) whole_.ForEachNear(f.hashes.phash[r], [&](uint32_t id, int) { check(id); });
  std::sort(near.begin(), near.end());  // by id (equal ids: equal distances)
  for (size_t i = 0; i < near.size(); ++i) {
    if (i == 0 || near[i].first != near[i - 1].first) found(near[i].first, near[i].second);
  }
}

namespace {

// The bits set in x, inline (__builtin_popcountll is a call into libgcc
// where the build does not assume the popcnt instruction).
int BitCount(uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555u;
  x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
  return static_cast<int>((x * 0x0101010101010101u) >> 56);
}

}  // namespace

DuplicateIndex::DuplicateIndex(int max_distance, uint64_t expected_count)
    : max_distance_(std::clamp(max_distance, 0, kMaxLeakDistance)) {
  // The band count with the least expected work per query: per probed value
  // a cache miss or two (a bucket's header, then its hashes; worth about
  // kProbe compares) and the hashes it holds. At most 16 bits a band (a
  // bucket per value).
  constexpr double kProbe = 60;
  const double n = static_cast<double>(std::max<uint64_t>(expected_count, 1));
  double best = std::numeric_limits<double>::max();
  for (int m = 4; m <= kMaxSearchBands; ++m) {
    double cost = 0;
    for (int b = 0; b < m; ++b) {
      const int bits = BandBits(m, b);
      cost += Probes(bits, BandRadius(max_distance_, m, b)) * (kProbe + n / static_cast<double>(uint64_t{1} << bits));
    }
    if (cost < best) {
      best = cost;
      bands_ = m;
    }
  }
  int shift = 0;
  for (int b = 0; b < bands_; ++b) {
    shift_.push_back(shift);
    bits_.push_back(BandBits(bands_, b));
    radius_.push_back(BandRadius(max_distance_, bands_, b));
    shift += bits_.back();
    buckets_.emplace_back(size_t{1} << bits_.back());
  }
}

int DuplicateIndex::radius() const { return *std::max_element(radius_.begin(), radius_.end()); }

void DuplicateIndex::Add(uint64_t hash) {
  const uint32_t id = size_++;
  for (int b = 0; b < bands_; ++b) buckets_[b][BandOf(hash, b)].push_back({hash, id});
}

void DuplicateIndex::ForEachNear(uint64_t hash, const std::function<void(uint32_t, int)>& found) const {
  for (int b = 0; b < bands_; ++b) {
    ForEachWithin(BandOf(hash, b), bits_[b], radius_[b], [&](uint32_t value) {
      for (const Entry& e : buckets_[b][value]) {
        const int distance = BitCount(hash ^ e.hash);
        if (distance > max_distance_) continue;
        // Reported from the first band where the two are within its radius.
        bool earlier = false;
        for (int o = 0; o < b && !earlier; ++o) {
          earlier = __builtin_popcount(BandOf(hash, o) ^ BandOf(e.hash, o)) <= radius_[o];
        }
        if (!earlier) found(e.id, distance);
      }
    });
  }
}

}  // namespace libshard::convert
