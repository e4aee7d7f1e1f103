// `shard-bench read --raw` (bench_read_raw.cc): raw arrays vs JPEG on the
// same 224x224 photos: size, encode, bare decode and loader rates.
#ifndef LIBSHARD_BENCH_BENCH_READ_RAW_H_
#define LIBSHARD_BENCH_BENCH_READ_RAW_H_

#include <cstddef>
#include <string>

namespace shard_tool {

struct RawBenchOptions {
  std::string photos;  // folder of photos to cut 224x224 images from
  size_t images = 512;
  size_t batch_size = 64;
  int threads = 2;
  double seconds = 0.5;
};

// Writes its shards under `dir` (removed after) and prints the table; a
// missing photo folder skips the table with a message.
int RunRawBench(const RawBenchOptions& opt, const std::string& dir);

}  // namespace shard_tool

#endif  // LIBSHARD_BENCH_BENCH_READ_RAW_H_
