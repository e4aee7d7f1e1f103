// The leak check: duplicate images within a split and across splits (a
// validation image that is also in train), found from two fingerprints the
// converter takes of every stored image (docs/convert.md, "Leak check"):
//   * the exact key: SHA-256 of the stored pixels (the bytes ImageKeyOf
//     hashes: "WIDTHxHEIGHTxCHANNELS/BITS\n" then the samples, HWC rows as
//     image/image.h lays them out), so two files with equal pixels after the
//     conversion's decode and transform have equal keys;
//   * the perceptual hash (image/perceptual_hash.h, 64 bits), near for
//     re-encodes and resized copies, and the hash of the image's centred
//     region (CentrePerceptualHash: 2.5 % off every side), near the whole
//     hash of a copy with about 5 % of each side cropped off.
// Two images are duplicates when their keys are equal ("exact", distance 0)
// or their hashes differ in at most `max_distance` bits ("near"), the
// distance being the least of whole-whole, centre(a)-whole(b) and
// whole(a)-centre(b) (FingerprintIndex).
//
// Search without comparing all pairs (multi-index hashing, Norouzi et al.
// 2012): the 64 bits are cut into m bands (3 <= m <= max_distance + 1); two
// hashes within distance d differ in at most floor(d / m) bits of some band
// (pigeonhole), so each band has a table from band value to the hashes
// holding it, and a query looks up every value within that radius of its
// own. m is chosen for the expected count (the fewest probes and candidates):
// for d <= m - 1 it is the plain pigeonhole rule, equal bands; a million
// random hashes at d = 8 take about 3 bands of 21 bits, radius 2.
//
//   DuplicateIndex index(8, expected);
//   index.ForEachNear(h, [](uint32_t id, int distance) { ... });
//   index.Add(h);  // id = index.size() before the call
//
//   std::vector<DuplicateImage> images = ...;   // in plan order
//   DuplicateReport r = FindDuplicates(images, 8);
//   io::WriteFileAtomically("out/duplicates.tsv", DuplicatesTsv(images, r));
//
// Thread-safety: DuplicateIndex is not thread-safe (one writer; const
// methods may run concurrently without a writer); the functions are pure.
#ifndef LIBSHARD_CONVERT_DUPLICATES_H_
#define LIBSHARD_CONVERT_DUPLICATES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/image/image.h"
#include "libshard/manifest.pb.h"
#include "libshard/status.h"

namespace libshard::convert {

// --leak-distance's default and range. 6 of 64 bits, from the wallpaper
// corpus (tests/convert/leak_accuracy_test.cc prints the table: 1,000
// distinct real crops, copies of 200): JPEG quality 60 copies 98.5 % found,
// 0.5-0.9 resizes and centred 5 % crops 99.5-100 %, 35 false pairs of the
// 499,500; at 4 those copies drop to 96-98 % for 18 false pairs, at 8 the
// false pairs double (73) for 1 % more recall. docs/convert.md gives it all.
inline constexpr int kDefaultLeakDistance = 6;
inline constexpr int kMaxLeakDistance = 16;

// --leaks: kOff takes no fingerprints; kWarn (the default) reports the
// count; kFail also makes `shard convert` / `shard merge` exit 1 when a pair
// crosses splits.
enum class LeakMode { kOff, kWarn, kFail };
// "off", "warn", "fail"; InvalidArgument naming the choices otherwise.
StatusOr<LeakMode> ParseLeakMode(std::string_view name);
const char* LeakModeName(LeakMode mode);

// The fingerprints of one stored image.
struct ImageFingerprint {
  std::string pixels_sha256;  // 64 lower-case hex digits
  uint64_t phash = 0;         // image::PerceptualHash
  uint64_t centre_phash = 0;  // image::CentrePerceptualHash
};
// The distance of two fingerprints' hashes: the least of whole-whole and the
// two centre-whole distances (centre-centre is not compared).
int FingerprintDistance(const ImageFingerprint& a, const ImageFingerprint& b);
ImageFingerprint FingerprintOf(const image::Image& pixels);

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
  uint32_t size() const { return static_cast<uint32_t>(hashes_.size()); }
  int bands() const { return bands_; }
  int radius() const { return radius_; }

