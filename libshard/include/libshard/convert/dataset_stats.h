// Dataset statistics gathered during conversion, kept as exact integer sums
// so that shards, tasks and runs combine them exactly and in any order (the
// manifest of N merged tasks equals that of one run, bit for bit).
//
// Per output channel (0 = R or gray, 1 = G, 2 = B, 3 = alpha): the number of
// samples, their sum and the sum of their squares (128-bit); mean and
// population std are derived when printing. Also counts (converted,
// rejected, passed through, bytes), a label histogram, histograms of source
// formats and source sizes, and the pixels of the output masks per class
// index.
//
//   StatsAccumulator acc;
//   acc.AddPixels(img);            // per converted sample
//   acc.AddLabel(3);
//   other.Merge(acc);
//   acc.ToProto(manifest.mutable_stats());
//
// Thread-safety: a value type; one object per thread, Merge to combine.
#ifndef LIBSHARD_CONVERT_DATASET_STATS_H_
#define LIBSHARD_CONVERT_DATASET_STATS_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "libshard/image/image.h"
#include "libshard/manifest.pb.h"
#include "libshard/status.h"

namespace libshard::convert {

class StatsAccumulator {
 public:
  static constexpr int kMaxChannels = 4;

  // Adds every sample of `img` (8- or 16-bit) to its channel's sums.
  void AddPixels(const image::Image& img);
  void AddLabel(int64_t label) { ++labels_[label]; }
  // Counts every pixel of a 1-channel index mask (8- or 16-bit) by value.
  void AddMaskPixels(const image::Image& mask);
  void AddSource(const std::string& format, int width, int height, uint64_t bytes);
  void AddConverted(bool passed_through, uint64_t output_bytes);
  void AddRejected() { ++rejected_; }
  // Detection boxes of class `label`: one stored (clipped or not), or
  // dropped by the crop.
  void AddBox(int64_t label, bool stored, bool clipped);

  void Merge(const StatsAccumulator& other);

  // Writes counts, histograms and per-channel sums with mean/std.
  void ToProto(DatasetStats* out) const;
  // Reads back what ToProto wrote (for resume and merge).
  static StatusOr<StatsAccumulator> FromProto(const DatasetStats& in);

  uint64_t converted() const { return converted_; }
  uint64_t rejected() const { return rejected_; }

 private:
  struct Channel {
    uint64_t count = 0;
    uint64_t sum = 0;
    unsigned __int128 sum_squares = 0;
  };
  std::array<Channel, kMaxChannels> channels_{};
  int used_channels_ = 0;
  uint64_t converted_ = 0, rejected_ = 0, passed_through_ = 0;
  uint64_t source_bytes_ = 0, output_bytes_ = 0;
  std::map<int64_t, uint64_t> labels_;
  std::map<int64_t, uint64_t> mask_pixels_;
  struct Boxes {
    uint64_t stored = 0, clipped = 0, dropped = 0;
  };
  std::map<int64_t, Boxes> boxes_;
  std::map<std::string, uint64_t> formats_;
  std::map<std::string, uint64_t> sizes_;
};

// Decimal text of a 128-bit unsigned value, and back.
std::string U128ToString(unsigned __int128 v);
bool ParseU128(const std::string& s, unsigned __int128* v);

}  // namespace libshard::convert

#endif  // LIBSHARD_CONVERT_DATASET_STATS_H_
