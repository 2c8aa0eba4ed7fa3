// The installer's pure checks and renderers (node_files.h): --rlimits read
// with the rlimit language, node paths from the command line, the drop-in
// read back as TOML, and the node's remembered mode.
#include "node/node_files.h"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "tests/testing/case_name.h"

namespace ocirlimit::node {
namespace {

// case_name.h's PrintTo, where argument-dependent lookup looks for these cases.
using ::ocirlimit::PrintTo;

// --- CheckRlimits ---

struct RlimitsCase {
  std::string name;
  std::string csv;
  std::vector<std::string> want;  // the entries, when accepted
  std::string error = {};         // a part of the one error line, when refused
};

class CheckRlimitsTest : public ::testing::TestWithParam<RlimitsCase> {};

TEST_P(CheckRlimitsTest, AcceptsWhatEveryProgramReads) {
  const RlimitsCase& c = GetParam();
  auto got = CheckRlimits(c.csv);
  if (c.error.empty()) {
    ASSERT_TRUE(got.ok()) << got.error().Text();
    EXPECT_EQ(*got, c.want);
    return;
  }
  ASSERT_FALSE(got.ok()) << "accepted " << c.csv;
  const std::string text = got.error().Text();
  EXPECT_TRUE(text.starts_with("--rlimits: ")) << text;
  EXPECT_NE(text.find(c.error), std::string::npos) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << "one line: " << text;
}

INSTANTIATE_TEST_SUITE_P(
    Node, CheckRlimitsTest,
    ::testing::Values(RlimitsCase{"One", "memlock=unlimited", {"memlock=unlimited"}},
                      RlimitsCase{"TwoWithSpaces",
                                  " memlock=8M , nofile=4096:8192 ",
                                  {"memlock=8M", "nofile=4096:8192"}},
                      RlimitsCase{"EmptyEntriesSkipped", "memlock=1M,,", {"memlock=1M"}},
                      RlimitsCase{"Nothing", "", {}},
                      RlimitsCase{"MisspelledType", "memlok=unlimited", {}, "memlok"},
                      RlimitsCase{"NotANumber", "memlock=lots", {}, "lots"},
                      RlimitsCase{"SoftOverHard", "nofile=9:3", {}, "nofile=9:3"},
                      RlimitsCase{"ThreeParts", "memlock=1:2:3", {}, "memlock=1:2:3"},
                      RlimitsCase{"SameTypeTwice", "nofile=1024,nofile=2048", {}, "nofile"}),
    CaseName{});

// --- CheckNodePath ---

struct NodePathCase {
  std::string name;
  std::string path;
  std::string error;  // "" when accepted, else a part of the error
};

class CheckNodePathTest : public ::testing::TestWithParam<NodePathCase> {};

TEST_P(CheckNodePathTest, OnlyAbsoluteCleanPaths) {
  const NodePathCase& c = GetParam();
  Status st = CheckNodePath("--prefix", c.path);
  if (c.error.empty()) {
    EXPECT_TRUE(st.ok()) << st.error().Text();
    return;
  }
  ASSERT_FALSE(st.ok()) << "accepted " << c.path;
  EXPECT_TRUE(st.error().Text().starts_with("--prefix: ")) << st.error().Text();
  EXPECT_NE(st.error().Text().find(c.error), std::string::npos) << st.error().Text();
}

INSTANTIATE_TEST_SUITE_P(
    Node, CheckNodePathTest,
    ::testing::Values(NodePathCase{"UsrLocal", "/usr/local", ""},
                      NodePathCase{"SpaceAndQuote", "/opt/a b\"c", ""},
                      NodePathCase{"Root", "/", ""},
                      NodePathCase{"Relative", "usr/local", "must be absolute"},
                      NodePathCase{"Empty", "", "must be absolute"},
                      NodePathCase{"Newline", "/opt/x\ny", "control character"},
                      NodePathCase{"Tab", "/opt/\tx", "control character"},
                      NodePathCase{"Delete", "/opt/\x7f", "control character"},
                      NodePathCase{"DotDot", "/opt/../etc", "\"..\" component"},
                      NodePathCase{"Dot", "/opt/./bin", "\"..\" component"},
                      NodePathCase{"TrailingDotDot", "/opt/..", "\"..\" component"}),
    CaseName{});

// --- RenderDropin ---

struct DropinCase {
  std::string name;
  std::vector<std::string> rlimits;
  std::vector<std::string> nvidia;  // [runtime] runtimes; empty: no [runtime]
  bool ok = true;
};

class RenderDropinTest : public ::testing::TestWithParam<DropinCase> {};

std::vector<std::string> StringsAt(const toml::node_view<toml::node>& v) {
  std::vector<std::string> out;
  if (const toml::array* a = v.as_array()) {
    for (const auto& e : *a) out.push_back(e.value_or(std::string("<not a string>")));
  }
  return out;
}

TEST_P(RenderDropinTest, ReadsBackAsWritten) {
  const DropinCase& c = GetParam();
  auto text = RenderDropin(c.rlimits, c.nvidia);
  ASSERT_EQ(text.ok(), c.ok) << (text.ok() ? *text : text.error().Text());
  if (!c.ok) {
    EXPECT_NE(text.error().Text().find("does not read back"), std::string::npos)
        << text.error().Text();
    return;
  }
  toml::table t = toml::parse(*text);
  EXPECT_EQ(StringsAt(t["rlimits"]), c.rlimits) << *text;
  EXPECT_EQ(StringsAt(t["runtime"]["runtimes"]), c.nvidia) << *text;
  EXPECT_EQ(t.contains("runtime"), !c.nvidia.empty()) << *text;
  // No rlimits (--policy: the fleet's file sets them) is no key, not an empty list that would
  // clear what a drop-in before it sets.
  EXPECT_EQ(t.contains("rlimits"), !c.rlimits.empty()) << *text;
  EXPECT_EQ(t.size(), (c.rlimits.empty() ? 0U : 1U) + (c.nvidia.empty() ? 0U : 1U))
      << "no other key: " << *text;
}

INSTANTIATE_TEST_SUITE_P(
    Node, RenderDropinTest,
    ::testing::Values(DropinCase{"RlimitsOnly", {"memlock=unlimited"}, {}},
                      DropinCase{"NoRlimits", {}, {}},
                      DropinCase{"WithNvidia",
                                 {"memlock=8M", "nofile=4096"},
                                 {"/usr/local/nvidia/toolkit/nvidia-container-runtime",
                                  "/usr/bin/nvidia-container-runtime"}},
                      // A value that would be TOML if pasted stays one string.
                      DropinCase{"InjectionStaysAString",
                                 {"memlock=1M"},
                                 {"/x\"]\n[requests]\nceilings = [\"memlock=unlimited\"]\n#"}},
                      DropinCase{"BadRlimitDoesNotReadBack", {"memlok=1"}, {}, false}),
    CaseName{});

// --- ParseMode and RenderMode ---

struct ModeCase {
  std::string name;
  std::string text;
  NodeMode want;
  std::string error = {};  // a part of the error, when refused
};

class ParseModeTest : public ::testing::TestWithParam<ModeCase> {};

TEST_P(ParseModeTest, ReadsTheRememberedMode) {
  const ModeCase& c = GetParam();
  auto got = ParseMode(c.text, "mode.json");
  if (!c.error.empty()) {
    ASSERT_FALSE(got.ok()) << "accepted " << c.text;
    EXPECT_NE(got.error().Text().find(c.error), std::string::npos) << got.error().Text();
    return;
  }
  ASSERT_TRUE(got.ok()) << got.error().Text();
  EXPECT_EQ(*got, c.want);
  auto again = ParseMode(RenderMode(*got), "again");
  ASSERT_TRUE(again.ok()) << again.error().Text();
  EXPECT_EQ(*again, c.want) << "RenderMode round trip: " << RenderMode(*got);
}

INSTANTIATE_TEST_SUITE_P(
    Node, ParseModeTest,
    ::testing::Values(
        ModeCase{"Full",
                 R"({"prefix": "/usr/local", "runtimes": ["containerd", "crio"], "nvidia": true,
                     "nvidia_runtime": "/opt/nv", "containerd_added_default": "runc"})",
                 {"/usr/local", {"containerd", "crio"}, true, "/opt/nv", "runc"}},
        ModeCase{"EmptyObjectIsTheDefaults", "{}", {}},
        ModeCase{
            "UnknownKeysIgnored", R"({"prefix": "/p", "later": 1})", {"/p", {}, false, "", ""}},
        ModeCase{"NvidiaNotABoolean", R"({"nvidia": "yes"})", {}, "nvidia: not a boolean"},
        ModeCase{"PrefixNotAString", R"({"prefix": 1})", {}, "prefix: not a string"},
        ModeCase{"RuntimesNotAList", R"({"runtimes": "containerd"})", {}, "runtimes: not a list"},
        ModeCase{"RuntimesNotStrings", R"({"runtimes": [1]})", {}, "not a list of strings"},
        ModeCase{"NotAnObject", "[]", {}, "mode.json"},
        ModeCase{"NotJson", "nvidia=true", {}, "mode.json"}),
    CaseName{});

}  // namespace
}  // namespace ocirlimit::node
