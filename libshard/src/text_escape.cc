#include "libshard/text_escape.h"

#include <cstdint>
#include <cstdio>

namespace libshard {

size_t Utf8SequenceLength(std::string_view s, size_t pos) {
  const auto byte = [&s](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = byte(pos);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xe0) == 0xc0) {
    n = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (s.size() - pos < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((byte(pos + i) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(pos + i) & 0x3f);
  }
  static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

namespace {

// The code point of the valid n-byte sequence at s[pos].
uint32_t CodePoint(std::string_view s, size_t pos, size_t n) {
  static constexpr unsigned char kLead[5] = {0, 0x7f, 0x1f, 0x0f, 0x07};
  uint32_t cp = static_cast<unsigned char>(s[pos]) & kLead[n];
  for (size_t i = 1; i < n; ++i) cp = (cp << 6) | (static_cast<unsigned char>(s[pos + i]) & 0x3f);
  return cp;
}

}  // namespace

bool IsHiddenControl(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) ||                    // C1 controls
         cp == 0x061c || cp == 0x200e || cp == 0x200f ||  // ALM, LRM, RLM
         (cp >= 0x202a && cp <= 0x202e) ||                // LRE RLE PDF LRO RLO
         (cp >= 0x2066 && cp <= 0x2069) ||                // LRI RLI FSI PDI
         cp == 0x2028 || cp == 0x2029;                    // line / paragraph separator
}

bool HasHiddenControl(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    if (n > 1 && IsHiddenControl(CodePoint(s, i, n))) return true;
    i += n;
  }
  return false;
}

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string EscapeText(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = Utf8SequenceLength(s, i);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (n == 0 || c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else if (n > 1 && IsHiddenControl(CodePoint(s, i, n))) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(CodePoint(s, i, n)));
      out += buf;
      i += n;
      continue;
    } else {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    ++i;
  }
  return out;
}

namespace {
int HexValue(char h) {
  if (h >= '0' && h <= '9') return h - '0';
  if (h >= 'a' && h <= 'f') return h - 'a' + 10;
  if (h >= 'A' && h <= 'F') return h - 'A' + 10;
  return -1;
}
}  // namespace

std::string UnescapeText(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char e = s[i + 1];
    if (e == '\\' || e == 't' || e == 'n' || e == 'r') {
      out += e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : '\\';
      ++i;
      continue;
    }
    const size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 0;
    uint32_t v = 0;
    bool ok = digits > 0 && i + 2 + digits <= s.size();
    for (size_t k = 0; ok && k < digits; ++k) {
      const int h = HexValue(s[i + 2 + k]);
      ok = h >= 0;
      v = v * 16 + static_cast<uint32_t>(h < 0 ? 0 : h);
    }
    if (!ok) {
      out += s[i];
      continue;
    }
    if (digits == 2 || v < 0x80) {
      out += static_cast<char>(v);
    } else if (v < 0x800) {
      out += static_cast<char>(0xC0 | (v >> 6));
      out += static_cast<char>(0x80 | (v & 0x3F));
    } else {
      out += static_cast<char>(0xE0 | (v >> 12));
      out += static_cast<char>(0x80 | ((v >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (v & 0x3F));
    }
    i += 1 + digits;
  }
  return out;
}

std::string DisplayText(std::string_view s) {
  if (IsValidUtf8(s) && !HasHiddenControl(s) && s.find_first_of("\n\r") == std::string_view::npos) {
    return std::string(s);
  }
  return EscapeText(s);
}

std::string MarkupEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace libshard
