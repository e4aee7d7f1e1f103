// The leak check's incremental search (duplicate_index.h). Per band, a flat
// array of buckets over two arenas, each bucket's entries in one block of
// 8 << k entries (grown by doubling; blocks left behind are reused by
// size): the entries' folds (Fold: 32 bits of each hash, what a probe
// compares) and their numbers (an index into the hashes and ids kept once
// per Add, read only for the few folds within the distance). A query
// builds its probe values per band (ForEachWithin), reads each bucket's
// block of folds and compares eight at a time (WithinMask8, where the CPU
// has AVX2; lanes past the bucket's size masked off). Lookups of several
// hashes, and of two indexes, go through the stages together (probe values,
// bucket headers, blocks of folds: each stage prefetches what the next one
// reads), so the cache misses of an image's few hundred probes overlap.
#include "libshard/convert/duplicate_index.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <new>

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

// The 32 bits a band's arena keeps of a hash: its two halves XORed. The
// fold is linear and a bit of Fold(a ^ b) is set only where a ^ b has one
// of its two bits set, so BitCount(Fold(a) ^ Fold(b)) <= BitCount(a ^ b):
// a hash within the distance has its fold within it too, and the folds
// within it are then checked on the whole hashes (two random hashes' folds
// are within 6 bits once in some 3,700).
uint32_t Fold(uint64_t h) { return static_cast<uint32_t>(h ^ (h >> 32)); }

// Arenas of 2 MiB and more on huge pages where the kernel gives them
// (madvise; advisory): a probe reads a random place of hundreds of
// megabytes at a million images, and with 4 KiB pages each read is a TLB
// miss too.
constexpr size_t kHugePage = size_t{2} << 20;
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  explicit HugePageAllocator(const HugePageAllocator<U>&) {}
  static size_t Rounded(size_t n) { return (n * sizeof(T) + kHugePage - 1) / kHugePage * kHugePage; }
  T* allocate(size_t n) {
    if (n * sizeof(T) < kHugePage) return static_cast<T*>(::operator new(n * sizeof(T)));
    void* p = std::aligned_alloc(kHugePage, Rounded(n));
    if (p == nullptr) throw std::bad_alloc();
    (void)::madvise(p, Rounded(n), MADV_HUGEPAGE);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < kHugePage) {
      ::operator delete(p);
    } else {
      std::free(p);
    }
  }
  bool operator==(const HugePageAllocator&) const { return true; }
  bool operator!=(const HugePageAllocator&) const { return false; }
};
template <typename T>
using Arena = std::vector<T, HugePageAllocator<T>>;

constexpr size_t kMaxQueries = 256;  // a stage's batch: its blocks of folds stay in cache
constexpr uint32_t kBlock = 8;       // entries: the least block (one 32-byte compare), the unit of Bucket::block

struct Bucket {
  uint32_t block = 0;  // first entry / kBlock
  uint32_t size = 0;
  uint32_t capacity = 0;  // 0 or kBlock << k
};

// One band's table.
struct Band {
  Arena<Bucket> buckets;  // by band value
  Arena<uint32_t> folds;
  Arena<uint32_t> entries;                  // the entry (DuplicateIndex::Tables::hashes) of each fold
  std::vector<std::vector<uint32_t>> free;  // by k: blocks of kBlock << k entries no bucket uses

  void Append(uint32_t value, uint32_t fold, uint32_t entry) {
    Bucket& b = buckets[value];
    if (b.size == b.capacity) Grow(&b);
    const size_t at = size_t{b.block} * kBlock + b.size++;
    folds[at] = fold;
    entries[at] = entry;
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
      block = static_cast<uint32_t>(folds.size() / kBlock);
      folds.resize(folds.size() + capacity);
      entries.resize(entries.size() + capacity);
    }
    const size_t from = size_t{b->block} * kBlock, to = size_t{block} * kBlock;
    std::copy_n(folds.begin() + from, b->size, folds.begin() + to);
    std::copy_n(entries.begin() + from, b->size, entries.begin() + to);
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

}  // namespace

struct DuplicateIndex::Tables {
  BandLayout layout;
  std::vector<Band> bands;
  Arena<uint64_t> hashes;  // by entry (the order of Add)
  Arena<uint32_t> ids;
  bool avx2 = false;
};

