#include "libshard/util/number_text.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace libshard::util {
namespace {

// Decimal digits from `from` on, without a leading zero.
bool AllDigits(const std::string& s, size_t from) {
  if (from >= s.size()) return false;
  if (s[from] == '0' && s.size() > from + 1) return false;
  for (size_t i = from; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

}  // namespace

std::string IntegerRangeText(int64_t lo, int64_t hi) { return std::to_string(lo) + ".." + std::to_string(hi); }

std::string NumberRangeText(double lo, double hi) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g..%g", lo, hi);
  return buf;
}

std::string CheckIntegerText(const std::string& s, int64_t lo, int64_t hi) {
  const bool negative = !s.empty() && s[0] == '-';
  if (!AllDigits(s, negative ? 1 : 0))
    return "expected an integer in " + IntegerRangeText(lo, hi) + ", got '" + s + "'";
  errno = 0;
  const long long v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE || v < lo || v > hi) return "'" + s + "' is out of range (" + IntegerRangeText(lo, hi) + ")";
  return std::string();
}

std::string CheckUint64Text(const std::string& s) {
  if (!AllDigits(s, 0)) return "expected an integer in 0..18446744073709551615, got '" + s + "'";
  errno = 0;
  (void)std::strtoull(s.c_str(), nullptr, 10);
  if (errno == ERANGE) return "'" + s + "' is out of range (0..18446744073709551615)";
  return std::string();
}

std::string CheckNumberText(const std::string& s, double lo, double hi) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  const std::string range = NumberRangeText(lo, hi);
  if (s.empty() || end != s.c_str() + s.size() || std::isnan(v) || s.find_first_of("xXnN") != std::string::npos) {
    return "expected a number in " + range + ", got '" + s + "'";
  }
  if (v < lo || v > hi) return "'" + s + "' is out of range (" + range + ")";
  return std::string();
}

}  // namespace libshard::util
