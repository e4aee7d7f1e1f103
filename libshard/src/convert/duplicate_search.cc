// The leak check's batch search (duplicates.h, "Search"): every image's
// whole hash looked up among every image's region hashes (whole included),
// one band at a time. Per band, the region hashes and the whole hashes are
// both counting-sorted by the band's value into flat tables (start offsets,
// then the hashes, then their images); the whole hashes sharing a value
// (a group) are compared at once with each bucket within the radius of that
// value, so a bucket is read once per group and stays in cache. A pair of
// hashes is taken in the first band where the two are within the radius;
// the pair of images is confirmed by NearDistance; the pairs are sorted at
// the end, so the output does not depend on the threads.
#include "duplicate_search.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>

#include "libshard/image/perceptual_hash.h"

namespace libshard::convert {

double Probes(int bits, int radius) {
  double total = 0, c = 1;
  for (int k = 0; k <= radius; ++k) {
    total += c;
    c = c * (bits - k) / (k + 1);
  }
  return total;
}

namespace {

// Hashes and their images sorted by one band's value (stable: in input
// order within a value): bucket v is [start[v], start[v + 1]).
struct Table {
  std::vector<size_t> start;
  std::vector<uint64_t> hash;
  std::vector<uint32_t> image;
};

void Fill(const BandLayout& l, int band, const std::vector<uint64_t>& hashes, const std::vector<uint32_t>& images,
          Table* t) {
  const size_t values = size_t{1} << l.bits[band];
  t->start.assign(values + 1, 0);
  for (uint64_t h : hashes) ++t->start[l.Band(h, band) + 1];
  for (size_t v = 0; v < values; ++v) t->start[v + 1] += t->start[v];
  t->hash.resize(hashes.size());
  t->image.resize(hashes.size());
  std::vector<size_t> next(t->start.begin(), t->start.end() - 1);
  for (size_t i = 0; i < hashes.size(); ++i) {
    const size_t at = next[l.Band(hashes[i], band)]++;
    t->hash[at] = hashes[i];
    t->image[at] = images[i];
  }
}

// The pairs a search may hold (SearchNearPairs' max_pairs), shared by its
// threads: once spent, `cut` is set and the loops stop at their next group.
struct PairBudget {
  size_t max_pairs;
  std::atomic<size_t> held{0};
  std::atomic<bool> cut{false};
  bool Take() {
    if (held.fetch_add(1, std::memory_order_relaxed) < max_pairs) return true;
    cut.store(true, std::memory_order_relaxed);
    return false;
  }
  bool Spent() const { return cut.load(std::memory_order_relaxed); }
};

// One band's search over the query values [from, to): hits go to Take.
struct BandSearch {
  const BandLayout& l;
  int band;
  int max_distance;
  const Table& entries;
  const Table& queries;
  const std::vector<const ImageFingerprint*>& prints;
  bool vector;
  std::vector<NearPair>* out;
  PairBudget* budget;

  void Take(size_t query, size_t entry) const {
    const uint32_t qi = queries.image[query], ei = entries.image[entry];
    if (qi == ei || l.TakenBefore(queries.hash[query], entries.hash[entry], band)) return;
    const uint32_t a = std::min(qi, ei), b = std::max(qi, ei);
    const int d = NearDistance(*prints[a], *prints[b], max_distance);
    if (d <= max_distance && budget->Take()) out->push_back({a, b, d});
  }

  // The queries with band value v ([*q0, *q1)) and the buckets to compare
  // them with; false when there are none.
  bool Group(uint32_t v, size_t* q0, size_t* q1, std::vector<uint32_t>* probes) const {
    if (budget->Spent()) return false;
    *q0 = queries.start[v];
    *q1 = queries.start[v + 1];
    if (*q0 == *q1) return false;
    probes->clear();
    ForEachWithin(v, l.bits[band], l.radius[band], [probes](uint32_t u) { probes->push_back(u); });
    return true;
  }

