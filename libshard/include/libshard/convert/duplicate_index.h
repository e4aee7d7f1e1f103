// The leak check's incremental search (--dedup): an index that answers
// "which added fingerprints are duplicates of this one" before each Add, so
// that a conversion can keep the first of each group in the listing's order.
// duplicates.h has the fingerprints, NearDistance and the batch search
// (FindDuplicates) that a finished conversion runs.
//
// Multi-index hashing (Norouzi et al. 2012), as FindDuplicates: the 64 bits
// are cut into m bands with radii r_b adding up to max_distance + 1 - m (two
// hashes within max_distance bits differ in at most r_b bits of some band b:
// pigeonhole), and each band has a table from band value to the hashes
// holding it; a query looks up every value within that band's radius of its
// own. Per band, a flat array of buckets, one per value and each one cache
// line: its size and its first 14 entries' folds (32 bits of the hash, its
// halves XORed: within the distance whenever the hash is), the rest of its
// folds in one block of an arena (grown by doubling; a block it leaves is
// reused); the hashes and ids once per Add, read only for the folds within
// the distance. So a probe of a bucket of up to 14 hashes reads one line,
// and its folds are compared eight at a time with AVX2 where the CPU has
// it. The lookups of an image go through the stages (probe values,
// buckets, folds past the line) together, a few dozen misses in flight.
// m (3..16) is chosen for the expected count by the lines a probe reads:
// at the default distance 6, 7 bands of 9-10 bits (radius 0) up to some
// ten thousand hashes, 5 of 12-13 bits near 100,000, 4 of 16 bits (radii
// 0, 1, 1, 1) from a few hundred thousand.
//
// FingerprintIndex holds two: the whole hashes (queried with an image's ten
// region hashes: a copy that is a crop of an earlier image), and the other
// nine regions' hashes (queried with the whole hash: an earlier image that
// is a crop of the copy); candidates are confirmed by NearDistance.
// Measured (shard-bench convert --leak-hashes N: random fingerprints, 1 %
// planted copies, one thread of the loaded 2-core build machine,
// 2026-11-27): see docs/convert.md, "Leak check".
//
//   FingerprintIndex index(6, expected_images);
//   for (const ImageFingerprint& f : prints) {
//     uint32_t first = UINT32_MAX;
//     index.ForEachNear(f, [&](uint32_t id, int d) { first = std::min(first, id); });
//     if (first == UINT32_MAX) index.Add(f);  // else: a duplicate of image `first`
//   }
//
// Thread-safety: not thread-safe (one writer; const methods may run
// concurrently without a writer). Memory: 64 bytes per bucket (2^bits per
// band; mapped zero pages until written), 8 per hash and band past a
// bucket's first 14 (up to twice that with the blocks' slack), 12 per hash,
// plus the fingerprints (FingerprintIndex keeps a copy of each, without its
// key): about 1.3 GB at a million images. Large arrays ask for huge pages
// (madvise).
#ifndef LIBSHARD_CONVERT_DUPLICATE_INDEX_H_
#define LIBSHARD_CONVERT_DUPLICATE_INDEX_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "libshard/convert/duplicates.h"

namespace libshard::convert {

// Near-duplicate search over 64-bit hashes, incremental.
class DuplicateIndex {
 public:
  // max_distance 0..kMaxLeakDistance (clamped); expected_count sizes the
  // bands (any count works; the speed is best near it).
  DuplicateIndex(int max_distance, uint64_t expected_count);
  // With `bands` bands (kMinSearchBands..kMaxSearchBands, clamped; the
  // count is not used then): the same answers for every band count (tests
  // compare them).
  DuplicateIndex(int max_distance, uint64_t expected_count, int bands);
  ~DuplicateIndex();
  DuplicateIndex(const DuplicateIndex&) = delete;
  DuplicateIndex& operator=(const DuplicateIndex&) = delete;

  // Calls found(id, distance) once for every added hash within max_distance
  // of `hash`, in no particular order (an id added with several hashes:
  // once per such hash).
  void ForEachNear(uint64_t hash, const std::function<void(uint32_t id, int distance)>& found) const;
  // The same, appended to *out as (id, distance).
  void AppendNear(uint64_t hash, std::vector<std::pair<uint32_t, int>>* out) const;
  // The same for hashes[0, count) at once (faster than one at a time: the
  // probes' cache misses overlap), the ids of all appended together.
  void AppendNear(const uint64_t* hashes, size_t count, std::vector<std::pair<uint32_t, int>>* out) const;
  // The same for several indexes' lookups at once (each index's hashes
  // within its own max_distance), the ids of all appended together.
  struct Lookup {
    const DuplicateIndex* index;  // not null
    const uint64_t* hashes;
    size_t count;
  };
  static void AppendNear(const Lookup* lookups, size_t count, std::vector<std::pair<uint32_t, int>>* out);
  // Adds `hash` with id size().
  void Add(uint64_t hash) { Add(hash, size_); }
  // Adds `hash` with `id` (ids need not be distinct nor increase).
  void Add(uint64_t hash, uint32_t id);
  uint32_t size() const { return size_; }  // hashes added
  int bands() const;
  int radius() const;  // the largest band's radius

  // The band count chosen for `expected_count` hashes at `max_distance`.
  static int BandsFor(int max_distance, uint64_t expected_count);

  struct Tables;  // the implementation's (duplicate_index.cc)

 private:
  int max_distance_;
  uint32_t size_ = 0;
  std::unique_ptr<Tables> t_;
};

// Near-duplicate search over fingerprints (NearDistance within
// max_distance), incremental: the whole hashes in one DuplicateIndex, the
// other regions' and the mirrored whole hashes in another; a query looks up
// its ten region hashes (whole included) among the whole ones and its whole
// hash among the others, then confirms each candidate once by NearDistance.
class FingerprintIndex {
 public:
  FingerprintIndex(int max_distance, uint64_t expected_count);
  // With `bands` bands in both indexes (0: chosen for the counts); the same
  // answers for every band count.
  FingerprintIndex(int max_distance, uint64_t expected_count, int bands);
  FingerprintIndex(const FingerprintIndex&) = delete;
  FingerprintIndex& operator=(const FingerprintIndex&) = delete;

  // Calls found(id, distance) once for every added fingerprint with
  // NearDistance(f, it, max_distance) <= max_distance, in increasing id
  // order.
  void ForEachNear(const ImageFingerprint& f, const std::function<void(uint32_t id, int distance)>& found) const;
  // Adds `f` with id size().
  void Add(const ImageFingerprint& f);
  uint32_t size() const { return static_cast<uint32_t>(prints_.size()); }

 private:
  int max_distance_;
  DuplicateIndex whole_, regions_;        // regions_: ids are the images'
  std::vector<ImageFingerprint> prints_;  // without their keys
};

}  // namespace libshard::convert

#endif  // LIBSHARD_CONVERT_DUPLICATE_INDEX_H_
