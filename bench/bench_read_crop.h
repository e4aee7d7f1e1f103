// `shard-bench read --crop` (bench_read_crop.cc): random-resized-crop to
// 224x224 from 512x496 (and --large 4032x3024) JPEG records, the loader's
// decode paths against each other and against the bare libjpeg-turbo decode
// of the same crop regions.
#ifndef LIBSHARD_BENCH_BENCH_READ_CROP_H_
#define LIBSHARD_BENCH_BENCH_READ_CROP_H_

#include <cstddef>
#include <string>

namespace shard_tool {

struct CropBenchOptions {
  std::string photos;  // folder of photos the records are cut from
  size_t images = 512;
  size_t large = 0;  // 4032x3024 records for the second table (0: none)
  size_t batch_size = 64;
  int threads = 2;
  double seconds = 0.5;
};

// Writes its shards under `dir` (removed by the caller) and prints the
// tables; a missing photo folder skips them with a message.
int RunCropBench(const CropBenchOptions& opt, const std::string& dir);

}  // namespace shard_tool

#endif  // LIBSHARD_BENCH_BENCH_READ_CROP_H_
