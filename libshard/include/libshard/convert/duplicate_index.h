// The leak check's incremental search (--dedup within): an index that
// answers "which added fingerprints are duplicates of this one" before each
// Add (duplicates.h describes the bands).
//
// Thread-safety: not thread-safe (one writer; const methods may run
// concurrently without a writer).
#ifndef LIBSHARD_CONVERT_DUPLICATE_INDEX_H_
#define LIBSHARD_CONVERT_DUPLICATE_INDEX_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "libshard/convert/duplicates.h"

namespace libshard::convert {

// Near-duplicate search over 64-bit hashes (see above), incremental.
class DuplicateIndex {
 public:
  // max_distance 0..kMaxLeakDistance (clamped); expected_count sizes the
  // bands (any count works; the speed is best near it).
  DuplicateIndex(int max_distance, uint64_t expected_count);
  DuplicateIndex(const DuplicateIndex&) = delete;
  DuplicateIndex& operator=(const DuplicateIndex&) = delete;

  // Calls found(id, distance) once for every added hash within max_distance
  // of `hash`, in no particular order.
  void ForEachNear(uint64_t hash, const std::function<void(uint32_t id, int distance)>& found) const;
  // Adds `hash` with id size().
  void Add(uint64_t hash);
  uint32_t size() const { return size_; }
  int bands() const { return bands_; }
  int radius() const;  // the largest band's radius

 private:
  struct Entry {
    uint64_t hash;
    uint32_t id;
  };
  uint32_t BandOf(uint64_t hash, int band) const {
    return static_cast<uint32_t>((hash >> shift_[band]) & ((uint64_t{1} << bits_[band]) - 1));
  }

  int max_distance_;
  int bands_ = 0;
  uint32_t size_ = 0;
  std::vector<int> shift_, bits_, radius_;                // per band
  std::vector<std::vector<std::vector<Entry>>> buckets_;  // per band: value -> entries
};

// Near-duplicate search over fingerprints (NearDistance within
// max_distance), incremental: the whole hashes in one DuplicateIndex, the
// other regions' in another; a query looks up its whole hash in both and its
// regions' hashes among the whole ones, then confirms by the detail hashes.
class FingerprintIndex {
 public:
  FingerprintIndex(int max_distance, uint64_t expected_count);
  // Calls found(id, distance) once for every added fingerprint with
  // NearDistance(f, it, max_distance) <= max_distance, in increasing id
  // order.
  void ForEachNear(const ImageFingerprint& f, const std::function<void(uint32_t id, int distance)>& found) const;
  // Adds `f` with id size().
  void Add(const ImageFingerprint& f);
  uint32_t size() const { return whole_.size(); }

 private:
  int max_distance_;
  DuplicateIndex whole_, regions_;        // regions_: id = image * (kHashRegions - 1) + region - 1
  std::vector<ImageFingerprint> prints_;  // without their keys
};

}  // namespace libshard::convert

#endif  // LIBSHARD_CONVERT_DUPLICATE_INDEX_H_
