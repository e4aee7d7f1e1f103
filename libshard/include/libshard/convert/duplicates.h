// The leak check: duplicate images within a split and across splits (a
// validation image that is also in train), found from the fingerprints the
// converter takes of every stored image (docs/convert.md, "Leak check"):
//   * the exact key: SHA-256 of the stored image bytes (FingerprintOf), so
//     two files with equal pixels after the conversion's decode, transform
//     and deterministic encode have equal keys;
//   * image::HashRegions: a 64-bit perceptual hash, a 256-bit detail hash
//     and the tone (mean luma, low-passed contrast) of ten regions (the
//     whole image, the centred region, four 95 % corner regions, four with
//     5 % off one side), and the whole image's two hashes mirrored left to
//     right.
// Two images are duplicates when their keys are equal ("exact", distance 0)
// or, in two stages, when (1) the whole 64-bit hash of one is within
// `max_distance` bits of one region's 64-bit hash of the other (whole
// against whole included; the candidates), and (2) the same two regions
// agree in detail and in tone (the confirmation): their 256-bit detail
// hashes within kDetailDistance bits (a 64-bit hash of the 8x8 lowest
// frequencies sees only the layout, and distinct pictures with one layout
// meet there; the 16x16 lowest frequencies tell most apart), and their
// mean luma within kToneMeanLevels gray levels and contrasts within 5/4 of
// each other; or, where the tones agree closely (1 level, 21/20), their
// detail hashes within kCloseToneDetailDistance. The hashes are blind to tone by construction (a bit compares
// a coefficient with the median of the others: scaling or shifting the
// gray levels moves no bit), so smooth pictures of one layout but another
// brightness or contrast (a brown and a blue wallpaper with one diagonal
// edge) pass both hash stages; the copies the check is for (re-encodes,
// resizes, crops of 5 %) keep both within a level and 7 % (measured
// below). A brightened copy passes by the gain rule (kGainMin..kGainMax)
// instead, and a mirrored one by its whole mirrored hashes against the
// other's whole image. The pair's distance is the least 64-bit distance of
// a confirmed pair of regions (NearDistance).
//
// Search without comparing all pairs (multi-index hashing, Norouzi et al.
// 2012): the 64 bits are cut into m bands with radii r_b (two hashes within
// d bits differ in at most r_b bits of some band b when sum (r_b + 1) > d:
// pigeonhole), and each band has a table from band value to the hashes
// holding it; a query looks up every value within that band's radius of its
// own. Two forms:
//   * FindDuplicates (a whole conversion, batch): only the whole hashes are
//     queries, among every image's region hashes (whole included) and
//     mirrored whole hashes, so the pair is found from the side whose whole
//     hash is in it. 3..16 bands
//     (SearchBands picks by the count: 4 of 16 bits, radii 0, 1, 1, 1 at
//     d = 6 from a few thousand images up) with radii adding up to
//     d + 1 - m; per band, the region hashes and the whole hashes are
//     counting-sorted by band value into flat tables and each group of
//     whole hashes sharing a value is compared with every bucket within the
//     radius at once (four compares at a time with AVX2). One band's tables
//     at a time: about 24 bytes per region hash (some 250 MB for a million
//     images) beside the fingerprints. Measured (shard-bench convert
//     --leak-hashes N, random fingerprints, 1 % planted copies, 2 threads of
//     the 2-core build machine, 2026-11-27): 100,000 in 0.17-0.9 s (4.27 s
//     before), a million in 3.5-13 s by the load (docs/convert.md).
//   * DuplicateIndex / FingerprintIndex (--dedup within, incremental: a
//     query before each Add; duplicate_index.h): the same bands and radii,
//     m chosen for the expected count, per band a flat array of
//     cache-line buckets of 32-bit folds. Eleven lookups an image (its ten
//     region hashes among the whole ones, its whole hash among the other
//     regions' hashes), pipelined. Measured (the same fingerprints, one
//     thread, 2026-11-27): 12-17 us an image at 100,000 and 26-28 us at a
//     million (67 us before), bound by the ~1,300 cache lines an image's
//     lookups and Add read from memory (docs/convert.md).
//
//   std::vector<DuplicateImage> images = ...;   // in plan order
//   DuplicateReport r = FindDuplicates(images, 6);
//   io::WriteFileAtomically("out/duplicates.tsv", DuplicatesTsv(images, r));
//
// Thread-safety: the functions are pure
// (FindDuplicates runs its queries on TBB's threads; its output does not
// depend on the thread count).
#ifndef LIBSHARD_CONVERT_DUPLICATES_H_
#define LIBSHARD_CONVERT_DUPLICATES_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/image/image.h"
#include "libshard/image/perceptual_hash.h"
#include "libshard/manifest.pb.h"
#include "libshard/status.h"

