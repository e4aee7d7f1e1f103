// The leak check's incremental search (duplicate_index.h). Per band, a flat
// array of buckets, each one cache line: its size and its first kInline
// folds (Fold: 32 bits of each hash, what a probe compares); the rest of a
// bucket's folds in one block of an arena, of 8 << k entries (grown by
// doubling; blocks left behind are reused by size), beside their entry
// numbers (an index into the hashes and ids kept once per Add, read only
// for the few folds within the distance). A query builds its probe values
// per band (ForEachWithin), reads each bucket's line and its block and
// compares eight folds at a time (WithinMask8, where the CPU has AVX2;
// lanes past the bucket's size masked off). Lookups of several hashes, and
// of two indexes, go through the stages together, pipelined (Search), so
// the cache misses of an image's few hundred probes overlap.
#include "libshard/convert/duplicate_index.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <new>
#include <utility>

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
constexpr size_t kHugePage = size_t{2} << 20, kLine = 64;
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  explicit HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(size_t n) {
    const bool huge = n * sizeof(T) >= kHugePage;
    const size_t align = huge ? kHugePage : kLine, bytes = (n * sizeof(T) + align - 1) / align * align;
    void* p = std::aligned_alloc(align, bytes);
    if (p == nullptr) throw std::bad_alloc();
    if (huge) (void)::madvise(p, bytes, MADV_HUGEPAGE);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }
  bool operator==(const HugePageAllocator&) const { return true; }
  bool operator!=(const HugePageAllocator&) const { return false; }
};
template <typename T>
using Arena = std::vector<T, HugePageAllocator<T>>;

// A fixed array of zeros, mapped (the kernel's zero pages until written:
// the buckets of a wide band that few hashes reach cost address space
// only), on huge pages where it is to be `dense` (else a few writes would
// each take a 2 MiB page).
template <typename T>
class ZeroArray {
 public:
  ZeroArray() = default;
  ZeroArray(size_t n, bool dense) : bytes_(std::max<size_t>(n * sizeof(T), 1)) {
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    if (dense && bytes_ >= kHugePage) (void)::madvise(p, bytes_, MADV_HUGEPAGE);
    data_ = static_cast<T*>(p);
  }
  ~ZeroArray() {
    if (data_ != nullptr) ::munmap(data_, bytes_);
  }
  ZeroArray(ZeroArray&& o) noexcept : data_(std::exchange(o.data_, nullptr)), bytes_(o.bytes_) {}
  ZeroArray& operator=(ZeroArray&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T* data() const { return data_; }

 private:
  T* data_ = nullptr;
  size_t bytes_ = 0;
};

constexpr size_t kMaxQueries = 256;  // a stage's batch: its blocks of folds stay in cache
constexpr uint32_t kBlock = 8;       // entries: the least block (one 32-byte compare), the unit of Bucket::block

// A bucket is one cache line: its size and its first kInline folds, so
// that a probe of a bucket holding up to kInline entries (most of them
// where the band count suits the count) reads one line. The rest are in
// the arenas, in a block of kBlock << k entries (the least that holds
// them: grown when the rest's count reaches kBlock << k).
constexpr uint32_t kInline = 14;
struct alignas(kLine) Bucket {
  uint32_t size = 0;
  uint32_t block = 0;  // the rest's first entry / kBlock (size > kInline)
  uint32_t folds[kInline] = {};
};
static_assert(sizeof(Bucket) == kLine, "a bucket is a cache line");

// One band's table.
struct Band {
  ZeroArray<Bucket> buckets;                // by band value
  ZeroArray<uint32_t> inline_entries;       // by band value, kInline each: the entry of each inline fold
  Arena<uint32_t> folds;                    // the blocks
  Arena<uint32_t> entries;                  // the entry (DuplicateIndex::Tables::hashes) of each fold
  std::vector<std::vector<uint32_t>> free;  // by k: blocks of kBlock << k entries no bucket uses

  // The entry of a bucket's i-th fold.
  uint32_t EntryOf(uint32_t value, uint32_t i) const {
    if (i < kInline) return inline_entries[size_t{value} * kInline + i];
    return entries[size_t{buckets[value].block} * kBlock + (i - kInline)];
  }

  void Append(uint32_t value, uint32_t fold, uint32_t entry) {
    Bucket& b = buckets[value];
    if (b.size < kInline) {
      b.folds[b.size] = fold;
      inline_entries[size_t{value} * kInline + b.size] = entry;
    } else {
      const uint32_t rest = b.size - kInline;
      if (rest == 0 || (rest % kBlock == 0 && (rest & (rest - 1)) == 0)) Grow(&b, rest);
      const size_t at = size_t{b.block} * kBlock + rest;
      folds[at] = fold;
      entries[at] = entry;
    }
    ++b.size;
  }

