// UTF-8 validation and EscapeText: known answers for each escape, the
// invalid UTF-8 forms (stray continuation, overlong, surrogate, > U+10FFFF,
// truncated), and that the escape is reversible.
#include "libshard/text_escape.h"

#include <gtest/gtest.h>

#include <string>

namespace libshard {
namespace {

// The inverse of EscapeText, for the round-trip check.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    const char e = s[++i];
    if (e == 'x') {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += e == 't' ? '\t' : e == 'n' ? '\n' : e == 'r' ? '\r' : e;
    }
  }
  return out;
}

TEST(TextEscapeTest, ValidUtf8) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("cl\xc3\xa4ss \xe2\x82\xac \xf0\x9f\x98\x80"));  // ä € 😀
  EXPECT_FALSE(IsValidUtf8("cl\xe4ss"));                                   // Latin-1 ä
  EXPECT_FALSE(IsValidUtf8("\x80"));                                       // stray continuation
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));                                   // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));                               // surrogate U+D800
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));                           // U+110000
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));                                   // truncated
}

TEST(TextEscapeTest, EscapesKnownAnswers) {
  EXPECT_EQ(EscapeText("cat/a.png"), "cat/a.png");
  EXPECT_EQ(EscapeText("cl\xc3\xa4ss"), "cl\xc3\xa4ss");  // valid UTF-8 kept
  EXPECT_EQ(EscapeText("cl\xe4ss"), "cl\\xe4ss");         // no byte dropped
  EXPECT_EQ(EscapeText("a\tb\nc\rd"), "a\\tb\\nc\\rd");
  EXPECT_EQ(EscapeText("C:\\x"), "C:\\\\x");
  EXPECT_EQ(EscapeText(std::string("\x01\x7f\0", 3)), "\\x01\\x7f\\x00");
  EXPECT_EQ(EscapeText("\xe2\x82"), "\\xe2\\x82");
}

TEST(TextEscapeTest, IsReversibleAndAlwaysValidUtf8OnOneLine) {
  for (const std::string& s : {std::string("cl\xe4ss\\xe4"), std::string("\\\\t\t"), std::string("\xff\xfe\n\\"),
                               std::string("ok \xc3\xa4 \xe4")}) {
    const std::string e = EscapeText(s);
    EXPECT_TRUE(IsValidUtf8(e)) << e;
    EXPECT_EQ(e.find_first_of("\t\n\r"), std::string::npos) << e;
    EXPECT_EQ(Unescape(e), s) << e;
  }
}

}  // namespace
TEST(TextEscapeTest, MarkupEscapeEscapesTheFiveMarkupCharactersOnly) {
  EXPECT_EQ(MarkupEscape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
  EXPECT_EQ(MarkupEscape("caf\xc3\xa9 \xff"), "caf\xc3\xa9 \xff");  // other bytes untouched
  EXPECT_EQ(MarkupEscape(""), "");
}

}  // namespace libshard
