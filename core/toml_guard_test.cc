#include "core/toml_guard.h"

#include <gtest/gtest.h>

#include "core/config.h"

namespace ocirlimit {
namespace {

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
        GuardCase{"stray_continuation", "\x80", "line 1, column 1: not valid UTF-8"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(TomlGuard, ParseConfigReportsItWithTheFile) {
  auto cfg = ParseConfig("rlimits \xc2\xa1= []\n", "/etc/oci-rlimit/config.toml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.error().Text(),
            "config \"/etc/oci-rlimit/config.toml\": line 1, column 9: character U+00A1 is not "
            "accepted (the TOML library mishandles it); use ASCII");
}

TEST(TomlGuard, SyntaxErrorsStayOnOneLine) {
  auto cfg = ParseConfig("lock=t\n\n\nX", "c.toml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.error().Text().find('\n'), std::string::npos) << cfg.error().Text();
}

}  // namespace
}  // namespace ocirlimit
