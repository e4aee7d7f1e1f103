// UTF-8 checks and the one escape libshard uses where text it writes must be
// valid UTF-8 on one line but the bytes come from the file system (file and
// folder names are bytes on Linux, not necessarily UTF-8).
//
// EscapeText is reversible and leaves ordinary text alone:
//   '\' -> "\\", TAB -> "\t", LF -> "\n", CR -> "\r",
//   any other byte below 0x20, 0x7f, and every byte that is not part of a
//   valid UTF-8 sequence -> "\xHH" (two lower-case hex digits);
//   valid UTF-8 (ASCII included) is copied as it is.
// So `cl\xe4ss` (Latin-1) is written `cl\xe4ss`, `a<TAB>b` is `a\tb` and
// `C:\x` is `C:\\x`. It is used for reject paths and reasons (rejects.tsv,
// manifest.json) and for any manifest string that is not valid UTF-8.
//
// Thread-safety: pure functions.
#ifndef LIBSHARD_TEXT_ESCAPE_H_
#define LIBSHARD_TEXT_ESCAPE_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace libshard {

// The length (1..4) of the valid UTF-8 sequence starting at s[pos], or 0
// when the byte there does not start one (overlong forms, surrogates and
// code points above U+10FFFF are invalid). pos < s.size().
size_t Utf8SequenceLength(std::string_view s, size_t pos);

bool IsValidUtf8(std::string_view s);

// See above.
std::string EscapeText(std::string_view s);

// Text for HTML or XML character data and attribute values: & < > " ' as
// &amp; &lt; &gt; &quot; &#39;, every other byte as it is (callers that may
// see invalid UTF-8 pass it through EscapeText first).
std::string MarkupEscape(std::string_view s);

}  // namespace libshard

#endif  // LIBSHARD_TEXT_ESCAPE_H_
