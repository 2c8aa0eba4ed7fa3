// The grammar the policy's CEL reads an entry with, against the node's own
// parser: every entry of the table is accepted by both or by neither
// (std::regex runs the same RE2 subset: groups, classes, anchors).
#include "adapters/k8s/cel_rlimits.h"

#include <gtest/gtest.h>

#include <regex>

#include "formats/text.h"
#include "tests/testing/case_name.h"

namespace ocirlimit::k8s {
namespace {

struct EntryCase {
  const char* name;
  const char* entry;  // already trimmed, as CelTrim leaves it
};

// Named in test names and GetParam() lines (case_name.h's PrintTo is for ocirlimit's own
// namespace, which argument-dependent lookup does not search from here).
void PrintTo(const EntryCase& c, std::ostream* os) { *os << c.name; }

class GrammarAgrees : public ::testing::TestWithParam<EntryCase> {};

// The node's parse, up to what EntryGrammar covers (64-bit overflow and
// soft > hard are CelFits's and the policy's own comparisons).
bool NodeGrammarAccepts(const std::string& entry) {
  auto r = ParseRlimit(entry);
  if (r) return true;
  const std::string why = r.error().Text();
  return why.find("overflows 64 bits") != std::string::npos ||
         why.find("is greater than hard") != std::string::npos;
}

TEST_P(GrammarAgrees, WithParseRlimit) {
  const std::string entry = GetParam().entry;
  const std::regex grammar(EntryGrammar());
  EXPECT_EQ(std::regex_search(entry, grammar), NodeGrammarAccepts(entry))
      << Quote(entry) << " against " << EntryGrammar();
}

INSTANTIATE_TEST_SUITE_P(
    Entries, GrammarAgrees,
    ::testing::Values(
        EntryCase{"plain", "memlock=1"}, EntryCase{"soft_hard", "memlock=1:2"},
        EntryCase{"blanks", "memlock \t=\v 1K \f: \r2K"}, EntryCase{"upper", "MEMLOCK=1G"},
        EntryCase{"prefix", "rlimit_memlock=1"}, EntryCase{"prefix_upper", "RLIMIT_NoFile=1"},
        EntryCase{"double_prefix", "rlimit_rlimit_memlock=1"}, EntryCase{"unknown", "memlok=1"},
        EntryCase{"no_equals", "memlock"}, EntryCase{"empty_name", "=1"},
        EntryCase{"empty_soft", "memlock=:1"}, EntryCase{"empty_hard", "memlock=1:"},
        EntryCase{"three", "memlock=1:2:3"}, EntryCase{"equals_twice", "memlock==1"},
        EntryCase{"unlimited", "memlock=unlimited"}, EntryCase{"Infinity", "stack=1:Infinity"},
        EntryCase{"minus_one", "memlock=-1:-1"}, EntryCase{"minus_two", "memlock=-2"},
        EntryCase{"minus_one_k", "memlock=-1K"}, EntryCase{"unlimited_k", "memlock=unlimitedK"},
        EntryCase{"plus", "memlock=+1"}, EntryCase{"suffixes", "memlock=1k:2M"},
        EntryCase{"suffix_g_t", "data=1g:2T"}, EntryCase{"suffix_alone", "memlock=K"},
        EntryCase{"suffix_twice", "memlock=1KK"}, EntryCase{"suffix_p", "memlock=1P"},
        EntryCase{"count_suffix", "nofile=1k"}, EntryCase{"count_hard_suffix", "nproc=1:2M"},
        EntryCase{"count_plain", "nofile=65536"}, EntryCase{"blank_inside", "memlock=1 K"},
        EntryCase{"every_byte_type", "msgqueue=1T"}, EntryCase{"rttime", "rttime=5"},
        EntryCase{"hex", "memlock=0x10"}, EntryCase{"leading_zeros", "memlock=0001"},
        EntryCase{"kelvin", "memloc\u212a=1"}, EntryCase{"long_s", "rs\u017f=1"},
        EntryCase{"nbsp_value", "memlock=1\u00a0"}, EntryCase{"dot", "memlock=1.5G"}),
    CaseName{});

TEST(NameGrammar, AcceptsEveryTypeAndNothingElse) {
  const std::regex names(NameGrammar());
  for (const RlimitInfo& info : AllRlimits()) {
    const std::string n(info.name);
    EXPECT_TRUE(std::regex_search(n, names)) << n;
    EXPECT_TRUE(std::regex_search("RLIMIT_" + Lower(n), names)) << n;
    EXPECT_FALSE(std::regex_search(n + "x", names)) << n;
    EXPECT_FALSE(std::regex_search("rlimit_rlimit_" + n, names)) << n;
  }
}

TEST(KnownNames, AreTheNodesWords) {
  auto r = ParseRlimit("nosuch=1");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().Text().find(KnownNames()), std::string::npos) << r.error().Text();
}

TEST(CelByteNames, ListsTheTypesThatTakeSuffixes) {
  EXPECT_EQ(CelByteNames(),
            "['fsize', 'data', 'stack', 'core', 'rss', 'memlock', 'as', 'msgqueue']");
}

TEST(CelString, EscapesQuotesAndBackslashes) { EXPECT_EQ(CelString("a'b\\c"), "'a\\'b\\\\c'"); }

TEST(CelCeilings, MapsEachTypeToSoftAndHard) {
  const std::vector<Rlimit> c = {*ParseRlimit("memlock=64M"), *ParseRlimit("stack=8M:unlimited")};
  EXPECT_EQ(CelCeilings(c),
            "{'memlock': [67108864u, 67108864u], 'stack': [8388608u, 18446744073709551615u]}");
  EXPECT_EQ(CelCeilingTexts(c),
            "{'memlock': 'memlock=67108864:67108864', 'stack': 'stack=8388608:unlimited'}");
}

TEST(CelValue, AppliesTheSuffixAndKnowsTheSpecialWords) {
  const std::string v = CelValue("t");
  for (const char* word : {"'unlimited'", "'infinity'", "'-1'"}) {
    EXPECT_NE(v.find(word), std::string::npos) << word;
  }
  for (const char* m : {"1024u", "1048576u", "1073741824u", "1099511627776u"}) {
    EXPECT_NE(v.find(m), std::string::npos) << m;
  }
  EXPECT_NE(CelFits("t").find("'18446744073709551615'"), std::string::npos);
}

// The whole expression: uint() sees only digits that fit 64 bits (20 digits
// and at most 2^64-1; a longer text never reaches it), and the suffix's
// multiple must fit too. What the API server makes of it is the admission
// suite's (cases mal-overflow, unit-t-overflow, unit-t-largest, max-u64).
TEST(CelFits, NeverLetsMoreThan64BitsReachUint) {
  const std::string sig = "(t).find(r'[1-9][0-9]*')";
  EXPECT_EQ(CelFits("t"),
            "((t).lowerAscii() in ['unlimited', 'infinity', '-1'] || (size(" + sig +
                ") < 20 || size(" + sig + ") == 20 && " + sig + " <= '18446744073709551615') && (" +
                sig + " == '' || uint(" + sig +
                ") <= 18446744073709551615u / ((t).endsWith('k') || (t).endsWith('K') ? 1024u : "
                "(t).endsWith('m') || (t).endsWith('M') ? 1048576u : (t).endsWith('g') || "
                "(t).endsWith('G') ? 1073741824u : (t).endsWith('t') || (t).endsWith('T') ? "
                "1099511627776u : 1u)))");
}

// The node cuts a quoted value at 256 bytes, backing off to a character's
// start: the first 256 characters when they are ASCII, else the longest
// prefix of 64 to 255 characters within 256 bytes (the suite's mal-bytes-*
// cases on the real API server).
TEST(CelQuote, CutsAt256BytesNeverInsideACharacter) {
  const std::string q = CelQuote("x");
  EXPECT_NE(q.find("(size(bytes(x)) <= 256 ? x : (x).substring(0, (size(x) >= 256 && "
                   "size(bytes((x).substring(0, 256))) == 256 ? 256 : [64, 65, 66, "),
            std::string::npos)
      << q;
  EXPECT_NE(q.find(", 254, 255].filter(k, k < size(x) && size(bytes((x).substring(0, k))) <= "
                   "256).max()))"),
            std::string::npos)
      << q;
  EXPECT_NE(q.find(" + (size(bytes(x)) <= 256 ? '\"' : '\\u2026\" (' + string(size(bytes(x))) + "
                   "' bytes)'))"),
            std::string::npos)
      << q;
}

}  // namespace
}  // namespace ocirlimit::k8s
