#include "libshard/util/byte_size.h"

#include <cstdlib>
#include <string>

namespace libshard::util {

StatusOr<uint64_t> ParseByteSize(std::string_view text) {
  const std::string s(text);
  const auto bad = [&s](const std::string& why) { return InvalidArgumentError("'" + s + "': " + why); };
  // strtod takes "inf", "nan" and hex; a size is plain decimal digits and a point.
  size_t used = 0;
  while (used < s.size() && ((s[used] >= '0' && s[used] <= '9') || s[used] == '.' || (used == 0 && s[0] == '-'))) {
    ++used;
  }
  char* end = nullptr;
  const std::string number = s.substr(0, used);
  const double v = number.empty() ? 0 : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size()) return bad("not a number");
  const std::string unit = s.substr(used);
  double mult = 0;
  if (unit == "" || unit == "B")
    mult = 1;
  else if (unit == "K" || unit == "k" || unit == "KiB")
    mult = 1024.0;
  else if (unit == "M" || unit == "MiB")
    mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "GiB")
    mult = 1024.0 * 1024 * 1024;
  else if (unit == "KB")
    mult = 1e3;
  else if (unit == "MB")
    mult = 1e6;
  else if (unit == "GB")
    mult = 1e9;
  else
    return bad("unknown unit (use K, M, G, KiB, MiB, GiB, KB, MB, GB)");
  const double bytes = v * mult;
  if (!(bytes >= 1) || bytes > 1e15) return bad("out of range (1 byte .. 1 PB)");
  return static_cast<uint64_t>(bytes);
}

}  // namespace libshard::util