namespace {

// One hash looked up, its stages' records: a probed bucket, then its run
// of folds (positions [first, first + size) of the band's arenas).
struct Query {
  uint64_t hash;
  uint32_t fold;
  int max_distance;
  const DuplicateIndex::Tables* t;
};
struct Probe {
  const Bucket* bucket;
  uint32_t query;
  uint32_t band;
};
struct Span {
  const uint32_t* folds;
  uint32_t first;
  uint32_t size;
  uint32_t query;
  uint32_t band;
};

// The spans' folds within their queries' distance, appended to *hits as
// (span, position): one compare at a time, or eight (AVX2; lanes past a
// span's size masked off: blocks hold whole multiples of 8 entries).
void ScanPlain(const std::vector<Query>& queries, const std::vector<Span>& spans,
               std::vector<std::pair<uint32_t, uint32_t>>* hits) {
  for (uint32_t i = 0; i < spans.size(); ++i) {
    const Span& s = spans[i];
    const Query& q = queries[s.query];
    for (uint32_t e = 0; e < s.size; ++e) {
      if (BitCount(q.fold ^ s.folds[e]) <= q.max_distance) hits->emplace_back(i, s.first + e);
    }
  }
}
#if defined(__x86_64__)
// Eight 32-bit Hamming distances at once: bit k of the result is set when
// folds[k] is within `limit` (each 32-bit lane) bits of `query` (in every
// lane). Bits counted by nibbles (a 16-entry table), then the bytes summed
// per lane by two multiply-adds with ones.
__attribute__((target("avx2"), always_inline)) inline int WithinMask8(const uint32_t* folds, __m256i query,
                                                                      __m256i limit) {
  const __m256i table =
      _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i x = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(folds)), query);
  const __m256i bytes = _mm256_add_epi8(_mm256_shuffle_epi8(table, _mm256_and_si256(x, nibble)),
                                        _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(x, 4), nibble)));
  const __m256i words = _mm256_maddubs_epi16(bytes, _mm256_set1_epi8(1));
  const __m256i bits = _mm256_madd_epi16(words, _mm256_set1_epi16(1));
  return ~_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(bits, limit))) & 0xff;
}

__attribute__((target("avx2"))) void ScanAvx2(const std::vector<Query>& queries, const std::vector<Span>& spans,
                                              std::vector<std::pair<uint32_t, uint32_t>>* hits) {
  for (uint32_t i = 0; i < spans.size(); ++i) {
    const Span& s = spans[i];
    const Query& q = queries[s.query];
    const __m256i query = _mm256_set1_epi32(static_cast<int>(q.fold));
    const __m256i limit = _mm256_set1_epi32(q.max_distance);
    for (uint32_t e = 0; e < s.size; e += kBlock) {
      int near = WithinMask8(s.folds + e, query, limit);
      if (s.size - e < kBlock) near &= (1 << (s.size - e)) - 1;
      for (; near != 0; near &= near - 1) hits->emplace_back(i, s.first + e + __builtin_ctz(near));
    }
  }
}
#endif

