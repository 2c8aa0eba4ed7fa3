#include "formats/ulimit_yaml.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

std::string Limits(const std::vector<Rlimit>& limits) {
  std::string out;
  for (const auto& r : limits) out += (out.empty() ? "" : ",") + FormatRlimit(r);
  return out;
}

struct GoodYaml {
  std::string name;
  std::string text;
  std::string want;  // FormatRlimit of each entry, comma-separated
};

class ReadsUlimitYaml : public ::testing::TestWithParam<GoodYaml> {};

TEST_P(ReadsUlimitYaml, AsTheSampleWritesIt) {
  auto r = ParseUlimitYaml(GetParam().text);
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_EQ(Limits(*r), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    UlimitYaml, ReadsUlimitYaml,
    ::testing::Values(
        // The sample's README, with its second item spelled right.
        GoodYaml{"SampleReadme",
                 "- type: RLIMIT_NOFILE\n  soft: 1024\n  hard: 4096\n"
                 "- type: RLIMIT_MEMLOCK\n  soft: 1073741824\n  hard: 1073741824\n",
                 "nofile=1024:4096,memlock=1073741824:1073741824"},
        GoodYaml{"SampleSpellings",
                 "- type: rlimit_memlock\n  soft: 1\n  hard: 2\n- type: nproc\n  soft: 3\n  "
                 "hard: 4\n",
                 "memlock=1:2,nproc=3:4"},
        GoodYaml{"FieldsInAnyOrderQuotedAndCommented",
                 "---\n# pod ulimits\n- hard: \"8\"   # hard\n  soft: '4'\n  type: \"nofile\"\n",
                 "nofile=4:8"},
        GoodYaml{"IndentedListAndCrlf", "  - type: core\r\n    soft: 0\r\n    hard: 0\r\n",
                 "core=0:0"},
        GoodYaml{"MaxIsUnlimited",
                 "- type: memlock\n  soft: 18446744073709551615\n  hard: 18446744073709551615\n",
                 "memlock=unlimited:unlimited"},
        GoodYaml{"FlowStyle",
                 "[{type: nofile, soft: 10, hard: 20}, {type: stack, soft: 1, hard: 1}]",
                 "nofile=10:20,stack=1:1"},
        GoodYaml{"Json", R"([{"type":"RLIMIT_NOFILE","soft":10,"hard":20}])", "nofile=10:20"},
        GoodYaml{"EmptyFlowList", "[]", ""}, GoodYaml{"Empty", "", ""},
        GoodYaml{"OnlyComments", "# nothing\n\n", ""}),
    CaseName{});

struct BadYaml {
  std::string name;
  std::string text;
  std::string error;  // a substring of the one-line error
};

class RefusesUlimitYaml : public ::testing::TestWithParam<BadYaml> {};

TEST_P(RefusesUlimitYaml, WithOneLineSayingWhy) {
  auto r = ParseUlimitYaml(GetParam().text);
  ASSERT_FALSE(r.ok()) << Limits(*r);
  EXPECT_NE(r.error().Text().find(GetParam().error), std::string::npos) << r.error().Text();
  EXPECT_EQ(r.error().Text().find('\n'), std::string::npos);
  EXPECT_LT(r.error().Text().size(), 1024U);
}

INSTANTIATE_TEST_SUITE_P(
    UlimitYaml, RefusesUlimitYaml,
    ::testing::Values(
        BadYaml{"NotAList", "type: nofile\nsoft: 1\nhard: 2\n", "line 1: expected \"- type"},
        BadYaml{"ReadmeTypoPath", "- path: RLIMIT_MEMLOCK\n  soft: 1\n  hard: 1\n",
                "unknown key \"path\""},
        BadYaml{"MissingHard", "- type: nofile\n  soft: 1\n",
                "no hard: the NRI sample reads a missing hard as 0"},
        BadYaml{"MissingType", "- soft: 1\n  hard: 1\n", "no type"},
        BadYaml{"UnknownType", "- type: RLIMIT_GPU\n  soft: 1\n  hard: 1\n",
                "type \"RLIMIT_GPU\" is not a Linux rlimit"},
        BadYaml{"NegativeSoft", "- type: nofile\n  soft: -1\n  hard: 1\n",
                "soft \"-1\" is negative"},
        BadYaml{"NegativeFlow", "[{type: nofile, soft: 1, hard: -5}]", "hard \"-5\" is negative"},
        BadYaml{"HugeValue", "- type: nofile\n  soft: 1\n  hard: 18446744073709551616\n",
                "is over 18446744073709551615"},
        BadYaml{"VeryLongNumber",
                "- type: nofile\n  soft: 1\n  hard: 1" + std::string(40, '0') + "\n",
                "not a decimal integer"},
        BadYaml{"Suffix", "- type: memlock\n  soft: 1G\n  hard: 1G\n", "not a decimal integer"},
        BadYaml{"Unlimited", "- type: memlock\n  soft: unlimited\n  hard: unlimited\n",
                "not a decimal integer"},
        BadYaml{"SoftOverHard", "- type: nofile\n  soft: 9\n  hard: 8\n", "soft is over hard"},
        BadYaml{
            "DuplicateType",
            "- type: nofile\n  soft: 1\n  hard: 1\n- type: RLIMIT_NOFILE\n  soft: 2\n  hard: 2\n",
            "type nofile given twice"},
        BadYaml{"DuplicateKey", "- type: nofile\n  soft: 1\n  soft: 2\n  hard: 2\n",
                "soft given twice"},
        BadYaml{"Misaligned", "- type: nofile\n   soft: 1\n  hard: 1\n", "line 2"},
        BadYaml{"ItemsNotLinedUp", "- type: nofile\n  soft: 1\n  hard: 1\n - type: core\n",
                "items must line up"},
        BadYaml{"Tab", "- type: nofile\n\tsoft: 1\n", "a tab"},
        BadYaml{"NestedValue", "- type: [nofile]\n  soft: 1\n  hard: 1\n", "not a plain value"},
        BadYaml{"Anchor", "- type: &a nofile\n  soft: 1\n  hard: 1\n", "not a plain value"},
        BadYaml{"BlockScalar", "- type: |\n    nofile\n", "not a plain value"},
        BadYaml{"UnterminatedQuote", "- type: \"nofile\n  soft: 1\n  hard: 1\n",
                "unterminated quote"},
        BadYaml{"Escape", "- type: \"no\\x66ile\"\n  soft: 1\n  hard: 1\n", "escapes are not read"},
        BadYaml{"NoSpaceAfterColon", "- type:nofile\n", "expected KEY: VALUE"},
        BadYaml{"FlowUnclosed", "[{type: nofile, soft: 1, hard: 1}", "expected , or ]"},
        BadYaml{"FlowTrailingText", "[] extra", "text after ]"},
        BadYaml{"FlowNotMaps", "[nofile, core]", "expected {"},
        BadYaml{"LeadingZeroNotOctal", "- type: nofile\n  soft: 08\n  hard: 9\n",
                "soft \"08\" has a leading zero, which YAML 1.1 (the NRI sample) reads as octal; "
                "write"},
        BadYaml{"QuotedLeadingZero", "- type: nofile\n  soft: '0777'\n  hard: 9999\n",
                "has a leading zero"},
        BadYaml{"FlowItemUnclosed", "- {type: nofile, soft: 1, hard: 1\n",
                "line 1: byte 31: expected , or }"},
        BadYaml{"FlowItemThenField", "- {type: nofile, soft: 1, hard: 1}\n  soft: 2\n",
                "line 2: expected \"- type"},
        BadYaml{"FlowItemTrailingText", "- {type: nofile, soft: 1, hard: 1} x\n",
                "text after } (a flow map closes on its line)"},
        BadYaml{"NullItem", "- null\n", "expected KEY: VALUE"},
        BadYaml{"MultiLineFlowKey", "[{E\n L IMIty- tyxp- type::L R ReIMIT_NOFILE\n L IMIT",
                "spans lines"},
        BadYaml{"MultiLineFlowValue", "[{type: no\n file, soft: 1, hard: 1}]", "spans lines"},
        BadYaml{"CaseTwice", "- type: nofile\n  Type: core\n  soft: 1\n  hard: 1\n",
                "type given twice"},
        BadYaml{"NulByte", std::string("- type: nofile\0", 15), "NUL"},
        BadYaml{"OneMiB",
                [] {
                  std::string s;
                  while (s.size() < (1U << 20)) s += "- type: nofile\n  soft: 1\n  hard: 1\n";
                  return s;
                }(),
                "longer than 16384 bytes"},
        BadYaml{"JustOverTheBound", std::string(kMaxUlimitYamlBytes + 1, ' '),
                "longer than 16384 bytes"}),
    CaseName{});

TEST(UlimitYaml, AtTheBoundIsRead) {
  std::string text = "- type: nofile\n  soft: 1\n  hard: 2\n";
  text += std::string(kMaxUlimitYamlBytes - text.size(), '\n');
  auto r = ParseUlimitYaml(text);
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_EQ(Limits(*r), "nofile=1:2");
}

}  // namespace
}  // namespace ocirlimit
