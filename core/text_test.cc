#include "core/text.h"

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
        QuoteCase{"DoubleQuote", "a\"b", R"("a"b")", R"("a\"b")"},
        QuoteCase{"Backslash", "a\\b", R"("a\b")", R"("a\\b")"},
        QuoteCase{"ControlByte", std::string("a\x01z"), R"("a\x01z")", R"("a\u0001z")"},
        QuoteCase{"Nul", std::string("a\0z", 3), R"("a\x00z")", R"("a\u0000z")"},
        QuoteCase{"Delete", "a\x7fz", R"("a\x7fz")", R"("a\u007fz")"},
        QuoteCase{"Utf8KeptAsIs", "gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80",
                  "\"gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80\"",
                  "\"gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80\""},
        QuoteCase{"InvalidByteReplaced", "a\xff", "\"a\xff\"", "\"a\xEF\xBF\xBD\""},
        QuoteCase{"TruncatedSequenceReplaced", "a\xE2\x82", "\"a\xE2\x82\"",
                  "\"a\xEF\xBF\xBD\xEF\xBF\xBD\""},
        QuoteCase{"OverlongReplaced", "\xC0\xAF", "\"\xC0\xAF\"", "\"\xEF\xBF\xBD\xEF\xBF\xBD\""},
        QuoteCase{"SurrogateReplaced", "\xED\xA0\x80", "\"\xED\xA0\x80\"",
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