// The hashes of queries[0, n) within their distance: probes, spans, folds,
// then the hashes of the folds within it.
void Search(const std::vector<Query>& queries, std::vector<std::pair<uint32_t, int>>* out) {
  thread_local std::vector<Probe> probes;
  thread_local std::vector<Span> spans;
  thread_local std::vector<std::pair<uint32_t, uint32_t>> hits;
  probes.clear();
  for (uint32_t q = 0; q < queries.size(); ++q) {
    const DuplicateIndex::Tables& t = *queries[q].t;
    for (int b = 0; b < t.layout.bands; ++b) {
      const Bucket* buckets = t.bands[b].buckets.data();
      ForEachWithin(t.layout.Band(queries[q].hash, b), t.layout.bits[b], t.layout.radius[b], [&](uint32_t u) {
        __builtin_prefetch(buckets + u);
        probes.push_back({buckets + u, q, static_cast<uint32_t>(b)});
      });
    }
  }
  spans.clear();
  for (const Probe& p : probes) {
    const Bucket k = *p.bucket;
    if (k.size == 0) continue;
    const size_t first = size_t{k.block} * kBlock;
    const uint32_t* folds = queries[p.query].t->bands[p.band].folds.data() + first;
    const char* line = reinterpret_cast<const char*>(folds);
    for (size_t at = 0; at < k.size * sizeof(uint32_t); at += 64) __builtin_prefetch(line + at);
    spans.push_back({folds, static_cast<uint32_t>(first), k.size, p.query, p.band});
  }
  hits.clear();
#if defined(__x86_64__)
  if (!queries.empty() && queries[0].t->avx2) {
    ScanAvx2(queries, spans, &hits);
  } else
#endif
  {
    ScanPlain(queries, spans, &hits);
  }
  for (const auto& [span, at] : hits) {
    const Span& s = spans[span];
    const Query& q = queries[s.query];
    const uint32_t entry = q.t->bands[s.band].entries[at];
    const uint64_t h = q.t->hashes[entry];
    const int distance = BitCount(q.hash ^ h);
    // Taken in the first band where the two are within its radius.
    if (distance <= q.max_distance && !q.t->layout.TakenBefore(q.hash, h, static_cast<int>(s.band))) {
      out->emplace_back(q.t->ids[entry], distance);
    }
  }
}

}  // namespace

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
  // Room for the expected count (address space: pages are taken as they
  // are written), so that the arenas are not copied as they grow: a block
  // of a bucket holding s entries has room for up to 2s, at least kBlock.
  const size_t expected = static_cast<size_t>(std::min<uint64_t>(expected_count, uint64_t{1} << 30));
  for (int b = 0; b < t_->layout.bands; ++b) {
    Band& band = t_->bands[b];
    band.buckets.resize(size_t{1} << t_->layout.bits[b]);
    const size_t room = 2 * expected + std::min(expected, band.buckets.size()) * kBlock;
    band.folds.reserve(room);
    band.entries.reserve(room);
  }
  t_->hashes.reserve(expected);
  t_->ids.reserve(expected);
#if defined(__x86_64__)
  t_->avx2 = __builtin_cpu_supports("avx2");
#endif
}

DuplicateIndex::~DuplicateIndex() = default;

int DuplicateIndex::bands() const { return t_->layout.bands; }

int DuplicateIndex::radius() const {
  return *std::max_element(t_->layout.radius, t_->layout.radius + t_->layout.bands);
}

void DuplicateIndex::Add(uint64_t hash, uint32_t id) {
  const uint32_t entry = static_cast<uint32_t>(t_->hashes.size());
  t_->hashes.push_back(hash);
  t_->ids.push_back(id);
  const uint32_t fold = Fold(hash);
  for (int b = 0; b < t_->layout.bands; ++b) t_->bands[b].Append(t_->layout.Band(hash, b), fold, entry);
  ++size_;
}

void DuplicateIndex::AppendNear(uint64_t hash, std::vector<std::pair<uint32_t, int>>* out) const {
  AppendNear(&hash, 1, out);
}

void DuplicateIndex::AppendNear(const uint64_t* hashes, size_t count,
                                std::vector<std::pair<uint32_t, int>>* out) const {
  const Lookup lookup{this, hashes, count};
  AppendNear(&lookup, 1, out);
}

void DuplicateIndex::AppendNear(const Lookup* lookups, size_t count, std::vector<std::pair<uint32_t, int>>* out) {
  thread_local std::vector<Query> queries;
  queries.clear();
  for (size_t i = 0; i < count; ++i) {
    const Lookup& l = lookups[i];
    for (size_t k = 0; k < l.count; ++k) {
      queries.push_back({l.hashes[k], Fold(l.hashes[k]), l.index->max_distance_, l.index->t_.get()});
      if (queries.size() == kMaxQueries) {
        Search(queries, out);
        queries.clear();
      }
    }
  }
  if (!queries.empty()) Search(queries, out);
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
  prints_.reserve(static_cast<size_t>(std::min<uint64_t>(expected_count, uint64_t{1} << 30)));
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
  // regions against the others' whole hashes (both lookups at once); each
  // image confirmed once.
  std::vector<std::pair<uint32_t, int>> candidates;
  const DuplicateIndex::Lookup lookups[] = {
      {&regions_, f.hashes.phash.data(), 1},
      {&whole_, f.hashes.phash.data(), static_cast<size_t>(std::clamp(f.regions, 1, image::kHashRegions))}};
  DuplicateIndex::AppendNear(lookups, 2, &candidates);
  std::sort(candidates.begin(), candidates.end());
  for (size_t i = 0; i < candidates.size(); ++i) {
    const uint32_t id = candidates[i].first;
    if (i > 0 && id == candidates[i - 1].first) continue;
    const int d = NearDistance(f, prints_[id], max_distance_);
    if (d <= max_distance_) found(id, d);
  }
}

}  // namespace libshard::convert
