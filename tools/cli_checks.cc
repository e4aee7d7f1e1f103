#include "cli_checks.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace shard_tool {
namespace {

// Decimal digits from `from` on, without a leading zero (CLI11 converts with
// base 0, so "010" would be 8).
bool AllDigits(const std::string& s, size_t from) {
  if (from >= s.size()) return false;
  if (s[from] == '0' && s.size() > from + 1) return false;
  for (size_t i = from; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

std::string Range(int64_t lo, int64_t hi) { return std::to_string(lo) + ".." + std::to_string(hi); }

std::string RangeOf(double lo, double hi) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g..%g", lo, hi);
  return buf;
}

}  // namespace

CLI::Validator IntegerIn(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        const bool negative = !s.empty() && s[0] == '-';
        const std::string expect = "expected an integer in " + Range(lo, hi) + ", got '" + s + "'";
        if (!AllDigits(s, negative ? 1 : 0)) return expect;
        errno = 0;
        const long long v = std::strtoll(s.c_str(), nullptr, 10);
        if (errno == ERANGE || v < lo || v > hi) {
          return "'" + s + "' is out of range (" + Range(lo, hi) + ")";
        }
        return std::string();
      },
      Range(lo, hi));
}

CLI::Validator Uint64Any() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (!AllDigits(s, 0)) return "expected an integer in 0..18446744073709551615, got '" + s + "'";
        errno = 0;
        (void)std::strtoull(s.c_str(), nullptr, 10);
        if (errno == ERANGE) return "'" + s + "' is out of range (0..18446744073709551615)";
        return std::string();
      },
      "0..2^64-1");
}

CLI::Validator NumberIn(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        const std::string range = RangeOf(lo, hi);
        if (s.empty() || end != s.c_str() + s.size() || std::isnan(v) || s.find_first_of("xXnN") != std::string::npos) {
          return "expected a number in " + range + ", got '" + s + "'";
        }
        if (v < lo || v > hi) return "'" + s + "' is out of range (" + range + ")";
        return std::string();
      },
      RangeOf(lo, hi));
}

}  // namespace shard_tool
