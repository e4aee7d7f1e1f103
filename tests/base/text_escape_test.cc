// UTF-8 validation and EscapeText: known answers for each escape, the
// invalid UTF-8 forms (stray continuation, overlong, surrogate, > U+10FFFF,
// truncated), and that UnescapeText reverses it.
#include "libshard/text_escape.h"

#include <gtest/gtest.h>

#include <string>

namespace libshard {
namespace {

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

// Issue 30 item 4: a right-to-left override makes "rtl<U+202E>gpj.exe" show
// as "rtlexe.jpg"; every bidirectional control and other hidden control is
// written as \uHHHH, so what is shown is what is there.
TEST(TextEscapeTest, HiddenControlsAreVisibleEscapes) {
  EXPECT_EQ(EscapeText("rtl\xe2\x80\xaegpj.exe"), "rtl\\u202egpj.exe");
  const char* controls[] = {"\xc2\x80",     "\xc2\x9f",     "\xd8\x9c",     "\xe2\x80\x8e",
                            "\xe2\x80\x8f", "\xe2\x80\xaa", "\xe2\x80\xab", "\xe2\x80\xac",
                            "\xe2\x80\xad", "\xe2\x80\xae", "\xe2\x81\xa6", "\xe2\x81\xa7",
                            "\xe2\x81\xa8", "\xe2\x81\xa9", "\xe2\x80\xa8", "\xe2\x80\xa9"};
  const char* escaped[] = {"\\u0080", "\\u009f", "\\u061c", "\\u200e", "\\u200f", "\\u202a", "\\u202b", "\\u202c",
                           "\\u202d", "\\u202e", "\\u2066", "\\u2067", "\\u2068", "\\u2069", "\\u2028", "\\u2029"};
  for (size_t i = 0; i < std::size(controls); ++i) {
    EXPECT_TRUE(HasHiddenControl(std::string("a") + controls[i])) << escaped[i];
    EXPECT_EQ(EscapeText(std::string("a") + controls[i] + "b"), std::string("a") + escaped[i] + "b");
  }
  // Right-to-left text itself (Hebrew, Arabic) and other format-free text stay.
  EXPECT_EQ(EscapeText("\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d"), "\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d");
  EXPECT_FALSE(HasHiddenControl("\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d \xe2\x82\xac"));
  EXPECT_EQ(EscapeText("\xe2\x80\x8b"), "\xe2\x80\x8b");  // U+200B (no direction) is kept
}

TEST(TextEscapeTest, IsReversibleAndAlwaysValidUtf8OnOneLine) {
  for (const std::string& s : {std::string("cl\xe4ss\\xe4"), std::string("\\\\t\t"), std::string("\xff\xfe\n\\"),
                               std::string("ok \xc3\xa4 \xe4"), std::string("\\u202e\xe2\x80\xae\xc2\x85")}) {
    const std::string e = EscapeText(s);
    EXPECT_TRUE(IsValidUtf8(e)) << e;
    EXPECT_EQ(e.find_first_of("\t\n\r"), std::string::npos) << e;
    EXPECT_EQ(UnescapeText(e), s) << e;
  }
}

}  // namespace
// What EscapeText never writes is kept: a lone or trailing backslash, an
// unknown escape, a short \x.
TEST(TextEscapeTest, UnescapeKeepsWhatIsNoEscape) {
  EXPECT_EQ(UnescapeText("a\\b\\x41\\u00e9"), "a\\b\x41\xc3\xa9");
  EXPECT_EQ(UnescapeText("a\\qb\\x4\\"), "a\\qb\\x4\\");
  EXPECT_EQ(UnescapeText("\\u0041"), "A");
}

TEST(TextEscapeTest, MarkupEscapeEscapesTheFiveMarkupCharactersOnly) {
  EXPECT_EQ(MarkupEscape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
  EXPECT_EQ(MarkupEscape("caf\xc3\xa9 \xff"), "caf\xc3\xa9 \xff");  // other bytes untouched
  EXPECT_EQ(MarkupEscape(""), "");
}

TEST(TextEscapeTest, ByteOrderMarkLength) {
  EXPECT_EQ(Utf8BomLength("\xEF\xBB\xBFpath,label"), 3u);
  EXPECT_EQ(Utf8BomLength("\xEF\xBB\xBF"), 3u);
  EXPECT_EQ(Utf8BomLength("\xEF\xBB"), 0u);          // cut short: not a mark
  EXPECT_EQ(Utf8BomLength("\xEF\xBB\xBE..."), 0u);  // U+FFFE's first bytes differ
  EXPECT_EQ(Utf8BomLength("path\xEF\xBB\xBF"), 0u);  // only at the start
  EXPECT_EQ(Utf8BomLength(""), 0u);
}

}  // namespace libshard
