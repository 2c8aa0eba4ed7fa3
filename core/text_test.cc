#include "core/text.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace ocirlimit