  // The compare loop, inlined into a plain and a popcnt build of Run (no
  // call in it: a lambda would be built without popcnt).
  __attribute__((always_inline)) inline void RunInline(uint32_t from, uint32_t to) const {
    const uint64_t* qh = queries.hash.data();
    const uint64_t* eh = entries.hash.data();
    std::vector<uint32_t> probes;
    size_t q0, q1;
    for (uint32_t v = from; v < to; ++v) {
      if (!Group(v, &q0, &q1, &probes)) continue;
      for (uint32_t u : probes) {
        const size_t e1 = entries.start[u + 1];
        for (size_t e = entries.start[u]; e < e1; ++e) {
          const uint64_t h = eh[e];
          for (size_t q = q0; q < q1; ++q) {
            if (__builtin_popcountll(h ^ qh[q]) <= max_distance) Take(q, e);
          }
        }
      }
    }
  }
#if defined(__x86_64__)
  __attribute__((target("popcnt"))) void RunPopcnt(uint32_t from, uint32_t to) const { RunInline(from, to); }
  // The same with four compares at once (WithinMask4); the bucket's last
  // < 4 hashes one by one.
  __attribute__((target("avx2,popcnt"))) void RunAvx2(uint32_t from, uint32_t to) const {
    const __m256i limit = _mm256_set1_epi64x(max_distance);
    const uint64_t* qh = queries.hash.data();
    const uint64_t* eh = entries.hash.data();
    std::vector<uint32_t> probes;
    size_t q0, q1;
    for (uint32_t v = from; v < to; ++v) {
      if (!Group(v, &q0, &q1, &probes)) continue;
      for (uint32_t u : probes) {
        const size_t e0 = entries.start[u], e1 = entries.start[u + 1];
        for (size_t q = q0; q < q1; ++q) {
          const __m256i query = _mm256_set1_epi64x(static_cast<long long>(qh[q]));
          size_t e = e0;
          for (; e + 4 <= e1; e += 4) {
            const int near = WithinMask4(eh + e, query, limit);
            if (near == 0) continue;
            for (int k = 0; k < 4; ++k) {
              if (near >> k & 1) Take(q, e + k);
            }
          }
          for (; e < e1; ++e) {
            if (__builtin_popcountll(qh[q] ^ eh[e]) <= max_distance) Take(q, e);
          }
        }
      }
    }
  }
#endif
  void RunPlain(uint32_t from, uint32_t to) const { RunInline(from, to); }
  void Run(uint32_t from, uint32_t to) const {
#if defined(__x86_64__)
    static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    static const bool popcnt = __builtin_cpu_supports("popcnt");
    if (avx2 && vector) return RunAvx2(from, to);
    if (popcnt) return RunPopcnt(from, to);
#endif
    RunPlain(from, to);
  }
};

// The threads' pairs, sorted by (a, b), each once: a pair comes once per
// pair of hashes within the distance (and from either side for whole
// against whole), always with its distance (NearDistance's).
std::vector<NearPair> SortedOnce(tbb::enumerable_thread_specific<std::vector<NearPair>>* found) {
  std::vector<NearPair> pairs;
  for (std::vector<NearPair>& part : *found) {
    pairs.insert(pairs.end(), part.begin(), part.end());
    part = {};
  }
  std::sort(pairs.begin(), pairs.end(),
            [](const NearPair& x, const NearPair& y) { return x.a != y.a ? x.a < y.a : x.b < y.b; });
  pairs.erase(std::unique(pairs.begin(), pairs.end(),
                          [](const NearPair& x, const NearPair& y) { return x.a == y.a && x.b == y.b; }),
              pairs.end());
  return pairs;
}

}  // namespace

BandLayout MakeBandLayout(int max_distance, int bands) {
  BandLayout l;
  l.bands = std::clamp(bands, kMinSearchBands, kMaxSearchBands);
  int shift = 0;
  for (int b = 0; b < l.bands; ++b) {
    l.shift[b] = shift;
    l.bits[b] = BandBits(l.bands, b);
    l.radius[b] = BandRadius(max_distance, l.bands, b);
    shift += l.bits[b];
  }
  return l;
}

int SearchBands(int max_distance, uint64_t images) {
  max_distance = std::clamp(max_distance, 0, kMaxLeakDistance);
  // Work per layout, in 64-bit compares: the compares themselves (every
  // query against each bucket within its band's radius), a probe of a
  // bucket per group of queries (a cache miss or two, worth about kProbe
  // compares), and the counting sorts (kFill per hash placed, one per slot).
  constexpr double kProbe = 30, kFill = 10;
  const double queries = static_cast<double>(std::max<uint64_t>(images, 1));
  const double entries = queries * (image::kHashRegions + 1);  // the regions and the mirror
  double best = std::numeric_limits<double>::max();
  int best_bands = 4;
  for (int m = kMinSearchBands; m <= kMaxSearchBands; ++m) {
    const BandLayout l = MakeBandLayout(max_distance, m);
    double cost = 0;
    for (int b = 0; b < m; ++b) {
      const double values = static_cast<double>(uint64_t{1} << l.bits[b]);
      const double probes = Probes(l.bits[b], l.radius[b]);
      cost += queries * probes * entries / values + std::min(queries, values) * probes * kProbe + values +
              (entries + queries) * kFill;
    }
    if (cost < best) {
      best = cost;
      best_bands = m;
    }
  }
  return best_bands;
}

std::vector<NearPair> SearchNearPairs(const std::vector<const ImageFingerprint*>& prints, int max_distance, int bands,
                                      bool vector, size_t max_pairs, bool* cut) {
  max_distance = std::clamp(max_distance, 0, kMaxLeakDistance);
  const BandLayout l = MakeBandLayout(max_distance, bands);
  // The lookups: each whole hash (query) among every region hash of every
  // image, its own whole hash included, and its mirrored whole hash
  // (entries). Regions an older entry lacks are left out (NearDistance
  // looks at known regions only).
  std::vector<uint64_t> query_hash(prints.size()), entry_hash;
  std::vector<uint32_t> query_image(prints.size()), entry_image;
  for (uint32_t i = 0; i < prints.size(); ++i) {
    const ImageFingerprint& f = *prints[i];
    query_hash[i] = f.hashes.phash[0];
    query_image[i] = i;
    for (int r = 0; r < std::clamp(f.regions, 1, image::kHashRegions); ++r) {
      entry_hash.push_back(f.hashes.phash[r]);
      entry_image.push_back(i);
    }
    if (f.has_mirror) {  // a mirrored copy's whole hash is near this one
      entry_hash.push_back(f.hashes.mirror);
      entry_image.push_back(i);
    }
  }
  tbb::enumerable_thread_specific<std::vector<NearPair>> found;
  PairBudget budget{max_pairs};
  Table entries, queries;
  for (int band = 0; band < l.bands && !budget.Spent(); ++band) {
    Fill(l, band, entry_hash, entry_image, &entries);
    Fill(l, band, query_hash, query_image, &queries);
    const uint32_t values = uint32_t{1} << l.bits[band];
    tbb::parallel_for(tbb::blocked_range<uint32_t>(0, values, 64), [&](const tbb::blocked_range<uint32_t>& range) {
      const BandSearch search{l, band, max_distance, entries, queries, prints, vector, &found.local(), &budget};
      search.Run(range.begin(), range.end());
    });
  }
  *cut = budget.Spent();
  return SortedOnce(&found);
}

std::vector<NearPair> SearchPlainPairs(const std::vector<const ImageFingerprint*>& prints, int max_distance,
                                       size_t max_pairs, bool* cut) {
  max_distance = std::clamp(max_distance, 0, kMaxLeakDistance);
  constexpr int kCell = kColourLevels + 1;  // colours within kColourLevels: in one cell or the next
  auto cell_of = [](const std::array<uint8_t, 3>& c) {
    return static_cast<uint32_t>(c[0] / kCell) << 16 | static_cast<uint32_t>(c[1] / kCell) << 8 |
           static_cast<uint32_t>(c[2] / kCell);
  };
  // (cell, picture), sorted: a cell's pictures are one range.
  std::vector<std::pair<uint32_t, uint32_t>> cells(prints.size());
  for (uint32_t i = 0; i < prints.size(); ++i) cells[i] = {cell_of(prints[i]->colour), i};
  std::sort(cells.begin(), cells.end());
  constexpr int kLastCell = 255 / kCell;
  tbb::enumerable_thread_specific<std::vector<NearPair>> found;
  PairBudget budget{max_pairs};
  tbb::parallel_for(tbb::blocked_range<size_t>(0, prints.size(), 256), [&](const tbb::blocked_range<size_t>& range) {
    std::vector<NearPair>& out = found.local();
    for (size_t at = range.begin(); at != range.end() && !budget.Spent(); ++at) {
      const uint32_t i = static_cast<uint32_t>(at);
      const std::array<uint8_t, 3>& c = prints[i]->colour;
      const int r = c[0] / kCell, g = c[1] / kCell, b = c[2] / kCell;
      for (int dr = -1; dr <= 1; ++dr) {
        for (int dg = -1; dg <= 1; ++dg) {
          for (int db = -1; db <= 1; ++db) {
            if (r + dr < 0 || r + dr > kLastCell || g + dg < 0 || g + dg > kLastCell || b + db < 0 ||
                b + db > kLastCell) {
              continue;
            }
            const uint32_t cell = static_cast<uint32_t>(r + dr) << 16 | static_cast<uint32_t>(g + dg) << 8 |
                                  static_cast<uint32_t>(b + db);
            // The cell's pictures after i (each pair once, from its first).
            auto it = std::lower_bound(cells.begin(), cells.end(), std::make_pair(cell, i + 1));
            for (; it != cells.end() && it->first == cell; ++it) {
              const int d = NearDistance(*prints[i], *prints[it->second], max_distance);
              if (d <= max_distance && budget.Take()) out.push_back({i, it->second, d});
            }
          }
        }
      }
    }
  });
  *cut = budget.Spent();
  return SortedOnce(&found);
}

}  // namespace libshard::convert
