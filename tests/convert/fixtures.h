// Small real images and folder trees for the convert tests: PNG/JPEG bytes
// made with the project's encoders, a hand-written EXIF APP1 segment, and
// reading back the records of a shard.
#ifndef LIBSHARD_TESTS_CONVERT_FIXTURES_H_
#define LIBSHARD_TESTS_CONVERT_FIXTURES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "libshard/image/image.h"

namespace libshard::testing {

// A colour-mask set: ROOT/in/imgK.png (n RGB images of w x h),
// ROOT/masks/imgK.png (RGB colour masks) and ROOT/class_dict.csv with the
// classes below; pixel (x, y) of mask K has class (x + 2y + K) % 3.
struct MaskClassColour {
  const char* name;
  uint8_t r, g, b;
};
inline constexpr MaskClassColour kMaskClasses[3] = {
    {"Sky", 128, 128, 128}, {"Road", 128, 64, 128}, {"Car", 64, 0, 128}};
void MakeColourMaskSet(const std::string& root, int n, int w, int h);
// Output mask pixels per value, counted from the image/segmentation/class/
// encoded PNGs of every .tfrecord directly under `dir`.
std::map<int64_t, uint64_t> CountOutputMaskPixels(const std::string& dir);

// A deterministic pseudo-random image (values from `seed`).
image::Image RandomImage(int width, int height, int channels, int bit_depth, uint32_t seed);
// PNG / JPEG bytes of RandomImage (JPEG: 8-bit, 1 or 3 channels).
std::string PngBytes(int width, int height, int channels, uint32_t seed, int bit_depth = 8);
std::string JpegBytes(int width, int height, int channels, uint32_t seed, bool progressive = false);
// `jpeg` with an APP1 Exif segment (big-endian TIFF, one IFD entry:
// Orientation = `orientation`) inserted right after SOI.
std::string WithExifOrientation(const std::string& jpeg, int orientation);
// Writes `contents` at root/rel, creating the parent folders.
void WriteTreeFile(const std::string& root, const std::string& rel, const std::string& contents);
// ROOT/{train,val}/{a,b,c}/imgK.{png,jpg}: 23 small images (every 4th in val,
// odd K PNG, even JPEG) and train/b/readme.png, which is no image.
void WriteSplitClassTree(const std::string& root);
// The payloads of every record of a TFRecord file; fails the test on damage.
std::vector<std::string> ReadRecords(const std::string& path);
// Every regular file under `dir` (relative paths, sorted), hidden ones too.
std::vector<std::string> ListFilesRecursive(const std::string& dir);
// Every file under `dir` with its bytes; manifest*.json with `run` cleared
// (the one part of an output that differs between equal runs).
std::map<std::string, std::string> SnapshotDir(const std::string& dir);
// Adds a failure for each file missing, extra or different in `got`;
// returns how many.
int CountDifferences(const std::map<std::string, std::string>& want, const std::map<std::string, std::string>& got);

// What the readers make of a converted output folder, as a user would run
// them: `shard verify OUT` (VerifySet over the folder's shards and its
// manifest.json) and the Loader on the folder (reader::Dataset +
// BatchLoader, one epoch).
struct FolderReadBack {
  std::vector<std::string> verify_faults;  // "path: message", empty when clean
  uint64_t manifests = 0;                  // manifest.json files checked
  std::string open_error;                  // the Loader's, empty when it opened
  uint64_t loader_samples = 0;             // samples in one Loader epoch
  // image/filename of every record of the folder's shards, with its count.
  std::map<std::string, int> filenames;
  // Names present more than once.
  std::vector<std::string> duplicates() const;
};
FolderReadBack ReadBackFolder(const std::string& dir);

}  // namespace libshard::testing

#endif  // LIBSHARD_TESTS_CONVERT_FIXTURES_H_
