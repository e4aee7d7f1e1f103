#include "libshard/util/threads.h"

#include <oneapi/tbb/info.h>

#include <algorithm>
#include <string>

namespace libshard::util {

Status CheckThreadCount(int threads) {
  if (threads >= 0 && threads <= kMaxThreads) return Status::OK();
  return InvalidArgumentError("threads must be in 0.." + std::to_string(kMaxThreads) + " (0: one per core)");
}

int ThreadCount(int threads) { return threads > 0 ? threads : std::max(1, tbb::info::default_concurrency()); }

}  // namespace libshard::util
