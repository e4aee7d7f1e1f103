// The leak check's incremental search (duplicate_index.h): per band, a
// flat array of buckets over arenas of hashes and ids, each bucket's
// entries in one block of 4 << k entries (grown by doubling; blocks left
// behind are reused by size). A query builds its probe values per band
// (ForEachWithin), reads each bucket's block and compares four hashes at a
// time (WithinMask4, where the CPU has AVX2; lanes past the bucket's size
// masked off), so a probe costs a bucket header and one run of hashes.
#include "libshard/convert/duplicate_index.h"

#include <algorithm>
#include <limits>

#include "duplicate_search.h"
#include "libshard/image/perceptual_hash.h"

namespace libshard::convert {
namespace {

// The bits set in x, inline (__builtin_popcountll is a call into libgcc
// where the build does not assume the popcnt instruction).
int BitCount(uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555u;
  x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
  return static_cast<int>((x * 0x0101010101010101u) >> 56);
}

constexpr size_t kMaxQueries = 65535;  // a batch of AppendNear (Span::query)
constexpr uint32_t kBlock = 4;         // entries: the least block, and the unit of Bucket::block

struct Bucket {
  uint32_t block = 0;  // first entry / kBlock
  uint32_t size = 0;
  uint32_t capacity = 0;  // 0 or kBlock << k
};

// One band's table.
struct Band {
  std::vector<Bucket> buckets;  // by band value
  std::vector<uint64_t> hashes;
  std::vector<uint32_t> ids;
  std::vector<std::vector<uint32_t>> free;  // by k: blocks of kBlock << k entries no bucket uses

  void Append(uint32_t value, uint64_t hash, uint32_t id) {
    Bucket& b = buckets[value];
    if (b.size == b.capacity) Grow(&b);
    const size_t at = size_t{b.block} * kBlock + b.size++;
    hashes[at] = hash;
    ids[at] = id;
  }

