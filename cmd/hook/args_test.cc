#include "hook/args.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include "tests/testing/case_name.h"
#include "tests/testing/flag_forms.h"

namespace ocirlimit {
namespace {

struct ArgsCase {
  const char* name;
  std::vector<std::string> args;
  HookMode mode;
  std::optional<std::string> config;
  std::string stage;
};

class ParseHookArgsGood : public ::testing::TestWithParam<ArgsCase> {};

TEST_P(ParseHookArgsGood, Parses) {
  const ArgsCase& c = GetParam();
  auto a = ParseHookArgs(c.args);
  ASSERT_TRUE(a.ok()) << a.error().Text();
  EXPECT_EQ(a->mode, c.mode);
  EXPECT_EQ(a->config, c.config);
  EXPECT_EQ(a->stage, c.stage);
}

INSTANTIATE_TEST_SUITE_P(
    Hook, ParseHookArgsGood,
    ::testing::Values(
        ArgsCase{"NoArgs", {}, HookMode::kApply, std::nullopt, ""},
        ArgsCase{"Prestart", {"prestart"}, HookMode::kApply, std::nullopt, "prestart"},
        ArgsCase{
            "CreateRuntime", {"createRuntime"}, HookMode::kApply, std::nullopt, "createRuntime"},
        ArgsCase{"Precreate", {"precreate"}, HookMode::kPrecreate, std::nullopt, "precreate"},
        ArgsCase{"ConfigSeparate", {"--config", "/c.toml"}, HookMode::kApply, "/c.toml", ""},
        ArgsCase{"ConfigJoined", {"--config=/c.toml"}, HookMode::kApply, "/c.toml", ""},
        ArgsCase{"ConfigThenStage",
                 {"--config", "/c.toml", "createRuntime"},
                 HookMode::kApply,
                 "/c.toml",
                 "createRuntime"},
        ArgsCase{"StageThenConfig",
                 {"prestart", "--config=/c.toml"},
                 HookMode::kApply,
                 "/c.toml",
                 "prestart"},
        ArgsCase{"ConfigValueLooksLikeAStage",
                 {"--config", "prestart"},
                 HookMode::kApply,
                 "prestart",
                 ""},
        ArgsCase{"Help", {"--help"}, HookMode::kHelp, std::nullopt, ""},
        ArgsCase{"ShortHelp", {"-h"}, HookMode::kHelp, std::nullopt, ""},
        ArgsCase{
            "HelpAfterStage", {"prestart", "--help"}, HookMode::kHelp, std::nullopt, "prestart"},
        ArgsCase{"Version", {"--version"}, HookMode::kVersion, std::nullopt, ""}),
    [](const ::testing::TestParamInfo<ArgsCase>& info) { return std::string(info.param.name); });

struct BadArgsCase {
  const char* name;
  std::vector<std::string> args;
  const char* message;
};

class ParseHookArgsBad : public ::testing::TestWithParam<BadArgsCase> {};

TEST_P(ParseHookArgsBad, SaysWhy) {
  const BadArgsCase& c = GetParam();
  auto a = ParseHookArgs(c.args);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().Text(), c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Hook, ParseHookArgsBad,
    ::testing::Values(
        BadArgsCase{"ConfigWithoutValue", {"--config"}, "--config: missing PATH"},
        BadArgsCase{"ConfigEqualsEmpty", {"--config="}, "--config: empty PATH"},
        BadArgsCase{"ConfigEmptySeparate", {"--config", ""}, "--config: empty PATH"},
        BadArgsCase{"UnknownFlag", {"--verbose"}, "unknown flag \"--verbose\""},
        BadArgsCase{"SingleDash", {"-"}, "unknown flag \"-\""},
        BadArgsCase{"Poststop",
                    {"poststop"},
                    "stage \"poststop\" is not supported: use createRuntime or prestart (or "
                    "precreate for podman)"},
        BadArgsCase{"CreateContainer",
                    {"createContainer"},
                    "stage \"createContainer\" is not supported: use createRuntime or prestart "
                    "(or precreate for podman)"},
        BadArgsCase{"TwoStages",
                    {"prestart", "createRuntime"},
                    "unexpected argument \"createRuntime\" after stage \"prestart\""}),
    [](const ::testing::TestParamInfo<BadArgsCase>& info) { return std::string(info.param.name); });

// Every flag of kHookFlags, both ways (tests/testing/flag_forms.h). A flag
// added to the table without a sample here fails.
const FlagSample kHookSamples[] = {
    {.flag = "--config", .value = "/c.toml", .rest = {"prestart"}},
};

class HookFlagForms : public ::testing::TestWithParam<FlagFormCase> {};

TEST_P(HookFlagForms, BothFormsReadTheSame) {
  ExpectFlagForms(GetParam(),
                  [](const std::vector<std::string>& args) { return ParseHookArgs(args); });
}

INSTANTIATE_TEST_SUITE_P(Hook, HookFlagForms,
                         ::testing::ValuesIn(FlagFormCases(kHookFlags, kHookSamples)), CaseName{});

}  // namespace
}  // namespace ocirlimit
