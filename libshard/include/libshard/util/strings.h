// Prefix and suffix tests on text (std::string_view has starts_with and
// ends_with only from C++20; libshard is C++17).
//
//   if (libshard::util::EndsWith(key, ".json")) ...
//
// Thread-safety: pure.
#ifndef LIBSHARD_UTIL_STRINGS_H_
#define LIBSHARD_UTIL_STRINGS_H_

#include <string_view>

namespace libshard::util {

// True when `s` begins with `prefix` (always for an empty prefix).
inline bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// True when `s` ends with `suffix` (always for an empty suffix).
inline bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace libshard::util

#endif  // LIBSHARD_UTIL_STRINGS_H_
