// `shard-bench read --mixture` (bench_read_mixture.cc): a weighted mixture of
// three datasets against one concatenated dataset of the same records.
#ifndef LIBSHARD_BENCH_BENCH_READ_MIXTURE_H_
#define LIBSHARD_BENCH_BENCH_READ_MIXTURE_H_

#include <string>

#include "bench_read_raw.h"

namespace shard_tool {

// `opt`: read --raw's options (photos, images, batch size, threads,
// seconds). Writes its shards under `dir` (removed after) and prints the
// rates and their ratio; a missing photo folder skips it with a message.
int RunMixtureBench(const RawBenchOptions& opt, const std::string& dir);

}  // namespace shard_tool

#endif  // LIBSHARD_BENCH_BENCH_READ_MIXTURE_H_
