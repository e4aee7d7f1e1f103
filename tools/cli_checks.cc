#include "cli_checks.h"

#include <string>

#include "libshard/util/number_text.h"

namespace shard_tool {

namespace util = libshard::util;

CLI::Validator IntegerIn(int64_t lo, int64_t hi) {
  return CLI::Validator([lo, hi](std::string& s) { return util::CheckIntegerText(s, lo, hi); },
                        util::IntegerRangeText(lo, hi));
}

CLI::Validator Uint64Any() {
  return CLI::Validator([](std::string& s) { return util::CheckUint64Text(s); }, "0..2^64-1");
}

CLI::Validator NumberIn(double lo, double hi) {
  return CLI::Validator([lo, hi](std::string& s) { return util::CheckNumberText(s, lo, hi); },
                        util::NumberRangeText(lo, hi));
}

}  // namespace shard_tool
