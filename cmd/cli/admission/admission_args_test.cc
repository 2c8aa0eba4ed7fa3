#include "cli/admission/admission_args.h"

#include <gtest/gtest.h>

namespace ocirlimit::cli {
namespace {

TEST(AdmissionArgs, ReadsEveryFlag) {
  auto a = ParseAdmissionArgs({"--config", "c.toml", "--actions=Warn", "--namespace-selector",
                               "team=ml", "--object-selector", "!skip", "--ulimits-field", "--name",
                               "n", "--output", "o.yaml"});
  ASSERT_TRUE(a.ok()) << a.error().Text();
  EXPECT_EQ(a->config, "c.toml");
  EXPECT_EQ(a->output, "o.yaml");
  EXPECT_EQ(a->policy.name, "n");
  EXPECT_TRUE(a->policy.ulimits_field);
  EXPECT_EQ(a->policy.actions, std::vector<std::string>{"Warn"});
  ASSERT_EQ(a->policy.namespace_selector.size(), 1U);
  EXPECT_EQ(a->policy.namespace_selector[0].key, "team");
  ASSERT_EQ(a->policy.object_selector.size(), 1U);
  EXPECT_EQ(a->policy.object_selector[0].op, "DoesNotExist");
}

TEST(AdmissionArgs, DefaultsToDenyAndStdout) {
  auto a = ParseAdmissionArgs({});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->policy.actions, std::vector<std::string>{"Deny"});
  EXPECT_TRUE(a->output.empty());
  EXPECT_FALSE(a->config.has_value());
}

TEST(AdmissionArgs, OneLineForBadInput) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--actions", "Deny,Warn"}, "--actions \"Deny,Warn\": Deny and Warn together"},
      {{"--namespace-selector", "a b"}, "--namespace-selector \"a b\": the key"},
      {{"--bundle", "x"}, "unknown flag \"--bundle\""},
      {{"extra"}, "unexpected argument \"extra\""},
      {{"--name"}, "--name: missing NAME"},
  };
  for (const auto& [args, want] : bad) {
    auto a = ParseAdmissionArgs(args);
    ASSERT_FALSE(a.ok()) << args[0];
    EXPECT_EQ(a.error().Text().rfind(want, 0), 0U) << a.error().Text();
    EXPECT_EQ(a.error().Text().find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace ocirlimit::cli
