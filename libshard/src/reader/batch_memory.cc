// The loader's own heap ring (batch_memory.h).
#include "reader/batch_memory.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace libshard::reader {
namespace {

// Physical memory, for bounding the loader's own buffers; 0 when unknown.
uint64_t PhysicalMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

// "925.0 MB".
std::string Bytes(long double n) {
  const char* units[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (n >= 1000 && u < 6) {
    n /= 1000;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0Lf %s" : "%.1Lf %s", n, units[u]);
  return buf;
}

std::string Count(long double n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0Lf", n);
  return buf;
}

}  // namespace

StatusOr<size_t> RingSlots(const BatchLoaderOptions& options, uint64_t samples, uint64_t image_bytes,
                           uint64_t mask_bytes) {
  const long double slots = static_cast<long double>(std::max<size_t>(options.prefetch, 1)) + 1;
  const long double per_slot =
      static_cast<long double>(samples) * (static_cast<long double>(image_bytes) + sizeof(int64_t) + mask_bytes);
  const long double need = slots * per_slot;
  const uint64_t memory = PhysicalMemory();
  const long double limit = memory > 0 ? memory / 2.0L : static_cast<long double>(SIZE_MAX / 4);
  if (need > limit) {
    // The fewest slots (prefetch 0 or 1) still too big: the batch is.
    const bool batch = 2 * per_slot > limit;
    return InvalidArgumentError(
        std::string(batch ? "batch_size" : "prefetch") + ": " + Count(slots) + " buffers (prefetch " +
        std::to_string(options.prefetch) + " + 1) of " + std::to_string(samples) + " samples of " +
        std::to_string(options.height) + "x" + std::to_string(options.width) + "x" + std::to_string(options.channels) +
        " " + PixelTypeName(options.dtype) + " would need " + Bytes(need) + ", more than half of this machine's " +
        (memory > 0 ? Bytes(memory) : std::string("memory")) + "; lower batch_size or prefetch");
  }
  return static_cast<size_t>(slots);
}

}  // namespace libshard::reader
