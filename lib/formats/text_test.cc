#include "formats/text.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

struct QuoteCase {
  const char* name;
  std::string in;
  std::string quote;       // Quote: OneLine escapes inside double quotes
  std::string json_quote;  // JsonQuote: a JSON string literal
};

class Quoting : public ::testing::TestWithParam<QuoteCase> {};

TEST_P(Quoting, EscapesAsDocumented) {
  EXPECT_EQ(Quote(GetParam().in), GetParam().quote);
  EXPECT_EQ(JsonQuote(GetParam().in), GetParam().json_quote);
}

INSTANTIATE_TEST_SUITE_P(
    Text, Quoting,
    ::testing::Values(
        QuoteCase{"Plain", "web-1", R"("web-1")", R"("web-1")"},
        QuoteCase{"Empty", "", R"("")", R"("")"},
        QuoteCase{"Newline", "a\nb", R"("a\nb")", R"("a\nb")"},
        QuoteCase{"CarriageReturnAndTab", "a\r\tb", R"("a\r\tb")", R"("a\r\tb")"},
        QuoteCase{"DoubleQuote", "a\"b", R"("a\"b")", R"("a\"b")"},
        // A value cannot close its quotes and forge the fields after it.
        QuoteCase{"ForgedField", "x\" level=error msg=\"owned", R"("x\" level=error msg=\"owned")",
                  R"("x\" level=error msg=\"owned")"},
        QuoteCase{"Backslash", "a\\b", R"("a\\b")", R"("a\\b")"},
        QuoteCase{"BackslashBeforeQuote", "a\\\"", R"("a\\\"")", R"("a\\\"")"},
        // Separators, C1 controls and bidi controls: invisible or line-breaking
        // where the record is read (less, an editor, a terminal, a JS log viewer).
        QuoteCase{"LineSeparator",
                  "a\xE2\x80\xA8"
                  "b",
                  R"("a\u2028b")", R"("a\u2028b")"},
        QuoteCase{"ParagraphSeparator",
                  "a\xE2\x80\xA9"
                  "b",
                  R"("a\u2029b")", R"("a\u2029b")"},
        QuoteCase{"NextLine",
                  "a\xC2\x85"
                  "b",
                  R"("a\u0085b")", R"("a\u0085b")"},
        QuoteCase{"C1Csi",
                  "a\xC2\x9B"
                  "31mb",
                  R"("a\u009b31mb")", R"("a\u009b31mb")"},
        QuoteCase{"RightToLeftOverride", "a\xE2\x80\xAEgpj.exe", R"("a\u202egpj.exe")",
                  R"("a\u202egpj.exe")"},
        QuoteCase{"BidiIsolates", "\xE2\x81\xA6x\xE2\x81\xA9", R"("\u2066x\u2069")",
                  R"("\u2066x\u2069")"},
        QuoteCase{"RightToLeftMark", "\xE2\x80\x8F", R"("\u200f")", R"("\u200f")"},
        QuoteCase{"NoBreakSpaceKept",
                  "a\xC2\xA0"
                  "b",
                  "\"a\xC2\xA0"
                  "b\"",
                  "\"a\xC2\xA0"
                  "b\""},
        QuoteCase{"ControlByte", std::string("a\x01z"), R"("a\x01z")", R"("a\u0001z")"},
        QuoteCase{"Nul", std::string("a\0z", 3), R"("a\x00z")", R"("a\u0000z")"},
        QuoteCase{"Delete", "a\x7fz", R"("a\x7fz")", R"("a\u007fz")"},
        QuoteCase{"Utf8KeptAsIs", "gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80",
                  "\"gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80\"",
                  "\"gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80\""},
        QuoteCase{"InvalidByteReplaced", "a\xff", R"("a\xff")", "\"a\xEF\xBF\xBD\""},
        QuoteCase{"TruncatedSequenceReplaced", "a\xE2\x82", R"("a\xe2\x82")",
                  "\"a\xEF\xBF\xBD\xEF\xBF\xBD\""},
        QuoteCase{"OverlongReplaced", "\xC0\xAF", R"("\xc0\xaf")", "\"\xEF\xBF\xBD\xEF\xBF\xBD\""},
        QuoteCase{"SurrogateReplaced", "\xED\xA0\x80", R"("\xed\xa0\x80")",
                  "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\""}),
    [](const ::testing::TestParamInfo<QuoteCase>& info) { return std::string(info.param.name); });

TEST(Cat, JoinsStringsViewsAndLiterals) {
  std::string a = "a";
  std::string_view b = "b";
  EXPECT_EQ(Cat(a, b, "c", std::string("d")), "abcd");
  EXPECT_EQ(Cat(), "");
}

// --- values cut to kMaxQuotedBytes ---

struct CutCase {
  const char* name;
  std::string in;
  std::string want;
};

void PrintTo(const CutCase& c, std::ostream* os) { *os << c.name; }

class QuoteCut : public ::testing::TestWithParam<CutCase> {};

TEST_P(QuoteCut, EscapesAndBounds) { EXPECT_EQ(Quote(GetParam().in), GetParam().want); }

const std::string k256(256, 'a');

INSTANTIATE_TEST_SUITE_P(
    Cut, QuoteCut,
    ::testing::Values(CutCase{"Empty", "", "\"\""}, CutCase{"Plain", "abc", "\"abc\""},
                      CutCase{"ControlCharacters", "a\nb\x01", "\"a\\nb\\x01\""},
                      CutCase{"AtTheLimit", k256, "\"" + k256 + "\""},
                      CutCase{"OnePastTheLimit", k256 + "b", "\"" + k256 + "\u2026\" (257 bytes)"},
                      CutCase{"SixtyKilobytes", std::string(60000, 'a'),
                              "\"" + k256 + "\u2026\" (60000 bytes)"},
                      // "é" is 2 bytes: one starting at byte 255 would be split.
                      CutCase{"NoCharacterIsSplit", std::string(255, 'a') + "\u00e9" + "zz",
                              "\"" + std::string(255, 'a') + "\u2026\" (259 bytes)"},
                      CutCase{"NewlinesPastTheCutAreGone", k256 + "\n" + std::string(1000, '\n'),
                              "\"" + k256 + "\u2026\" (1257 bytes)"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(JsonQuoteCut, EscapesLikeJsonAndBounds) {
  EXPECT_EQ(JsonQuoteCut("a\"b\n"), "\"a\\\"b\\n\"");
  EXPECT_EQ(JsonQuoteCut(std::string(900000, 'i')),
            "\"" + std::string(256, 'i') + "\u2026\" (900000 bytes)");
  EXPECT_EQ(JsonQuoteCut("\xff"), "\"\xef\xbf\xbd\"") << "invalid UTF-8 is replaced";
}

}  // namespace
}  // namespace ocirlimit

namespace ocirlimit {
namespace {

TEST(TableCell, PlainWhenPlainElseQuoted) {
  EXPECT_EQ(TableCell("3f2a9c"), "3f2a9c");
  EXPECT_EQ(TableCell("/run/containerd/runc/k8s.io"), "/run/containerd/runc/k8s.io");
  EXPECT_EQ(TableCell("a\nb"), R"("a\nb")");
  EXPECT_EQ(TableCell("a b"), R"("a b")");
  EXPECT_EQ(TableCell("a\"b"), R"("a\"b")");
  EXPECT_EQ(TableCell(""), R"("")");
  EXPECT_EQ(TableCell(std::string(300, 'x')).find('\n'), std::string::npos);
  EXPECT_EQ(TableCell(std::string(300, 'x')).front(), '"');
}

}  // namespace
}  // namespace ocirlimit
