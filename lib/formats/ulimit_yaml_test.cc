#include "formats/ulimit_yaml.h"

#include <gtest/gtest.h>

#include <chrono>
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

TEST_P(ReadsUlimitYaml, AsTheSampleReadsIt) {
  auto r = ParseUlimitYaml(GetParam().text);
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_EQ(Limits(*r), GetParam().want);
}

// Each is what the NRI sample's own parser gives (tests/peers/ulimit_corpus.txt
// holds them too, checked against it).
INSTANTIATE_TEST_SUITE_P(
    UlimitYaml, ReadsUlimitYaml,
    ::testing::Values(
        GoodYaml{"SampleReadme",
                 "- type: RLIMIT_NOFILE\n  soft: 1024\n  hard: 4096\n"
                 "- type: RLIMIT_MEMLOCK\n  soft: 1073741824\n  hard: 1073741824\n",
                 "nofile=1024:4096,memlock=1073741824:1073741824"},
        GoodYaml{"FieldsInAnyOrderQuotedAndCommented",
                 "---\n# pod ulimits\n- hard: 8   # hard\n  soft: 4\n  type: \"nofile\"\n",
                 "nofile=4:8"},
        GoodYaml{"IndentedListAndCrlf", "  - type: core\r\n    soft: 0\r\n    hard: 0\r\n",
                 "core=0:0"},
        GoodYaml{"CrLineEnds", "- type: core\r  soft: 1\r  hard: 2\r", "core=1:2"},
        GoodYaml{"MaxIsUnlimited",
                 "- type: memlock\n  soft: 18446744073709551615\n  hard: 18446744073709551615\n",
                 "memlock=unlimited:unlimited"},
        GoodYaml{"FlowStyle",
                 "[{type: nofile, soft: 10, hard: 20}, {type: stack, soft: 1, hard: 1}]",
                 "nofile=10:20,stack=1:1"},
        GoodYaml{"Json", R"([{"type":"RLIMIT_NOFILE","soft":10,"hard":20}])", "nofile=10:20"},
        GoodYaml{"TrailingCommas", "[{type: nofile, soft: 1, hard: 2,},]", "nofile=1:2"},
        GoodYaml{"DashOnItsOwnLine", "-\n  type: nofile\n  soft: 1\n  hard: 2\n", "nofile=1:2"},
        GoodYaml{"TabAfterColon", "- type:\tnofile\n  soft:\t1\n  hard: 2\n", "nofile=1:2"},
        GoodYaml{"Bom", "\xEF\xBB\xBF- {type: nofile, soft: 1, hard: 2}", "nofile=1:2"},
        GoodYaml{"DirectiveAndMarkers", "%YAML 1.1\n--- [{type: nofile, soft: 1, hard: 2}]\n...\n",
                 "nofile=1:2"},
        GoodYaml{"Hex", "[{type: nofile, soft: 0x400, hard: 0X800}]", "nofile=1024:2048"},
        GoodYaml{"BinaryAndOctal0o", "[{type: nofile, soft: 0b11, hard: 0o17}]", "nofile=3:15"},
        GoodYaml{"UnderscoresAndSign", "[{type: nofile, soft: 1_024, hard: +2_048}]",
                 "nofile=1024:2048"},
        GoodYaml{"MinusZero", "[{type: nofile, soft: -0, hard: 1}]", "nofile=0:1"},
        GoodYaml{"WholeFloats", "[{type: nofile, soft: 1e3, hard: 2048.0}]", "nofile=1000:2048"},
        GoodYaml{"FloatAtTheTop",
                 "[{type: nofile, soft: 18446744073709550000.0, hard: 1.8446744073709550e19}]",
                 "nofile=18446744073709550000:18446744073709550000"},
        GoodYaml{"OctalDigitsUnderEight", "[{type: nofile, soft: 07, hard: 08}]", "nofile=7:8"},
        GoodYaml{"IntTags", "[{type: nofile, soft: !!int \"5\", hard: !!float 6}]", "nofile=5:6"},
        GoodYaml{"BinaryType", "[{type: !!binary bm9maWxl, soft: 1, hard: 2}]", "nofile=1:2"},
        GoodYaml{"QuestionMarkInBlockOrQuoted",
                 "- type: nofile\n  soft: 1\n  hard: 2\n  x: a?b\n  y: [\"c?d\", ?e]\n",
                 "nofile=1:2"},
        // go-yaml keeps the last value of a key (0 and 0x0 are one int
        // key), so json.Marshal never meets the NaN.
        GoodYaml{"NanOverwritten", "[{type: nofile, soft: 1, hard: 2, 0: .nan, 0x0: 1}]",
                 "nofile=1:2"},
        GoodYaml{"UnknownKeyIgnored", "[{type: nofile, soft: 1, hard: 2, path: x, 7: y}]",
                 "nofile=1:2"},
        GoodYaml{"KeysInAnyCase", "- Type: nofile\n  SOFT: 1\n  hArD: 2\n", "nofile=1:2"},
        GoodYaml{"LongS", "[{type: \xC5\xBFtack, \xC5\xBFoft: 1, hard: 2}]", "stack=1:2"},
        GoodYaml{"DotlessI", "[{type: rl\xC4\xB1m\xC4\xB1t_nof\xC4\xB1le, soft: 1, hard: 2}]",
                 "nofile=1:2"},
        GoodYaml{"AnchorsAndMerge",
                 "- &a {type: nofile, soft: 1, hard: 2}\n- <<: *a\n  type: core\n",
                 "nofile=1:2,core=1:2"},
        GoodYaml{"MergeListEarlierWins", "- {<<: [{soft: 1}, {soft: 2}], type: nofile, hard: 9}",
                 "nofile=1:9"},
        GoodYaml{"KeyOverMerge", "- {<<: {soft: 1}, type: nofile, soft: 2, hard: 9}", "nofile=2:9"},
        GoodYaml{"QuotedMergeKeyIsAKey", "- {'<<': {soft: 1}, type: nofile, soft: 2, hard: 9}",
                 "nofile=2:9"},
        GoodYaml{"EmptyFlowList", "[]", ""}, GoodYaml{"Empty", "", ""},
        GoodYaml{"Null", "null", ""}, GoodYaml{"Tilde", "~\n", ""},
        GoodYaml{"OnlyComments", "# nothing\n\n", ""}, GoodYaml{"OnlyMarker", "---", ""}),
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

// Where the sample refuses too, and (marked "listed") where it reads a
// number other than the text's: docs/policy.md lists those.
INSTANTIATE_TEST_SUITE_P(
    UlimitYaml, RefusesUlimitYaml,
    ::testing::Values(
        BadYaml{"NotAList", "type: nofile\nsoft: 1\nhard: 2\n", "not a list"},
        BadYaml{"AScalar", "nofile", "not a list"},
        BadYaml{"ItemNotAMap", "[nofile, core]", "item 0 (line 1): not a mapping"},
        BadYaml{"NullItem", "- null\n", "not a mapping"},
        BadYaml{"MissingType", "- soft: 1\n  hard: 1\n", "no type"},
        BadYaml{"NullType", "[{type: ~, soft: 1, hard: 2}]", "type is null"},
        BadYaml{"NumberType", "[{type: 7, soft: 1, hard: 2}]", "type \"7\" is not a Linux rlimit"},
        BadYaml{"ListType", "- type: [nofile]\n  soft: 1\n  hard: 1\n", "type is a list"},
        BadYaml{"UnknownType", "- type: RLIMIT_GPU\n  soft: 1\n  hard: 1\n",
                "type \"RLIMIT_GPU\" is not a Linux rlimit"},
        BadYaml{"PrefixTwice", "[{type: RLIMIT_RLIMIT_CORE, soft: 1, hard: 2}]", "not a Linux"},
        BadYaml{"Negative", "- type: nofile\n  soft: -1\n  hard: 1\n", "soft: \"-1\" is negative"},
        BadYaml{"NegativeFloat", "[{type: nofile, soft: -0.0, hard: 1}]", "is negative"},
        BadYaml{"Huge", "[{type: nofile, soft: 1, hard: 18446744073709551616}]",
                "hard: \"18446744073709551616\" is over 18446744073709551615"},
        BadYaml{"HugeFloat", "[{type: nofile, soft: 1, hard: 18446744073709551615.0}]", "is over"},
        BadYaml{"Fraction", "[{type: nofile, soft: 1.5, hard: 2}]", "not a whole number"},
        BadYaml{"Infinity", "[{type: nofile, soft: .inf, hard: 2}]", "not a finite number"},
        BadYaml{"NanAnywhere", "[{type: nofile, soft: 1, hard: 2, x: [{y: .nan}]}]",
                "not a finite"},
        BadYaml{"NanKeptOverAnother", "[{type: nofile, soft: 1, hard: 2, x: 1, 0x0: .inf}]",
                "not a finite"},
        BadYaml{"QuotedNumber", "- type: nofile\n  soft: \"1024\"\n  hard: 4096\n",
                "soft: \"1024\" is not a number (YAML 1.1 reads it as a !!str)"},
        BadYaml{"Bool", "[{type: nofile, soft: yes, hard: 2}]", "reads it as a !!bool"},
        BadYaml{"Suffix", "- type: memlock\n  soft: 1G\n  hard: 1G\n", "\"1G\" is not a number"},
        BadYaml{"TagMismatch", "[{type: nofile, soft: !!int abc, hard: 2}]",
                "\"abc\" is not a \"!!int\""},
        BadYaml{"BadBase64", "[{type: !!binary '%%', soft: 1, hard: 2}]", "not base64"},
        BadYaml{"SoftOverHard", "- type: nofile\n  soft: 9\n  hard: 8\n", "soft is over hard"},
        BadYaml{"NullKey", "[{type: nofile, soft: 1, hard: 2, ~: 1}]", "a key is null"},
        BadYaml{"UintKey", "[{type: nofile, soft: 1, hard: 2, 18446744073709551615: 1}]",
                "is over 2^63-1"},
        BadYaml{"ListKey", "[{type: nofile, soft: 1, hard: 2, [a]: 1}]", "a key is a list"},
        BadYaml{"MergeOfScalar", "- {<<: 5, type: nofile, soft: 1, hard: 9}",
                "merges only mappings"},
        BadYaml{"MergeOfAliasedList", "- &b [{soft: 1}]\n- {<<: *b, type: nofile, hard: 9}",
                "merges only mappings"},
        BadYaml{"UnknownAnchor", "[{type: nofile, soft: *n, hard: 2}]", "unknown anchor \"n\""},
        BadYaml{"AnchorInItself", "- &a [*a]", "anchor \"a\" contains itself"},
        BadYaml{"QuestionMarkInFlow", "[{type: nofile, soft: 1, hard: 2, x: a?b}]",
                "\"a?b\": a '?' inside a plain value"},
        BadYaml{"Yaml12", "%YAML 1.2\n---\n[]", "%YAML 1.2 (the NRI sample reads only 1.1)"},
        BadYaml{"Misaligned", "- type: nofile\n   soft: 1\n  hard: 1\n", "line 2 column 8"},
        BadYaml{"TabIndent", "- type: nofile\n\tsoft: 1\n", "tab"},
        BadYaml{"UnterminatedQuote", "- type: \"nofile\n  soft: 1\n", "unexpected end of stream"},
        BadYaml{"FlowUnclosed", "[{type: nofile, soft: 1, hard: 1}", "did not find expected"},
        BadYaml{"NulByte", std::string("- type: nofile\0", 15), "control characters"},
        // Listed: the sample's number is not the text's.
        BadYaml{"MissingHard", "- type: nofile\n  soft: 1\n",
                "no hard: the NRI sample reads a missing hard as 0"},
        BadYaml{"NullSoft", "[{type: nofile, soft: ~, hard: 2}]",
                "soft \"~\" is null: the NRI sample reads it as 0"},
        BadYaml{"EmptySoft", "[{type: nofile, soft, hard: 2}]", "is null"},
        BadYaml{"Octal", "- type: nofile\n  soft: 0777\n  hard: 9999\n",
                "soft \"0777\" has a leading zero, which YAML 1.1 (the NRI sample) reads as octal: "
                "511 there"},
        BadYaml{"OctalWithUnderscore", "[{type: nofile, soft: 0_10, hard: 99}]", "octal: 8 there"},
        BadYaml{"OctalTaggedFloat", "[{type: nofile, soft: !!float 010, hard: 99}]", "octal: 8"},
        // libyaml refuses `soft:` before a flow indicator; go-yaml reads one key.
        BadYaml{"GluedColonBeforeFlow", "[{\"type\" : core,soft:}] # end\n",
                "\"soft:\" is one key (YAML needs a space after the colon)"},
        BadYaml{"GluedColon", "[{type: nofile, soft:1024, hard: 4096}]",
                "\"soft:1024\" is one key (YAML needs a space after the colon), so the NRI sample "
                "reads soft as 0; write \"soft: 1024\""},
        // fuzz seed glued-key-spans-lines: a plain key folds its lines; the
        // message quotes it.
        BadYaml{"GluedKeyOverLines", "[{type: nofile, soft:\\\r\r\r &a, hard: 1}]", "is one key"},
        BadYaml{"GluedType", "[{type:nofile,soft:1,hard:2}]", "reads type as empty"},
        BadYaml{"DuplicateKey", "- type: nofile\n  soft: 1\n  soft: 2\n  hard: 2\n",
                "line 3: \"soft\" given twice"},
        BadYaml{"DuplicateInTwoCases", "- type: nofile\n  Type: core\n  soft: 1\n  hard: 1\n",
                "type given twice, in two spellings"},
        BadYaml{"MergeOverAKey", "- {soft: 5, <<: {soft: 1}, type: nofile, hard: 9}",
                "\"soft\" given twice"},
        BadYaml{
            "DuplicateType",
            "- type: nofile\n  soft: 1\n  hard: 1\n- type: RLIMIT_NOFILE\n  soft: 2\n  hard: 2\n",
            "item 1 (line 4): type nofile given twice"},
        BadYaml{"SecondDocument", "- {type: nofile, soft: 1, hard: 2}\n---\n[]\n",
                "a second document, which the NRI sample drops"},
        BadYaml{"TextAfterTheDocument", "[] extra", "text after the document"},
        BadYaml{"ImpreciseFloat", "[{type: nofile, soft: 9007199254740993.0, hard: 1e19}]",
                "soft \"9007199254740993.0\" is read as a float: the NRI sample reads "
                "9007199254740992"},
        BadYaml{"ImpreciseIntTaggedFloat",
                "[{type: nofile, soft: !!float 9007199254740993, hard: 1e19}]",
                "reads 9007199254740992"},
        BadYaml{"Underflow", "[{type: nofile, soft: 1e-400, hard: 1}]", "the NRI sample reads 0"},
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

// Deep nesting in a key the sample ignores is read without recursion.
TEST(UlimitYaml, DeepNestingIsRead) {
  const size_t depth = (kMaxUlimitYamlBytes - 64) / 2;
  const std::string text = "[{type: nofile, soft: 1, hard: 2, x: " + std::string(depth, '[') +
                           std::string(depth, ']') + "}]";
  auto r = ParseUlimitYaml(text);
  ASSERT_TRUE(r.ok()) << r.error().Text();
  EXPECT_EQ(Limits(*r), "nofile=1:2");
}

// Merges of merges through aliases grow exponentially; the count of pairs
// read is bounded.
TEST(UlimitYaml, MergeBombIsRefused) {
  std::string text = "- x: [&a0 {x: 1}";
  for (int i = 1; i < 30; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    text += ", &a" + std::to_string(i) + " {<<: [" + prev + ", " + prev + "]}";
  }
  text += "]\n  <<: *a29\n  type: nofile\n  soft: 1\n  hard: 2\n";
  const auto start = std::chrono::steady_clock::now();
  auto r = ParseUlimitYaml(text);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Text().find("aliases repeat too many keys"), std::string::npos)
      << r.error().Text();
}

}  // namespace
}  // namespace ocirlimit
