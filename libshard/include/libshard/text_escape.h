// UTF-8 checks and the one escape libshard uses where text it writes must be
// valid UTF-8 on one line but the bytes come from the file system (file and
// folder names are bytes on Linux, not necessarily UTF-8).
//
// EscapeText is reversible and leaves ordinary text alone:
//   '\' -> "\\", TAB -> "\t", LF -> "\n", CR -> "\r",
//   any other byte below 0x20, 0x7f, and every byte that is not part of a
//   valid UTF-8 sequence -> "\xHH" (two lower-case hex digits);
//   a hidden control (IsHiddenControl: bidirectional controls such as
//   U+202E, C1 controls, line and paragraph separators) -> "\uHHHH";
//   other valid UTF-8 (ASCII included) is copied as it is.
// So `cl\xe4ss` (Latin-1) is written `cl\xe4ss`, `a<TAB>b` is `a\tb`,
// `C:\x` is `C:\\x` and `rtl<U+202E>gpj.exe` (shown as "rtlexe.jpg" where
// the override acts) is `rtl\u202egpj.exe`. It is used for reject paths and reasons (rejects.tsv,
// manifest.json) and for any manifest string that is not valid UTF-8.
//
// Thread-safety: pure functions.
#ifndef LIBSHARD_TEXT_ESCAPE_H_
#define LIBSHARD_TEXT_ESCAPE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace libshard {

// The length (1..4) of the valid UTF-8 sequence starting at s[pos], or 0
// when the byte there does not start one (overlong forms, surrogates and
// code points above U+10FFFF are invalid). pos < s.size().
size_t Utf8SequenceLength(std::string_view s, size_t pos);

bool IsValidUtf8(std::string_view s);

// The length of the UTF-8 byte order mark (EF BB BF) that `s` begins with:
// 3, or 0 without one. Text from Excel or Notepad (CSV manifests, class maps,
// annotation files) often starts with it; a reader skips it.
inline size_t Utf8BomLength(std::string_view s) { return s.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0; }

// A code point that changes how the text around it is shown without being
// seen itself: U+0080..U+009F, U+061C, U+200E, U+200F, U+202A..U+202E,
// U+2066..U+2069, U+2028, U+2029.
bool IsHiddenControl(uint32_t code_point);
// Whether valid UTF-8 text holds one (false at the first invalid byte).
bool HasHiddenControl(std::string_view s);

// See above.
std::string EscapeText(std::string_view s);

// The inverse of EscapeText: UnescapeText(EscapeText(s)) == s for every s
// (a "\uHHHH" becomes the code point's UTF-8). Text EscapeText does not
// write (a lone backslash, another escape, a short "\x") is kept as it is.
std::string UnescapeText(std::string_view s);

// Text for a person to read (a message line, a page): `s` as it is when it
// is valid UTF-8 without a hidden control or a line break, else
// EscapeText(s), so that a name can neither reorder nor hide what is shown
// around it.
std::string DisplayText(std::string_view s);

// Text for HTML or XML character data and attribute values: & < > " ' as
// &amp; &lt; &gt; &quot; &#39;, every other byte as it is (callers that may
// see invalid UTF-8 pass it through EscapeText first).
std::string MarkupEscape(std::string_view s);

}  // namespace libshard

#endif  // LIBSHARD_TEXT_ESCAPE_H_