 private:
  uint32_t BandOf(uint64_t hash, int band) const;

  int max_distance_;
  int bands_ = 0, radius_ = 0;
  std::vector<int> shift_, bits_;            // per band
  std::vector<std::vector<uint32_t>> head_;  // per band: value -> last id + 1 (0: none)
  std::vector<std::vector<uint32_t>> next_;  // per band: id -> earlier id + 1 with the value
  std::vector<uint64_t> hashes_;
};

// Near-duplicate search over fingerprints: FingerprintDistance within
// max_distance, through two DuplicateIndexes (whole hashes and centre
// hashes; three look-ups a query). Same contract as DuplicateIndex.
class FingerprintIndex {
 public:
  FingerprintIndex(int max_distance, uint64_t expected_count);
  // Calls found(id, distance) once for every added fingerprint within
  // max_distance of `f` (FingerprintDistance), in increasing id order.
  void ForEachNear(const ImageFingerprint& f, const std::function<void(uint32_t id, int distance)>& found) const;
  // Adds `f` with id size().
  void Add(const ImageFingerprint& f);
  uint32_t size() const { return whole_.size(); }

 private:
  DuplicateIndex whole_, centre_;
};

// One converted image as the leak check sees it.
struct DuplicateImage {
  std::string split;
  std::string file;  // as stored in the shard entry (escaped text)
  ImageFingerprint fingerprint;
};

struct DuplicatePair {
  bool exact = false;
  int distance = 0;
  uint32_t a = 0, b = 0;  // indexes into the images, a < b
};

struct DuplicateReport {
  // Leaks (a and b in different splits) first, then pairs within a split;
  // each group in the order the later image (b), then a, comes.
  std::vector<DuplicatePair> pairs;
  uint64_t within = 0;     // pairs in one split
  uint64_t leaks = 0;      // pairs across splits
  bool truncated = false;  // more than kMaxDuplicatePairs: the rest counted, not listed
};
inline constexpr size_t kMaxDuplicatePairs = 10'000'000;

// The pairs among `images` (in plan order). Images with equal pixels form a
// group per split whose first image stands for it: every other copy is
// listed once, with its split's first (exact, within), and the split's first
// once with each other split's first (exact, a leak); near pairs are listed
// between those first images, each pair within max_distance once.
DuplicateReport FindDuplicates(const std::vector<DuplicateImage>& images, int max_distance);

// duplicates.tsv: the header "kind\tdistance\tsplit_a\tfile_a\tsplit_b\t
// file_b", then one line per pair ("exact" or "near"); tabs and line breaks
// in names become spaces (names are escaped text already).
std::string DuplicatesTsv(const std::vector<DuplicateImage>& images, const DuplicateReport& report);

// The images of a shard entry (its image_hashes, in record order) appended
// to *out. InvalidArgument naming the shard for a key that is not 64 hex
// digits or a hash that is not 16 (entries are read from files: untrusted).
Status AppendDuplicateImages(const ShardEntry& entry, std::vector<DuplicateImage>* out);
// Every shard's, in the manifest's order. *missing counts entries with
// records but no hashes (converted with --leaks off, or by an older libshard).
StatusOr<std::vector<DuplicateImage>> DuplicateImagesOf(const Manifest& manifest, uint64_t* missing);
// The entry's record of one image's fingerprints.
ImageHash ImageHashOf(const std::string& escaped_path, const ImageFingerprint& fingerprint);

// The leak check of a finished manifest: finds the pairs among its shards'
// image_hashes, writes OUT/duplicates.tsv atomically (`sync` as for
// io::WriteFileAtomically), sets manifest->duplicates and removes the hashes
// from its shard entries (they stay in OUT/.libshard/). Nothing is done for
// LeakMode::kOff. `missing` as DuplicateImagesOf's. Errors: those of
// DuplicateImagesOf and of writing the file (naming it).
Status CheckLeaks(const std::string& output_dir, LeakMode mode, int max_distance, bool sync, Manifest* manifest,
                  uint64_t* missing);

}  // namespace libshard::convert

#endif  // LIBSHARD_CONVERT_DUPLICATES_H_