  // Moves the `rest` entries past the inline ones to a block twice the
  // size (kBlock for none).
  void Grow(Bucket* b, uint32_t rest) {
    const uint32_t capacity = rest == 0 ? kBlock : 2 * rest;
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
    std::copy_n(folds.begin() + from, rest, folds.begin() + to);
    std::copy_n(entries.begin() + from, rest, entries.begin() + to);
    if (rest > 0) free[k - 1].push_back(b->block);
    b->block = block;
  }
};

// Estimated work of one query among n hashes in m bands, in cache lines
// read: per probed value its bucket's line, and the lines of the folds
// past the inline ones (16 a line), plus their compares (8 at a time,
// about 1/8 of a line's wait each); an Add writes a line per band. Layouts
// with more buckets (64 bytes each) than about n / 4 + 2^16 are left out
// (memory).
double IndexCost(int max_distance, int m, double n) {
  const BandLayout l = MakeBandLayout(max_distance, m);
  double cost = m;
  for (int b = 0; b < m; ++b) {
    const double values = static_cast<double>(uint64_t{1} << l.bits[b]);
    if (values > n / 4 + 65536) return std::numeric_limits<double>::max();
    const double folds = n / values;
    cost += Probes(l.bits[b], l.radius[b]) * (1 + std::max(0.0, folds - kInline) / 16 + folds / 64);
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
  uint32_t value;
  uint32_t query;
  uint32_t band;
};
struct Span {
  const Bucket* bucket;
  const uint32_t* rest;  // its folds past the inline ones
  uint32_t value;
  uint32_t query;
  uint32_t band;
};
// A fold within the distance: the span, and the fold's place in its bucket.
struct Hit {
  uint32_t span;
  uint32_t i;
};

// The spans' folds within their queries' distance, appended to *hits: one
// compare at a time, or eight (AVX2; lanes past a bucket's size masked off:
// blocks hold whole multiples of 8 entries).
void ScanPlain(const std::vector<Query>& queries, const std::vector<Span>& spans, size_t from, size_t to,
               std::vector<Hit>* hits) {
  for (uint32_t i = static_cast<uint32_t>(from); i < to; ++i) {
    const Span& s = spans[i];
    const Query& q = queries[s.query];
    for (uint32_t e = 0; e < s.bucket->size; ++e) {
      const uint32_t fold = e < kInline ? s.bucket->folds[e] : s.rest[e - kInline];
      if (BitCount(q.fold ^ fold) <= q.max_distance) hits->push_back({i, e});
    }
  }
}
#if defined(__x86_64__)
// Eight 32-bit Hamming distances at once: bit k of the result is set when
// folds[k] is within `limit` (each 32-bit lane) bits of `query` (in every
// lane): the XORs' bits counted per byte (ByteBitCounts), the bytes summed
// per lane by two multiply-adds with ones.
__attribute__((target("avx2"), always_inline)) inline int WithinMask8(const uint32_t* folds, __m256i query,
                                                                      __m256i limit) {
  const __m256i x = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(folds)), query);
  const __m256i words = _mm256_maddubs_epi16(ByteBitCounts(x), _mm256_set1_epi8(1));
  const __m256i bits = _mm256_madd_epi16(words, _mm256_set1_epi16(1));
  return ~_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(bits, limit))) & 0xff;
}

__attribute__((target("avx2"))) void ScanAvx2(const std::vector<Query>& queries, const std::vector<Span>& spans,
                                              size_t from, size_t to, std::vector<Hit>* hits) {
  static_assert(kInline > kBlock && kInline <= 2 * kBlock, "two compares of a bucket's line");
  for (uint32_t i = static_cast<uint32_t>(from); i < to; ++i) {
    const Span& s = spans[i];
    const Query& q = queries[s.query];
    const __m256i query = _mm256_set1_epi32(static_cast<int>(q.fold));
    const __m256i limit = _mm256_set1_epi32(q.max_distance);
    const uint32_t size = s.bucket->size, in_line = std::min(size, kInline);
    // The line's folds: [0, 8), then [kInline - 8, kInline) shifted to
    // [8, kInline) (within the line; the overlap dropped).
    uint32_t near = WithinMask8(s.bucket->folds, query, limit);
    if (in_line > kBlock)
      near |= (WithinMask8(s.bucket->folds + kInline - kBlock, query, limit) >> (2 * kBlock - kInline)) << kBlock;
    near &= (uint32_t{1} << in_line) - 1;
    for (; near != 0; near &= near - 1) hits->push_back({i, static_cast<uint32_t>(__builtin_ctz(near))});
    for (uint32_t e = 0; e + kInline < size; e += kBlock) {
      uint32_t more = WithinMask8(s.rest + e, query, limit);
      if (size - kInline - e < kBlock) more &= (1u << (size - kInline - e)) - 1;
      for (; more != 0; more &= more - 1) hits->push_back({i, kInline + e + __builtin_ctz(more)});
    }
  }
}
#endif

