#include "formats/toml_guard.h"

#include <gtest/gtest.h>

#include "core/config.h"
#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

// "a.a.a...": `parts` bare keys joined by `sep`.
std::string Dotted(int parts, const std::string& sep = ".") {
  std::string s = "a";
  for (int i = 1; i < parts; ++i) s += sep + "a";
  return s;
}
std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

struct GuardCase {
  const char* name;
  std::string text;
  const char* error_part;  // nullptr: accepted
};

class TomlGuard : public ::testing::TestWithParam<GuardCase> {};

TEST_P(TomlGuard, AcceptsOrNamesThePlace) {
  const GuardCase& c = GetParam();
  auto st = CheckTomlSafeText(c.text);
  if (c.error_part == nullptr) {
    EXPECT_TRUE(st.ok()) << st.error().Text();
    return;
  }
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().Text().find(c.error_part), std::string::npos) << st.error().Text();
}

INSTANTIATE_TEST_SUITE_P(
    Texts, TomlGuard,
    ::testing::Values(
        GuardCase{"ascii", "rlimits = [\"memlock=1\"] # ok\n", nullptr},
        GuardCase{"safe_non_ascii", "# GPU \xe2\x9c\x93 \xf0\x9f\x9a\x80\nx = \"\xe4\xb8\xad\"\n",
                  nullptr},
        GuardCase{"latin1_in_code", "rlimits \xc2\xa1= []\n", "line 1, column 9: character U+00A1"},
        GuardCase{"latin1_in_comment", "a = 1\n# caf\xc3\xa9\n",
                  "line 2, column 6: character U+00E9"},
        GuardCase{"cjk_punctuation", "x = \"\xe3\x80\x81\"", "character U+3001"},
        GuardCase{"ideographic_space_is_whitespace", "x\xe3\x80\x80= 1", nullptr},
        GuardCase{"arabic_forms", "x = \"\xef\xb9\xb0\"", "character U+FE70"},
        GuardCase{"overlong", "x = \"\xc1\xa9\"", "not valid UTF-8"},
        GuardCase{"surrogate", "x = \"\xed\xa0\x80\"", "not valid UTF-8"},
        GuardCase{"truncated", "x = \"\xe4\xb8", "not valid UTF-8"},
        GuardCase{"stray_continuation", "\x80", "line 1, column 1: not valid UTF-8"},
        // Depth: what toml++ does not bound itself.
        GuardCase{"dotted_key_60000_parts", Dotted(60000) + " = 1\n",
                  "line 1, column 200: keys nested deeper than 100 levels"},
        GuardCase{"header_80000_parts", "[" + Dotted(80000) + "]\n", "deeper than 100 levels"},
        GuardCase{"array_header_deep", "[[" + Dotted(101) + "]]\n", "deeper than 100 levels"},
        GuardCase{"deep_key_without_value", Dotted(200), "the limit is 100"},
        GuardCase{"dotted_key_at_the_limit", Dotted(100) + " = 1\n", nullptr},
        GuardCase{"dotted_key_past_the_limit", Dotted(101) + " = 1\n", "the limit is 100"},
        GuardCase{"spaced_dots", Dotted(101, " . ") + " = 1\n", "the limit is 100"},
        GuardCase{"quoted_parts", Dotted(101, ".\"b.c\".") + " = 1\n", "the limit is 100"},
        GuardCase{"header_plus_key_at_the_limit", "[" + Dotted(60) + "]\n" + Dotted(40) + "=1\n",
                  nullptr},
        GuardCase{"header_plus_key_past_the_limit", "[" + Dotted(60) + "]\n" + Dotted(41) + "=1\n",
                  "line 2, column"},
        GuardCase{"a_new_header_resets", "[" + Dotted(99) + "]\n[b]\n" + Dotted(90) + "=1\n",
                  nullptr},
        GuardCase{"inline_tables_add_up",
                  "x = " + Repeat("{" + Dotted(10) + " = ", 10) + "1" + Repeat("}", 10) + "\n",
                  "deeper than 100 levels"},
        GuardCase{"inline_tables_within",
                  "x = " + Repeat("{" + Dotted(9) + " = ", 10) + "1" + Repeat("}", 10) + "\n",
                  nullptr},
        GuardCase{"nested_arrays", "x = " + Repeat("[", 101) + Repeat("]", 101) + "\n",
                  "deeper than 100 levels"},
        GuardCase{"dots_in_strings_and_values",
                  "\"" + Dotted(500) + "\" = '" + Dotted(500) +
                      "'\nf = [1.5, 2.5]\nt = 1979-05-27T07:32:00.999Z\nm = \"\"\"\n[" +
                      Dotted(500) + "]\\\"\"\"\"\nl = '''\n" + Dotted(500) + "'''\n",
                  nullptr},
        GuardCase{"dots_in_comments", "# " + Dotted(500) + "\n[a] # [" + Dotted(500) + "]\n",
                  nullptr},
        GuardCase{"escaped_quote_does_not_end_a_string", "x = \"\\\" " + Dotted(500) + "\"\n",
                  nullptr},
        GuardCase{"containerd_shape",
                  "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes."
                  "runc.options]\nBinaryName = \"/usr/bin/runc\"\nx = {a.b = [1, {c.d = 2}]}\n",
                  nullptr},
        GuardCase{"too_large", std::string(kMaxTomlBytes + 1, '#'),
                  "the text is 4194305 bytes; the limit is 4194304"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(TomlGuard, ParseConfigReportsItWithTheFile) {
  auto cfg = ParseConfig("rlimits \xc2\xa1= []\n", "/etc/oci-rlimit/config.toml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.error().Text(),
            "config \"/etc/oci-rlimit/config.toml\": line 1, column 9: character U+00A1 is not "
            "accepted (the TOML library mishandles it); use ASCII");
}

TEST(TomlGuard, DeepKeysAndHeadersAreRefusedBeforeTheParser) {
  // Both crashed toml++ with SIGSEGV before the guard counted depth.
  for (const std::string& text : {Dotted(60000) + " = 1\n", "[" + Dotted(80000) + "]\n"}) {
    auto cfg = ParseConfig(text, "/etc/oci-rlimit/config.d/50-deep.toml");
    ASSERT_FALSE(cfg.ok());
    EXPECT_TRUE(cfg.error().Text().starts_with(
        "config \"/etc/oci-rlimit/config.d/50-deep.toml\": line 1, column "))
        << cfg.error().Text();
    EXPECT_NE(cfg.error().Text().find("the limit is 100"), std::string::npos);
    EXPECT_EQ(cfg.error().Text().find('\n'), std::string::npos);
  }
}

// What the guard accepts, toml++ parses without crashing: the deepest
// accepted shapes, parsed for real.
TEST(TomlGuard, TheDeepestAcceptedTextsParse) {
  for (const std::string& text : {Dotted(100) + " = 1\n", "[" + Dotted(100) + "]\n",
                                  "[" + Dotted(60) + "]\n" + Dotted(40) + "=1\n",
                                  "x = " + Repeat("[", 99) + Repeat("]", 99) + "\n"}) {
    ASSERT_TRUE(CheckTomlSafeText(text).ok());
    auto cfg = ParseConfig(text, "c.toml");
    // Unknown keys are the config's error, not a crash.
    ASSERT_FALSE(cfg.ok());
    EXPECT_EQ(cfg.error().Text().find("line 1, column"), std::string::npos) << cfg.error().Text();
  }
}

TEST(TomlGuard, SyntaxErrorsStayOnOneLine) {
  auto cfg = ParseConfig("lock=t\n\n\nX", "c.toml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.error().Text().find('\n'), std::string::npos) << cfg.error().Text();
}

}  // namespace
}  // namespace ocirlimit
