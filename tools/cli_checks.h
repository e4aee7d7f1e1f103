// Checks for the numbers users type on the command line. CLI11 converts an
// unsigned option with strtoull, so "-1" silently becomes 2^64-1, and it
// reads "010" as octal; these validators (the library's checks,
// libshard/util/number_text.h) run on the text first and refuse
// anything that is not a plain decimal integer in range (checks only: the
// value CLI11 then converts is the text as typed), so every count
// option of every subcommand fails the same way: a message naming the option
// and the range, exit 2 (shard_main.cc).
//
//   cmd->add_option("--threads", f.threads, "...")->check(IntegerIn(0, kMaxThreads));
#ifndef LIBSHARD_TOOLS_CLI_CHECKS_H_
#define LIBSHARD_TOOLS_CLI_CHECKS_H_

#include <CLI/CLI.hpp>
#include <cstdint>

#include "libshard/util/threads.h"

namespace shard_tool {

// The most worker threads any subcommand takes (the Loader's cap too).
constexpr int kMaxThreads = libshard::util::kMaxThreads;

// A decimal integer in [lo, hi]: digits with an optional leading '-'; no '+',
// spaces, leading zeros (CLI11 would read "010" as octal 8), hex prefixes,
// exponents or fractions.
CLI::Validator IntegerIn(int64_t lo, int64_t hi);
// The same for the full unsigned 64-bit range [0, 2^64-1] (e.g. a seed).
CLI::Validator Uint64Any();
// A decimal number (fraction and exponent allowed) in [lo, hi]; refuses NaN.
CLI::Validator NumberIn(double lo, double hi);

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_CLI_CHECKS_H_