// The hashes of queries[0, n) within their distance: probes, spans, folds,
// then the hashes of the folds within it.
void Search(const std::vector<Query>& queries, std::vector<std::pair<uint32_t, int>>* out) {
  thread_local std::vector<Probe> probes;
  thread_local std::vector<Span> spans;
  thread_local std::vector<Hit> hits;
  probes.clear();
  for (uint32_t q = 0; q < queries.size(); ++q) {
    const DuplicateIndex::Tables& t = *queries[q].t;
    for (int b = 0; b < t.layout.bands; ++b) {
      ForEachWithin(t.layout.Band(queries[q].hash, b), t.layout.bits[b], t.layout.radius[b], [&](uint32_t u) {
        probes.push_back({u, q, static_cast<uint32_t>(b)});
      });
    }
  }
  // A pipeline over chunks of kAhead probes: prefetch the buckets of one
  // chunk, read those of the chunk before (prefetching the folds past
  // their lines) and compare the spans of the one before that; so a few
  // dozen misses are in flight at a time (prefetching them all at once
  // would overflow the core's queue of misses, which drops the rest).
  constexpr size_t kAhead = 16;
  spans.clear();
  hits.clear();
  size_t scanned = 0;
  for (size_t chunk = 0; chunk < probes.size() + 2 * kAhead; chunk += kAhead) {
    for (size_t i = chunk; i < std::min(chunk + kAhead, probes.size()); ++i) {
      const Probe& p = probes[i];
      __builtin_prefetch(queries[p.query].t->bands[p.band].buckets.data() + p.value);
    }
    const size_t ready = spans.size();
    for (size_t i = chunk - std::min(chunk, kAhead); i < std::min(chunk, probes.size()); ++i) {
      const Probe& p = probes[i];
      const Band& band = queries[p.query].t->bands[p.band];
      const Bucket* bucket = &band.buckets[p.value];
      if (bucket->size == 0) continue;
      const uint32_t* rest = nullptr;
      if (bucket->size > kInline) {
        rest = band.folds.data() + size_t{bucket->block} * kBlock;
        const char* line = reinterpret_cast<const char*>(rest);
        for (size_t at = 0; at < (bucket->size - kInline) * sizeof(uint32_t); at += kLine)
          __builtin_prefetch(line + at);
      }
      spans.push_back({bucket, rest, p.value, p.query, p.band});
    }
#if defined(__x86_64__)
    if (queries[0].t->avx2) {
      ScanAvx2(queries, spans, scanned, ready, &hits);
    } else
#endif
    {
      ScanPlain(queries, spans, scanned, ready, &hits);
    }
    scanned = ready;
  }
  for (const Hit& hit : hits) {
    const Span& s = spans[hit.span];
    const Query& q = queries[s.query];
    const uint32_t entry = q.t->bands[s.band].EntryOf(s.value, hit.i);
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
    const size_t values = size_t{1} << t_->layout.bits[b];
    const bool dense = expected >= values / 4;
    band.buckets = ZeroArray<Bucket>(values, dense);
    band.inline_entries = ZeroArray<uint32_t>(values * kInline, dense);
    const size_t room = 2 * expected + std::min(expected, values) * kBlock;
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
      regions_(max_distance, expected_count * image::kHashRegions,  // the nine other regions and the mirror
               bands > 0 ? bands : DuplicateIndex::BandsFor(max_distance, expected_count * image::kHashRegions)) {
  prints_.reserve(static_cast<size_t>(std::min<uint64_t>(expected_count, uint64_t{1} << 30)));
}

void FingerprintIndex::Add(const ImageFingerprint& f) {
  const uint32_t id = size();
  whole_.Add(f.hashes.phash[0], id);
  // Regions an older entry lacks are left out (NearDistance looks at known
  // regions only).
  for (int r = 1; r < std::clamp(f.regions, 1, image::kHashRegions); ++r) regions_.Add(f.hashes.phash[r], id);
  if (f.has_mirror) regions_.Add(f.hashes.mirror, id);  // a later mirrored copy's whole hash is near it
  ImageFingerprint kept = f;
  kept.key_sha256.clear();
  prints_.push_back(std::move(kept));
}

void FingerprintIndex::ForEachNear(const ImageFingerprint& f, const std::function<void(uint32_t, int)>& found) const {
  // Candidates: whole against whole and against the others' regions and
  // mirrors, the regions against the others' whole hashes (both lookups at
  // once); each image confirmed once.
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