namespace libshard::convert {

// --leak-distance's default and range (the candidates' 64-bit distance),
// and the confirmation's 256-bit distance. From the wallpaper corpus
// (tests/convert/leak_accuracy_test.cc prints the tables: 1,000 distinct
// real crops, copies of 200; 2026-11-27): at 6 and 30 with the tones, no
// false pair of the 499,500 (2 without the tones, 87 with the 64-bit
// hashes alone; 1 at 8), JPEG quality 60 copies 98 % found (95.5 %
// without the tones), 0.5-0.9 resizes and 5 % crops (centred, at a corner,
// off one edge) 100 %. On two held-out sets (other crops, seeds 2026 and
// 7777): 1 and 0 false pairs (5 and 3 without the tones; the one: two
// crops of one patterned wallpaper that look alike), q60 98.5 % and 99 %,
// the rest 100 %. docs/convert.md gives it all.
inline constexpr int kDefaultLeakDistance = 6;
inline constexpr int kDetailDistance = 30;
inline constexpr int kMaxLeakDistance = 16;
// The confirmation's tone check (image::RegionTone): the two regions' mean
// luma within kToneMeanLevels gray levels, and their contrasts within a
// ratio kToneContrastNum / kToneContrastDen (5/4) or, for nearly flat
// regions, within one gray level. The copies of the corpus (three sets)
// stay within 1.03 levels and a ratio 1.07; each of the false pairs the hash
// stages let through (within 36 detail bits) differs by 6.8 levels or more
// (up to 136) or by a ratio of 1.37 or more (up to 2.6), but for one pair
// of look-alike crops of one wallpaper (1.5 levels, 1.05).
inline constexpr int kToneMeanLevels = 3;
inline constexpr int kToneContrastNum = 5, kToneContrastDen = 4;
// Plain pictures: two whose whole-image contrasts (RegionTone, 1/256 gray
// levels) are both at most kPlainContrast are duplicates only when their
// mean colours also agree, each channel within kColourLevels (JPEG quality
// 60 copies of 5,000 random plain colours moved them by 0-4 levels, 45 of
// them by 4: libjpeg-turbo's 4:2:0 through Pillow, 2026-11-27).
// A plain picture pairs only with another picture at most kNearlyPlain
// Contrast (two gray levels: a copy of a plain picture stays plain or
// nearly so) whose colour agrees too: a picture with detail is not a copy of
// a plain one, and what tells plain pictures apart is their colour. So the
// search finds a plain picture's pairs by colour alone (cells of
// kColourLevels + 1 levels a channel), not among the hashes, which all
// plain pictures share.
inline constexpr int kPlainContrast = 256;
inline constexpr int kNearlyPlainContrast = 2 * kPlainContrast;
inline constexpr int kColourLevels = 4;
// Tones that agree closely (mean luma within kCloseToneMeanLevels, contrasts
// within 21/20) are evidence enough to accept detail hashes up to
// kCloseToneDetailDistance bits apart (a quarter of them; unrelated
// pictures are about 128 apart): JPEG quality 60 copies of smooth pictures,
// whose block artefacts move many of their weak coefficients across the
// median, keep their tones within 1.03 levels and 3.5 % (99 % of them
// within 0.55 levels and 2.2 %). On the corpus' three
// sets, 5, 4 and 4 more of 200 such copies found, no false pair more at
// the default distance (one more each on two sets at 8).
// A brightness gain (every sample times g: PIL's ImageEnhance.Brightness,
// torchvision's adjust_brightness) scales a region's mean and contrast
// alike and moves no hash bit but by clipping: two regions whose means are
// kGainMin..kGainMax times apart (both at least kGainMinMeanLevels, the
// contrasts at least one level), and whose contrasts are apart by the same
// factor within kGainContrastNum / kGainContrastDen, are confirmed when
// their detail hashes are within kGainDetailDistance (fewer bits than the
// loose tones' kDetailDistance: smooth crops of one wallpaper, with another
// brightness, meet at 26-28). Measured on the
// wallpaper corpus' three sets (leak_accuracy_test.cc, 2026-12-02): of 600
// copies brightened x1.15 (clipped), 85 % meet it whole against whole (the
// rest clip enough to move their contrast or hashes); among the 1.5 million
// pairs of distinct crops, none more (two crops of one wallpaper in a dark
// and a light variant, 2.1 times apart, are why the gain stops at 1.3).
inline constexpr int kGainMinNum = 21, kGainMinDen = 20;  // 1.05: below, the loose tones' 3 levels decide
inline constexpr int kGainMaxNum = 13, kGainMaxDen = 10;  // 1.3
inline constexpr int kGainMinMeanLevels = 16;
inline constexpr int kGainContrastNum = 21, kGainContrastDen = 20;
inline constexpr int kGainDetailDistance = 20;
inline constexpr int kCloseToneMeanLevels = 1;
inline constexpr int kCloseToneContrastNum = 21, kCloseToneContrastDen = 20;
inline constexpr int kCloseToneDetailDistance = 64;

// --leaks: kOff takes no fingerprints; kWarn (the default) reports the
// count; kFail also makes `shard convert` / `shard merge` exit 1 when a pair
// crosses splits.
enum class LeakMode { kOff, kWarn, kFail };
// "off", "warn", "fail"; InvalidArgument naming the choices otherwise.
StatusOr<LeakMode> ParseLeakMode(std::string_view name);
const char* LeakModeName(LeakMode mode);

// The fingerprints of one stored image.
struct ImageFingerprint {
  std::string key_sha256;      // the exact key (FingerprintOf): 64 lower-case hex digits
  image::RegionHashes hashes;  // image::HashRegions
  // Regions known (hashes.phash[0, regions)): image::kHashRegions, fewer for
  // an entry of an older libshard (1: whole; 2: whole and centre).
  int regions = image::kHashRegions;
  bool has_detail = true;  // false for an older entry: the 64-bit stage alone decides
  bool has_tone = true;    // false for an entry written before the tones: the hashes alone decide
  // The mean colour (R, G, B; a gray image's level thrice; 16-bit samples by
  // their high byte) of 16x16 pixels spread evenly over the image: what
  // tells plain pictures apart, whose luma hashes and tones are alike
  // whatever their colour (see kPlainContrast).
  std::array<uint8_t, 3> colour{};
  bool has_colour = true;  // false for an entry written before the colour
  // hashes.mirror known: FingerprintOf's are; false for an entry written
  // before the mirror check, and for one built by hand.
  bool has_mirror = false;
};
// The converter's: `key_sha256` is the SHA-256 (hex) of the image bytes as
// stored in the record (image/encoded; for a pass-through JPEG the file's
// own, already computed), the hashes are of the stored pixels. The encoders
// are deterministic, so equal stored pixels give equal bytes; hashing the
// stored bytes instead of the decoded pixels hashes 9-20x fewer bytes (the
// 224x224 q90 JPEGs of the bench photos are 7.6-17.5 KB, the pixels 147 KB). Two pass-through JPEGs whose bytes differ
// but whose pixels do not are a near pair at distance 0, not an exact one.
ImageFingerprint FingerprintOf(const image::Image& pixels, std::string key_sha256);
// Without stored bytes (tools, tests): the key is the SHA-256 of the pixels
// (ImageKeyOf's bytes: "WIDTHxHEIGHTxCHANNELS/BITS\n", then the samples).
ImageFingerprint FingerprintOf(const image::Image& pixels);

// The least 64-bit distance between the whole hash of one and a region's
// hash of the other (whole against whole included), or between the whole
// mirrored hash of one and the other's whole hash (both with has_mirror),
// whose detail hashes are within kDetailDistance too (not checked where
// either has no detail) and whose tones agree (or are one gain apart,
// within kGainDetailDistance; not checked where either has none); 65 when
// no pair of regions is within max_distance and confirmed, or when, both
// with tones and colour, one is plain (IsPlain) and the other is not nearly
// plain or their colours differ by more than kColourLevels in a channel.
int NearDistance(const ImageFingerprint& a, const ImageFingerprint& b, int max_distance);
// Whether the whole image's contrast is at most kPlainContrast (and the
// fingerprint has its tones and colour: an older entry is never plain).
bool IsPlain(const ImageFingerprint& f);
// The same at kNearlyPlainContrast.
bool IsNearlyPlain(const ImageFingerprint& f);
// Whether the two hold the same hashes, tones and colour: the same pixels as
// far as the leak check can tell (a pass-through JPEG with other metadata).
bool SameFingerprint(const ImageFingerprint& a, const ImageFingerprint& b);

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

// Images of one split with the same fingerprint (SameFingerprint: equal
// stored bytes, or equal pixels with other metadata): `copies` of them, the
// first (in plan order) `first`.
struct CopyGroup {
  uint32_t first = 0;
  uint64_t copies = 0;
};

struct DuplicateReport {
  // Leaks (a and b in different splits) first, then pairs within a split;
  // each group in the order the later image (b), then a, comes.
  std::vector<DuplicatePair> pairs;
  uint64_t within = 0;     // pairs in one split
  uint64_t leaks = 0;      // pairs across splits
  bool truncated = false;  // more than kMaxDuplicatePairs: the rest counted, not listed
  // The near search held kMaxSearchPairs pairs and stopped: the counts are
  // lower bounds (the copy groups' pairs are all counted).
  bool search_cut = false;
  // Images that have a copy in another split (a group's every image counts:
  // nine val copies of nine train images are 18 leaked images, 9 a split),
  // in total and by split.
  uint64_t leaked_images = 0;
  std::map<std::string, uint64_t> leaked_by_split;
  // The largest copy groups, up to kLargestGroups of two or more, by size
  // (then plan order).
  std::vector<CopyGroup> largest;
};
// duplicates.tsv's lines: some 100 MB at most.
inline constexpr size_t kMaxDuplicatePairs = 1'000'000;
// The near search's pairs held at once (12 bytes each).
inline constexpr size_t kMaxSearchPairs = 4'000'000;
inline constexpr size_t kLargestGroups = 5;

// The pairs among `images` (in plan order). Images with one fingerprint
// (SameFingerprint: equal stored bytes, or equal pixels in other bytes) form
// a group per split whose first image stands for it: every other copy is
// listed once, with its split's first (exact when their stored bytes are
// equal, else near at distance 0), and the split's first once with each
// other split's first; near pairs are listed between those first images,
// each pair with NearDistance <= max_distance once. So N copies of one image
// are N - 1 pairs, not N (N - 1) / 2, and the search sees one of them. Plain
// pictures are paired by colour (kNearlyPlainContrast), the others through
// the hashes (plain ones too where an older entry without colour is among
// the images). Work and memory: linear in the images but for the pictures
// that share hash values or a colour cell (each such pair is confirmed once),
// and the pairs held bounded (kMaxSearchPairs; search_cut).
DuplicateReport FindDuplicates(const std::vector<DuplicateImage>& images, int max_distance);
// As above with `bands` bands in the search (kMinSearchBands..
// kMaxSearchBands, clamped), and with `vector` false one 64-bit compare at
// a time (what a CPU without AVX2 runs): the same report for every band
// count and either way (tests compare them); FindDuplicates(images, d)
// takes SearchBands(d, images.size()) and the CPU's best.
DuplicateReport FindDuplicates(const std::vector<DuplicateImage>& images, int max_distance, int bands,
                               bool vector = true);
inline constexpr int kMinSearchBands = 3, kMaxSearchBands = 16;
// The band count with the least estimated work for `images` fingerprints.
int SearchBands(int max_distance, uint64_t images);

// duplicates.tsv: the header "kind\tdistance\tsplit_a\tfile_a\tsplit_b\t
// file_b", then one line per pair ("exact" or "near"); tabs and line breaks
// in names become spaces (names are escaped text already).
std::string DuplicatesTsv(const std::vector<DuplicateImage>& images, const DuplicateReport& report);

// The images of a shard entry (its image_hashes, in record order) appended
// to *out. An entry holds them in binary (ImageHash.pixels_key, 32 bytes;
// ImageHash.regions, 400 bytes: the ten 64-bit hashes, then the ten 256-bit
// ones, words little-endian; ImageHash.region_tones, 40 bytes: the ten
// regions' mean and contrast, 16-bit little-endian), or, written by an
// older libshard, in hex. InvalidArgument naming the shard and the image for
// binary fields of another size (tones: 40 bytes or none), or in hex for a
// key that is not 64 hex digits, a hash that is not 16, region hashes that
// are not 8 x 16 or detail hashes that are not 10 x 64 (entries are read
// from files: untrusted). An older hex entry with no region or detail
// hashes gives a fingerprint with fewer regions and no detail; an entry
// without tones (hex, or binary written before them) one with has_tone
// false (its pairs are confirmed by the hashes alone, as they were).
Status AppendDuplicateImages(const ShardEntry& entry, std::vector<DuplicateImage>* out);
// Every shard's, in the manifest's order, taken out of its entries: each
// entry's hashes are freed once read, so the two forms are not held whole at
// once (an entry's protobuf form is about as large again as the
// fingerprints). *missing counts entries with records but no hashes
// (converted with --leaks off, or by an older libshard). On an error some
// entries have lost their hashes already.
StatusOr<std::vector<DuplicateImage>> TakeDuplicateImages(Manifest* manifest, uint64_t* missing);
// The entry's record of one image's fingerprints: the binary fields for a
// full fingerprint (ten regions, detail, a 64-digit hex key; its tones
// where it has them); an older entry's fingerprint in the hex fields, as it
// was.
ImageHash ImageHashOf(const std::string& escaped_path, const ImageFingerprint& fingerprint);

// The leak check of a finished manifest: finds the pairs among its shards'
// image_hashes, writes OUT/duplicates.tsv atomically (`sync` as for
// io::WriteFileAtomically), sets manifest->duplicates and removes the hashes
// from its shard entries (they stay in OUT/.libshard/). Nothing is done for
// LeakMode::kOff. `missing` as TakeDuplicateImages's. Errors: those of
// TakeDuplicateImages and of writing the file (naming it).
Status CheckLeaks(const std::string& output_dir, LeakMode mode, int max_distance, bool sync, Manifest* manifest,
                  uint64_t* missing);

}  // namespace libshard::convert

#endif  // LIBSHARD_CONVERT_DUPLICATES_H_
