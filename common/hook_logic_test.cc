#include "hook_logic.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

constexpr uint64_t kInf = kRlimInfinity;

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

TEST(ConflictWarnings, OnePerConflictNamingBothValuesAndTheFallback) {
  std::vector<Conflict> conflicts = {
      {{RLIMIT_NOFILE, 65536, 65536}, {RLIMIT_NOFILE, 1024, 1024}},
      {{RLIMIT_MEMLOCK, kInf, kInf}, {RLIMIT_MEMLOCK, 65536, kInf}},
  };
  auto w = ConflictWarnings(conflicts);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0],
            "spec process.rlimits sets RLIMIT_NOFILE to 1024:1024; runc re-applies it after "
            "hooks, so under runc the spec's value wins over nofile=65536:65536 (crun keeps the "
            "hook's value); use oci-rlimit-runtime (runtime mode) to replace the spec entry");
  EXPECT_NE(w[1].find("sets RLIMIT_MEMLOCK to 65536:unlimited"), std::string::npos) << w[1];
  EXPECT_NE(w[1].find("wins over memlock=unlimited:unlimited"), std::string::npos) << w[1];
  EXPECT_TRUE(ConflictWarnings({}).empty());
}

TEST(FormatLogLine, ListsIdPidAndEachChange) {
  std::vector<Change> changes = {
      {RLIMIT_MEMLOCK, {8388608, 8388608}, {kInf, kInf}},
      {RLIMIT_NOFILE, {1024, 1024}, {4096, 4096}},
  };
  EXPECT_EQ(
      FormatLogLine("2024-05-01T10:00:00Z", "web-1", 4242, changes, {}, ""),
      "2024-05-01T10:00:00Z id=\"web-1\" pid=4242 memlock 8388608:8388608->unlimited:unlimited"
      " nofile 1024:1024->4096:4096");
}

TEST(FormatLogLine, UnchangedWithWarningsAndError) {
  EXPECT_EQ(FormatLogLine("T", "a", 7, {}, {"w1", "w2"}, "boom"),
            "T id=\"a\" pid=7 unchanged warning=\"w1\" warning=\"w2\" error=\"boom\"");
}

struct HostileId {
  const char* name;
  std::string id;
  const char* quoted;
};

class FormatLogLineHostile : public ::testing::TestWithParam<HostileId> {};

TEST_P(FormatLogLineHostile, StaysOneLine) {
  const HostileId& c = GetParam();
  std::vector<Change> changes = {{RLIMIT_MEMLOCK, {1, 1}, {2, 2}}};
  std::string line = FormatLogLine("T", c.id, 4242, changes, {"spec says\nno"}, "bad\r\nthing");
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_EQ(line.find('\r'), std::string::npos) << line;
  EXPECT_NE(line.find(std::string("id=") + c.quoted + " pid=4242 memlock 1:1->2:2"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("warning=\"spec says\\nno\""), std::string::npos) << line;
  EXPECT_NE(line.find("error=\"bad\\r\\nthing\""), std::string::npos) << line;
}

INSTANTIATE_TEST_SUITE_P(
    Hook, FormatLogLineHostile,
    ::testing::Values(HostileId{"Newline", "evil\nT id=\"x\" pid=1", R"("evil\nT id=\"x\" pid=1")"},
                      HostileId{"Quote", "a\"b", R"("a\"b")"},
                      HostileId{"Backslash", "a\\b", R"("a\\b")"},
                      HostileId{"InvalidUtf8", "a\xff", "\"a\xEF\xBF\xBD\""}),
    [](const ::testing::TestParamInfo<HostileId>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ocirlimit
