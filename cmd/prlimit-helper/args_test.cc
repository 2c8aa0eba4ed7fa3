#include "prlimit-helper/args.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include "tests/testing/case_name.h"
#include "tests/testing/flag_forms.h"

namespace ocirlimit {
namespace {

struct GoodCase {
  const char* name;
  std::vector<std::string> args;
  HelperMode mode;
  TargetSource source;
  pid_t pid;
  std::vector<Rlimit> limits;
  bool json;
  bool debug_caps;
};

class HelperArgsGood : public ::testing::TestWithParam<GoodCase> {};

TEST_P(HelperArgsGood, Parses) {
  const GoodCase& c = GetParam();
  auto a = ParseHelperArgs(c.args);
  ASSERT_TRUE(a.ok()) << a.error().Text();
  EXPECT_EQ(a->mode, c.mode);
  EXPECT_EQ(a->source, c.source);
  EXPECT_EQ(a->pid, c.pid);
  EXPECT_EQ(a->limits, c.limits);
  EXPECT_EQ(a->json, c.json);
  EXPECT_EQ(a->debug_caps, c.debug_caps);
  EXPECT_FALSE(a->test_pause_fifo.has_value());
}

constexpr uint64_t kInf = kRlimInfinity;
const Rlimit kMemlock1M4M{RLIMIT_MEMLOCK, 1 << 20, 4 << 20};
const Rlimit kMemlockInf{RLIMIT_MEMLOCK, kInf, kInf};
const Rlimit kNofile{RLIMIT_NOFILE, 1024, 4096};

INSTANTIATE_TEST_SUITE_P(
    Argv, HelperArgsGood,
    ::testing::Values(GoodCase{"PidOneLimit",
                               {"--pid", "42", "memlock=1M:4M"},
                               HelperMode::kApply,
                               TargetSource::kPid,
                               42,
                               {kMemlock1M4M},
                               false,
                               false},
                      GoodCase{"PidEquals",
                               {"--pid=42", "memlock=unlimited"},
                               HelperMode::kApply,
                               TargetSource::kPid,
                               42,
                               {kMemlockInf},
                               false,
                               false},
                      GoodCase{"FlagsAfterLimits",
                               {"memlock=1M:4M", "nofile=1024:4096", "--pid", "7", "--json"},
                               HelperMode::kApply,
                               TargetSource::kPid,
                               7,
                               {kMemlock1M4M, kNofile},
                               true,
                               false},
                      GoodCase{"StateHooksD",
                               {"--state", "memlock=unlimited"},
                               HelperMode::kApply,
                               TargetSource::kState,
                               0,
                               {kMemlockInf},
                               false,
                               false},
                      GoodCase{"StateTrailingCreateRuntime",
                               {"--state", "memlock=unlimited", "createRuntime"},
                               HelperMode::kApply,
                               TargetSource::kState,
                               0,
                               {kMemlockInf},
                               false,
                               false},
                      GoodCase{"StateTrailingPrestart",
                               {"--state", "memlock=1M:4M", "prestart"},
                               HelperMode::kApply,
                               TargetSource::kState,
                               0,
                               {kMemlock1M4M},
                               false,
                               false},
                      GoodCase{"GetPid",
                               {"--get", "--pid", "99"},
                               HelperMode::kGet,
                               TargetSource::kPid,
                               99,
                               {},
                               false,
                               false},
                      GoodCase{"GetStateJson",
                               {"--state", "--get", "--json"},
                               HelperMode::kGet,
                               TargetSource::kState,
                               0,
                               {},
                               true,
                               false},
                      GoodCase{"DebugCapsAlone",
                               {"--debug-caps"},
                               HelperMode::kDebugCaps,
                               TargetSource::kNone,
                               0,
                               {},
                               false,
                               true},
                      GoodCase{"DebugCapsWithApply",
                               {"--debug-caps", "--pid", "5", "memlock=unlimited"},
                               HelperMode::kApply,
                               TargetSource::kPid,
                               5,
                               {kMemlockInf},
                               false,
                               true},
                      // Refused later by CheckTarget, with a message about pid 0 or 1.
                      GoodCase{"PidZeroParses",
                               {"--pid", "0", "memlock=1M:4M"},
                               HelperMode::kApply,
                               TargetSource::kPid,
                               0,
                               {kMemlock1M4M},
                               false,
                               false},
                      GoodCase{"HelpFirst",
                               {"--help", "--pid", "x"},
                               HelperMode::kHelp,
                               TargetSource::kNone,
                               0,
                               {},
                               false,
                               false},
                      GoodCase{"Version",
                               {"--version"},
                               HelperMode::kVersion,
                               TargetSource::kNone,
                               0,
                               {},
                               false,
                               false}),
    [](const auto& info) { return std::string(info.param.name); });

struct BadCase {
  const char* name;
  std::vector<std::string> args;
  const char* message_part;
};

class HelperArgsBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(HelperArgsBad, Refuses) {
  const BadCase& c = GetParam();
  auto a = ParseHelperArgs(c.args);
  ASSERT_FALSE(a.ok()) << c.name;
  EXPECT_NE(a.error().Text().find(c.message_part), std::string::npos) << a.error().Text();
  EXPECT_EQ(a.error().Text().find('\n'), std::string::npos) << "one line";
}

INSTANTIATE_TEST_SUITE_P(
    Argv, HelperArgsBad,
    ::testing::Values(
        BadCase{"Nothing", {}, "no target: give --pid PID, or --state"},
        BadCase{"NoTarget", {"memlock=1M"}, "no target"},
        BadCase{"NoLimits", {"--pid", "42"}, "no limits: give at least one NAME=SOFT[:HARD]"},
        BadCase{"PidMissing", {"memlock=1M", "--pid"}, "--pid: missing PID"},
        BadCase{
            "PidNotNumber", {"--pid", "abc", "memlock=1M"}, "--pid: \"abc\" is not a process id"},
        BadCase{"PidNegative", {"--pid=-5", "memlock=1M"}, "--pid: \"-5\" is not a process id"},
        BadCase{"PidEmpty", {"--pid=", "memlock=1M"}, "--pid: empty PID"},
        BadCase{"PidOverflow",
                {"--pid", "4294967296", "memlock=1M"},
                "--pid: \"4294967296\" is not a process id"},
        BadCase{"PidTwice",
                {"--pid", "4", "--pid", "5", "memlock=1M"},
                "--pid: the target is already given"},
        BadCase{"PidAndState",
                {"--pid", "4", "--state", "memlock=1M"},
                "--state: the target is already given"},
        BadCase{"UnknownFlag", {"--pid", "4", "--force", "memlock=1M"}, "unknown flag \"--force\""},
        BadCase{"BadName", {"--pid", "4", "memlok=1M"}, "unknown name \"memlok\""},
        BadCase{"BadValue", {"--pid", "4", "memlock=lots"}, "rlimit \"memlock=lots\": soft value"},
        BadCase{"SoftOverHard", {"--pid", "4", "memlock=4M:1M"}, "is greater than hard"},
        BadCase{"Twice", {"--pid", "4", "memlock=1M", "memlock=2M"}, "memlock is given twice"},
        BadCase{"GetWithLimits",
                {"--get", "--pid", "4", "memlock=1M"},
                "--get takes no limits, but got \"memlock=1M\""},
        BadCase{"StageWithPid",
                {"--pid", "4", "memlock=1M", "createRuntime"},
                "stage \"createRuntime\" only makes sense with --state"},
        BadCase{"LateStage",
                {"--state", "memlock=1M", "poststart"},
                "stage \"poststart\" is not supported"},
        BadCase{"ContainerStage",
                {"--state", "memlock=1M", "createContainer"},
                "stage \"createContainer\" is not supported"},
        BadCase{"ArgAfterStage",
                {"--state", "createRuntime", "memlock=1M"},
                "unexpected argument \"memlock=1M\" after stage \"createRuntime\""},
        BadCase{"PauseUnknownOutsideTheTestBuild",
                {"--pid", "4", "memlock=1M", "--test-only-pause-after-pidfd", "/tmp/f"},
                "unknown flag \"--test-only-pause-after-pidfd\""},
        BadCase{"PauseWithValueUnknownOutsideTheTestBuild",
                {"--pid", "4", "memlock=1M", "--test-only-pause-after-pidfd=/tmp/f"},
                "unknown flag \"--test-only-pause-after-pidfd=/tmp/f\""}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(HelperArgs, TestPauseFifoIsKeptInTheTestBuild) {
  auto a = ParseHelperArgs({"--pid", "4", "memlock=1M", kTestPauseFlag, "/tmp/f"}, true);
  ASSERT_TRUE(a.ok()) << a.error().Text();
  EXPECT_EQ(a->test_pause_fifo, "/tmp/f");
  auto empty =
      ParseHelperArgs({"--pid", "4", "memlock=1M", "--test-only-pause-after-pidfd="}, true);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().Text(), "--test-only-pause-after-pidfd: empty FIFO path");
  auto missing = ParseHelperArgs({"--pid", "4", "memlock=1M", kTestPauseFlag}, true);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().Text(), "--test-only-pause-after-pidfd: missing FIFO path");
}

// Every flag of kHelperFlags, both ways (tests/testing/flag_forms.h), read
// as the test build reads them (its pause flag included). A flag added to
// the table without a sample here fails; a switch without one is read alone.
const FlagSample kHelperSamples[] = {
    {.flag = "--pid", .value = "42", .rest = {"memlock=1"}},
    {.flag = "--state", .rest = {"memlock=1"}},
    {.flag = "--get", .rest = {"--pid", "1"}},
    {.flag = "--json", .rest = {"--pid", "1", "memlock=1"}},
    {.flag = kTestPauseFlag, .value = "/run/pause.fifo", .rest = {"--pid", "1", "memlock=1"}},
};

class HelperFlagForms : public ::testing::TestWithParam<FlagFormCase> {};

TEST_P(HelperFlagForms, BothFormsReadTheSame) {
  ExpectFlagForms(GetParam(),
                  [](const std::vector<std::string>& args) { return ParseHelperArgs(args, true); });
}

INSTANTIATE_TEST_SUITE_P(Argv, HelperFlagForms,
                         ::testing::ValuesIn(FlagFormCases(kHelperFlags, kHelperSamples)),
                         CaseName{});

}  // namespace
}  // namespace ocirlimit
