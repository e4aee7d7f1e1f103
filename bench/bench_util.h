// Shared helpers for the `shard-bench` programs: timing, table printing, the
// `cat` baseline, synthetic shards and where the helper scripts are
// (bench_util.cc).
#ifndef LIBSHARD_BENCH_BENCH_UTIL_H_
#define LIBSHARD_BENCH_BENCH_UTIL_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "libshard/image/image.h"
#include "libshard/status.h"

namespace CLI {
class App;
}

namespace shard_tool {

// The folder that holds the running shard-bench program: its helper scripts
// (bench_pillow.py, bench_torchvision.py) and the sample photos are copied
// beside it by the build, so no source or build path is compiled in.
std::string BenchDataDir();

// A photo-like 224x224 RGB image: smooth gradients, a disc and mild noise, so
// that its JPEG's size and decode cost resemble a real photo's (~20-30 KB).
// `shard-bench read --decode` and `shard-bench s3` share it.
libshard::image::Image PhotoLike224(int seed);

// `count` distinct width x height RGB cuts of the photos in `folder` (all
// it decodes, in name order): each photo centre-cropped to a slightly larger
// size that varies, then cut at a varying offset, every other one mirrored.
// NotFound when the folder holds no photo.
libshard::StatusOr<std::vector<libshard::image::Image>> PhotoCuts(const std::string& folder, size_t count, int width,
                                                                  int height);

// The options every timing bench shares, range-checked (cli_checks.h):
// --seconds (minimum seconds per timing round, 0.001..3600) and, for the
// synthetic shards, --record-bytes (payload bytes per record, 1..64 MiB).
void AddSecondsOption(CLI::App* cmd, double* seconds);
void AddRecordBytesOption(CLI::App* cmd, size_t* record_bytes);

// Seconds for `cat files > /dev/null` (process start included, as in a
// user's pipeline), or a negative value if it failed.
double TimeCat(const std::vector<std::string>& files);

// Writes a shard of `records` Examples, each with `record_bytes` random
// bytes as "image/encoded" and a label; the same bytes for the same `seed`.
libshard::Status WriteSyntheticShard(const std::string& path, size_t records, size_t record_bytes, uint64_t seed = 1);

// Runs fn() repeatedly for at least `min_seconds` (and at least once);
// returns the best seconds per call over `rounds` such timing rounds.
template <typename Fn>
double BestSecondsPerCall(Fn&& fn, double min_seconds = 0.2, int rounds = 3) {
  using Clock = std::chrono::steady_clock;
  double best = 1e300;
  for (int r = 0; r < rounds; ++r) {
    int calls = 0;
    auto start = Clock::now();
    double elapsed = 0;
    do {
      fn();
      ++calls;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < min_seconds);
    best = std::min(best, elapsed / calls);
  }
  return best;
}

// A fixed-width text table: the header row, then rows of cells.
inline void PrintTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  auto print = [&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < row.size(); ++c)
      std::printf("%s%-*s", c ? "  " : "", static_cast<int>(width[c]), row[c].c_str());
    std::printf("\n");
  };
  print(header);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  print(rule);
  for (const auto& row : rows) print(row);
}

inline std::string Fixed(double v, int digits = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace shard_tool

#endif  // LIBSHARD_BENCH_BENCH_UTIL_H_
