#include "text.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "spec.h"

namespace ocirlimit {
namespace {

struct QuoteCase {
  const char* name;
  std::string in;
  std::string want;
};

void PrintTo(const QuoteCase& c, std::ostream* os) { *os << c.name; }

class QuoteTable : public ::testing::TestWithParam<QuoteCase> {};

TEST_P(QuoteTable, EscapesAndBounds) { EXPECT_EQ(Quote(GetParam().in), GetParam().want); }

const std::string k256(256, 'a');

INSTANTIATE_TEST_SUITE_P(
    Cases, QuoteTable,
    ::testing::Values(QuoteCase{"Empty", "", "\"\""}, QuoteCase{"Plain", "abc", "\"abc\""},
                      QuoteCase{"ControlCharacters", "a\nb\x01", "\"a\\nb\\x01\""},
                      QuoteCase{"AtTheLimit", k256, "\"" + k256 + "\""},
                      QuoteCase{"OnePastTheLimit", k256 + "b",
                                "\"" + k256 + "\u2026\" (257 bytes)"},
                      QuoteCase{"SixtyKilobytes", std::string(60000, 'a'),
                                "\"" + k256 + "\u2026\" (60000 bytes)"},
                      // "é" is 2 bytes: one starting at byte 255 would be split.
                      QuoteCase{"NoCharacterIsSplit", std::string(255, 'a') + "\u00e9" + "zz",
                                "\"" + std::string(255, 'a') + "\u2026\" (259 bytes)"},
                      QuoteCase{"NewlinesPastTheCutAreGone", k256 + "\n" + std::string(1000, '\n'),
                                "\"" + k256 + "\u2026\" (1257 bytes)"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(JsonQuote, EscapesLikeJsonAndBounds) {
  EXPECT_EQ(JsonQuote("a\"b\n"), "\"a\\\"b\\n\"");
  EXPECT_EQ(JsonQuote(std::string(900000, 'i')),
            "\"" + std::string(256, 'i') + "\u2026\" (900000 bytes)");
  EXPECT_EQ(JsonQuote("\xff"), "\"\xef\xbf\xbd\"") << "invalid UTF-8 is replaced";
}

TEST(ValueText, NeverDumpsAContainer) {
  EXPECT_EQ(ValueText(Json::parse("[1,[2,[3]]]")), "an array of 2 elements");
  EXPECT_EQ(ValueText(Json::parse(R"({"a":{"b":1}})")), "an object of 1 member");
  EXPECT_EQ(ValueText(Json::parse("-1")), "-1");
  EXPECT_EQ(ValueText(Json::parse("1.5")), "1.5");
  EXPECT_EQ(ValueText(Json::parse("null")), "null");
  EXPECT_EQ(ValueText(Json(std::string(300, 'x'))),
            "\"" + std::string(256, 'x') + "\u2026\" (300 bytes)");
}

}  // namespace
}  // namespace ocirlimit
