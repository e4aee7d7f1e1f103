// Checks for numbers people type as text (a command-line flag, a keyword
// argument of libshard.convert): each returns "" for text it accepts, else a
// message without the option's name ("'0' is out of range (1..100)"), so
// every face that takes the number refuses it with the same words. They check
// only; the caller converts the accepted text (strtoll / strtoull / strtod).
//
//   if (std::string e = util::CheckIntegerText("101", 1, 100); !e.empty()) ...  // "'101' is out of range (1..100)"
//
// Thread-safety: pure.
#ifndef LIBSHARD_UTIL_NUMBER_TEXT_H_
#define LIBSHARD_UTIL_NUMBER_TEXT_H_

#include <cstdint>
#include <string>

namespace libshard::util {

// A decimal integer in [lo, hi]: digits with an optional leading '-'; no '+',
// spaces, leading zeros ("010" is not octal 8 here), hex prefixes, exponents
// or fractions. "expected an integer in LO..HI, got 'TEXT'" or "'TEXT' is out
// of range (LO..HI)".
std::string CheckIntegerText(const std::string& text, int64_t lo, int64_t hi);
// The same over the whole unsigned 64-bit range [0, 2^64-1] (e.g. a seed).
std::string CheckUint64Text(const std::string& text);
// A decimal number (fraction and exponent allowed) in [lo, hi]; NaN, inf and
// hex floats are refused. "expected a number in LO..HI, got 'TEXT'" or
// "'TEXT' is out of range (LO..HI)", the bounds written with %g.
std::string CheckNumberText(const std::string& text, double lo, double hi);

// The ranges as the messages above write them: "1..100", "0.001..86400".
std::string IntegerRangeText(int64_t lo, int64_t hi);
std::string NumberRangeText(double lo, double hi);

}  // namespace libshard::util

#endif  // LIBSHARD_UTIL_NUMBER_TEXT_H_