  void Grow(Bucket* b) {
    const uint32_t capacity = b->capacity == 0 ? kBlock : 2 * b->capacity;
    const int k = __builtin_ctz(capacity / kBlock);
    if (static_cast<int>(free.size()) <= k) free.resize(k + 1);
    uint32_t block;
    if (!free[k].empty()) {
      block = free[k].back();
      free[k].pop_back();
    } else {
      block = static_cast<uint32_t>(hashes.size() / kBlock);
      hashes.resize(hashes.size() + capacity);
      ids.resize(ids.size() + capacity);
    }
    const size_t from = size_t{b->block} * kBlock, to = size_t{block} * kBlock;
    std::copy_n(hashes.begin() + from, b->size, hashes.begin() + to);
    std::copy_n(ids.begin() + from, b->size, ids.begin() + to);
    if (b->capacity > 0) free[k - 1].push_back(b->block);
    b->block = block;
    b->capacity = capacity;
  }
};

// Estimated work of one query among n hashes in m bands, in hash compares:
// per probed value a bucket header and a run of hashes (cache misses worth
// about kProbe compares) and the hashes it holds; an Add writes one bucket
// per band (kProbe each). Layouts with more buckets than about 2n + 2^16
// are left out (memory).
double IndexCost(int max_distance, int m, double n) {
  constexpr double kProbe = 60;
  const BandLayout l = MakeBandLayout(max_distance, m);
  double cost = m * kProbe;
  for (int b = 0; b < m; ++b) {
    const double values = static_cast<double>(uint64_t{1} << l.bits[b]);
    if (values > 2 * n + 65536) return std::numeric_limits<double>::max();
    cost += Probes(l.bits[b], l.radius[b]) * (kProbe + n / values);
  }
  return cost;
}

// A probed bucket's run of hashes: positions [first, first + size) in band
// `band`'s arenas, for query hash `query`.
struct Span {
  size_t first;
  uint32_t size;
  uint16_t query;
  uint16_t band;
};

// Bucket values per query and band, then the buckets' spans: each step
// prefetches what the next one reads (the bucket headers, then the runs of
// hashes), so the cache misses of a query's few hundred probes overlap.
struct Probe {
  uint32_t value;
  uint16_t query;
  uint16_t band;
};

// The spans' hashes within max_distance of their queries, appended to *hits
// as (span, position): one compare at a time, or four (AVX2; lanes past a
// span's size masked off: blocks hold whole multiples of 4 entries).
void ScanPlain(const std::vector<const uint64_t*>& arenas, const std::vector<Span>& spans, const uint64_t* queries,
               int max_distance, std::vector<std::pair<uint32_t, size_t>>* hits) {
  for (uint32_t i = 0; i < spans.size(); ++i) {
    const Span& s = spans[i];
    const uint64_t* h = arenas[s.band];
    for (size_t e = s.first; e < s.first + s.size; ++e) {
      if (BitCount(queries[s.query] ^ h[e]) <= max_distance) hits->emplace_back(i, e);
    }
  }
}
#if defined(__x86_64__)
__attribute__((target("avx2,popcnt"))) void ScanAvx2(const std::vector<const uint64_t*>& arenas,
                                                     const std::vector<Span>& spans, const uint64_t* queries,
                                                     int max_distance, std::vector<std::pair<uint32_t, size_t>>* hits) {
  const __m256i limit = _mm256_set1_epi64x(max_distance);
  for (uint32_t i = 0; i < spans.size(); ++i) {
    const Span& s = spans[i];
    const uint64_t* h = arenas[s.band] + s.first;
    const __m256i query = _mm256_set1_epi64x(static_cast<long long>(queries[s.query]));
    for (uint32_t e = 0; e < s.size; e += kBlock) {
      int near = WithinMask4(h + e, query, limit);
      if (s.size - e < kBlock) near &= (1 << (s.size - e)) - 1;
      for (; near != 0; near &= near - 1) hits->emplace_back(i, s.first + e + __builtin_ctz(near));
    }
  }
}
#endif

}  // namespace

struct DuplicateIndex::Tables {
  BandLayout layout;
  std::vector<Band> bands;
  bool avx2 = false;
};

int DuplicateIndex::BandsFor(int max_distance, uint64_t expected_count) {
  max_distance = std::clamp(max_distance, 0, kMaxLeakDistance);
  const double n = static_cast<double>(std::max<uint64_t>(expected_count, 1));
  int best_bands = kMaxSearchBands;
  double best = std::numeric_limits<double>::max();
  for (int m = kMinSearchBands; m <= kMaxSearchBands; ++m) {
    const double cost = IndexCost(max_distance, m, n);
    if (cost < best) {
      best = cost;
      best_bands = m;
    }
  }
  return best_bands;
}

DuplicateIndex::DuplicateIndex(int max_distance, uint64_t expected_count)
    : DuplicateIndex(max_distance, expected_count, BandsFor(max_distance, expected_count)) {}

DuplicateIndex::DuplicateIndex(int max_distance, uint64_t expected_count, int bands)
    : max_distance_(std::clamp(max_distance, 0, kMaxLeakDistance)), t_(std::make_unique<Tables>()) {
  t_->layout = MakeBandLayout(max_distance_, bands);
  t_->bands.resize(t_->layout.bands);
  for (int b = 0; b < t_->layout.bands; ++b) t_->bands[b].buckets.resize(size_t{1} << t_->layout.bits[b]);
#if defined(__x86_64__)
  t_->avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
#endif
}

DuplicateIndex::~DuplicateIndex() = default;

int DuplicateIndex::bands() const { return t_->layout.bands; }

int DuplicateIndex::radius() const {
  return *std::max_element(t_->layout.radius, t_->layout.radius + t_->layout.bands);
}

void DuplicateIndex::Add(uint64_t hash, uint32_t id) {
  for (int b = 0; b < t_->layout.bands; ++b) t_->bands[b].Append(t_->layout.Band(hash, b), hash, id);
  ++size_;
}

void DuplicateIndex::AppendNear(uint64_t hash, std::vector<std::pair<uint32_t, int>>* out) const {
  AppendNear(&hash, 1, out);
}

void DuplicateIndex::AppendNear(const uint64_t* hashes, size_t count,
                                std::vector<std::pair<uint32_t, int>>* out) const {
  thread_local std::vector<Probe> probes;
  thread_local std::vector<Span> spans;
  thread_local std::vector<std::pair<uint32_t, size_t>> hits;
  thread_local std::vector<const uint64_t*> arenas;
  const BandLayout& l = t_->layout;
  for (size_t from = 0; from < count; from += kMaxQueries) {
    const size_t queries = std::min(count - from, kMaxQueries);
    probes.clear();
    for (size_t q = 0; q < queries; ++q) {
      for (int b = 0; b < l.bands; ++b) {
        const Bucket* buckets = t_->bands[b].buckets.data();
        ForEachWithin(l.Band(hashes[from + q], b), l.bits[b], l.radius[b], [&](uint32_t u) {
          __builtin_prefetch(buckets + u);
          probes.push_back({u, static_cast<uint16_t>(q), static_cast<uint16_t>(b)});
        });
      }
    }
    spans.clear();
    for (const Probe& p : probes) {
      const Band& t = t_->bands[p.band];
      const Bucket& k = t.buckets[p.value];
      if (k.size == 0) continue;
      const size_t first = size_t{k.block} * kBlock;
      __builtin_prefetch(t.hashes.data() + first);
      spans.push_back({first, k.size, p.query, p.band});
    }
    arenas.clear();
    for (const Band& t : t_->bands) arenas.push_back(t.hashes.data());
    hits.clear();
#if defined(__x86_64__)
    if (t_->avx2) {
      ScanAvx2(arenas, spans, hashes + from, max_distance_, &hits);
    } else
#endif
    {
      ScanPlain(arenas, spans, hashes + from, max_distance_, &hits);
    }
    for (const auto& [span, at] : hits) {
      const Span& s = spans[span];
      const uint64_t query = hashes[from + s.query], h = t_->bands[s.band].hashes[at];
      // Taken in the first band where the two are within its radius.
      if (!l.TakenBefore(query, h, s.band)) out->emplace_back(t_->bands[s.band].ids[at], BitCount(query ^ h));
    }
  }
}

void DuplicateIndex::ForEachNear(uint64_t hash, const std::function<void(uint32_t, int)>& found) const {
  std::vector<std::pair<uint32_t, int>> near;
  AppendNear(hash, &near);
  for (const auto& [id, distance] : near) found(id, distance);
}

FingerprintIndex::FingerprintIndex(int max_distance, uint64_t expected_count)
    : FingerprintIndex(max_distance, expected_count, 0) {}

FingerprintIndex::FingerprintIndex(int max_distance, uint64_t expected_count, int bands)
    : max_distance_(std::clamp(max_distance, 0, kMaxLeakDistance)),
      whole_(max_distance, expected_count, bands > 0 ? bands : DuplicateIndex::BandsFor(max_distance, expected_count)),
      regions_(max_distance, expected_count * (image::kHashRegions - 1),
               bands > 0 ? bands : DuplicateIndex::BandsFor(max_distance, expected_count * (image::kHashRegions - 1))) {
}

void FingerprintIndex::Add(const ImageFingerprint& f) {
  const uint32_t id = size();
  whole_.Add(f.hashes.phash[0], id);
  // Regions an older entry lacks are left out (NearDistance looks at known
  // regions only).
  for (int r = 1; r < std::clamp(f.regions, 1, image::kHashRegions); ++r) regions_.Add(f.hashes.phash[r], id);
  ImageFingerprint kept = f;
  kept.key_sha256.clear();
  prints_.push_back(std::move(kept));
}

void FingerprintIndex::ForEachNear(const ImageFingerprint& f, const std::function<void(uint32_t, int)>& found) const {
  // Candidates: whole against whole and against the others' regions, the
  // regions against the others' whole hashes; each image confirmed once.
  std::vector<std::pair<uint32_t, int>> candidates;
  regions_.AppendNear(f.hashes.phash[0], &candidates);
  whole_.AppendNear(f.hashes.phash.data(), static_cast<size_t>(std::clamp(f.regions, 1, image::kHashRegions)),
                    &candidates);
  std::sort(candidates.begin(), candidates.end());
  for (size_t i = 0; i < candidates.size(); ++i) {
    const uint32_t id = candidates[i].first;
    if (i > 0 && id == candidates[i - 1].first) continue;
    const int d = NearDistance(f, prints_[id], max_distance_);
    if (d <= max_distance_) found(id, d);
  }
}

}  // namespace libshard::convert
