// Byte sizes as people write them: "128MiB", "64M", "1G", "1.5G", "1000".
//
//   LIBSHARD_ASSIGN_OR_RETURN(uint64_t bytes, libshard::util::ParseByteSize("256MiB"));
//
// Thread-safety: pure.
#ifndef LIBSHARD_UTIL_BYTE_SIZE_H_
#define LIBSHARD_UTIL_BYTE_SIZE_H_

#include <cstdint>
#include <string_view>

#include "libshard/status.h"

namespace libshard::util {

// A decimal number (fractions allowed) and an optional unit: none or B
// (bytes), K/k/KiB, M/MiB, G/GiB (powers of 1024), KB, MB, GB (powers of
// 1000). The result is rounded down to whole bytes and must lie in 1 byte ..
// 1 PB (10^15). InvalidArgument "'TEXT': not a number" / "unknown unit (...)"
// / "out of range (1 byte .. 1 PB)".
StatusOr<uint64_t> ParseByteSize(std::string_view text);

}  // namespace libshard::util

#endif  // LIBSHARD_UTIL_BYTE_SIZE_H_
