#include "libshard/util/threads.h"

#include <oneapi/tbb/info.h>

#include <algorithm>

namespace libshard::util {

int ThreadCount(int threads) { return threads > 0 ? threads : std::max(1, tbb::info::default_concurrency()); }

}  // namespace libshard::util
