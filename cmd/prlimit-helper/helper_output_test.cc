#include "prlimit-helper/helper_output.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

constexpr uint64_t kInf = kRlimInfinity;
const Rlimit kMemlock{RLIMIT_MEMLOCK, 1 << 20, 4 << 20};
const Rlimit kNofile{RLIMIT_NOFILE, 1024, 1 << 20};
const Change kMemlockDone{RLIMIT_MEMLOCK, {8 << 20, 8 << 20}, {1 << 20, 4 << 20}};

ApplyOutcome Outcome(std::vector<Change> applied, ApplyFailure failure, const char* msg = "boom",
                     int err = 0) {
  ApplyOutcome o;
  o.applied = std::move(applied);
  o.failure = failure;
  if (failure != ApplyFailure::kNone) o.error = MakeError(msg, err);
  return o;
}

struct ExitCase {
  const char* name;
  ApplyOutcome outcome;
  int code;
};

class ExitCodes : public ::testing::TestWithParam<ExitCase> {};

TEST_P(ExitCodes, Maps) { EXPECT_EQ(HelperExitCode(GetParam().outcome), GetParam().code); }

INSTANTIATE_TEST_SUITE_P(
    Outcomes, ExitCodes,
    ::testing::Values(
        ExitCase{"Ok", Outcome({kMemlockDone}, ApplyFailure::kNone), 0},
        ExitCase{"InvalidTarget", Outcome({}, ApplyFailure::kInvalidTarget), 2},
        ExitCase{"Gone", Outcome({}, ApplyFailure::kTargetGone), 3},
        ExitCase{"GoneAfterSome", Outcome({kMemlockDone}, ApplyFailure::kTargetGone), 3},
        ExitCase{"Permission", Outcome({}, ApplyFailure::kPermission), 4},
        ExitCase{"PartialPermission", Outcome({kMemlockDone}, ApplyFailure::kPermission), 5},
        ExitCase{"PartialOther", Outcome({kMemlockDone}, ApplyFailure::kOther), 5},
        ExitCase{"Other", Outcome({}, ApplyFailure::kOther), 1}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(HelperUsage, DocumentsEveryExitCode) {
  const std::string usage = kHelperUsage;
  for (const char* line : {"  0  every limit applied", "  1  failure", "  2  usage",
                           "  3  target gone", "  4  permission", "  5  partial apply"}) {
    EXPECT_NE(usage.find(line), std::string::npos) << line;
  }
  EXPECT_EQ(usage.find("test-only"), std::string::npos) << "the test flag stays hidden";
}

TEST(ApplyFailureMessage, NothingApplied) {
  auto o = Outcome({}, ApplyFailure::kPermission, "pid 9: memlock: needs CAP_SYS_RESOURCE");
  EXPECT_EQ(ApplyFailureMessage(o, {kMemlock}),
            "pid 9: memlock: needs CAP_SYS_RESOURCE (nothing was applied)");
}

TEST(ApplyFailureMessage, PartialNamesAppliedAndNot) {
  auto o =
      Outcome({kMemlockDone}, ApplyFailure::kPermission, "pid 9: nofile to 1024:1048576", EPERM);
  EXPECT_EQ(ApplyFailureMessage(o, {kMemlock, kNofile}),
            "pid 9: nofile to 1024:1048576: Operation not permitted (partial apply: applied "
            "before the failure: memlock 8388608:8388608->1048576:4194304; not applied: nofile)");
}

TEST(ApplyJson, SuccessHasBeforeAndAfter) {
  auto o =
      Outcome({kMemlockDone, {RLIMIT_NOFILE, {1024, 4096}, {kInf, kInf}}}, ApplyFailure::kNone);
  auto j = nlohmann::json::parse(ApplyJson(42, {kMemlock, kNofile}, o));
  EXPECT_EQ(j["pid"], 42);
  EXPECT_EQ(j["ok"], true);
  ASSERT_EQ(j["changes"].size(), 2U);
  EXPECT_EQ(j["changes"][0]["name"], "memlock");
  EXPECT_EQ(j["changes"][0]["before"]["soft"], 8 << 20);
  EXPECT_EQ(j["changes"][0]["before"]["hard"], 8 << 20);
  EXPECT_EQ(j["changes"][0]["after"]["soft"], 1 << 20);
  EXPECT_EQ(j["changes"][0]["after"]["hard"], 4 << 20);
  EXPECT_EQ(j["changes"][1]["name"], "nofile");
  EXPECT_EQ(j["changes"][1]["after"]["hard"], "unlimited");
  EXPECT_TRUE(j["not_applied"].empty());
  EXPECT_FALSE(j.contains("error"));
}

TEST(ApplyJson, PartialHasErrorAndExitCode) {
  auto o = Outcome({kMemlockDone}, ApplyFailure::kPermission, "pid 9: nofile", EPERM);
  auto j = nlohmann::json::parse(ApplyJson(9, {kMemlock, kNofile}, o));
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["changes"].size(), 1U);
  EXPECT_EQ(j["not_applied"], nlohmann::json::array({"nofile"}));
  EXPECT_EQ(j["error"], "pid 9: nofile: Operation not permitted");
  EXPECT_EQ(j["exit_code"], 5);
}

TEST(ApplyJson, OneLine) {
  auto o = Outcome({}, ApplyFailure::kOther, "weird \"id\"\nnext");
  std::string s = ApplyJson(9, {kMemlock}, o);
  EXPECT_EQ(s.find('\n'), s.size() - 1) << s;
}

TEST(LimitsText, RlimitLanguageLines) {
  EXPECT_EQ(LimitsText({kMemlock, {RLIMIT_CORE, 0, kInf}}),
            "memlock=1048576:4194304\ncore=0:unlimited\n");
}

TEST(LimitsJson, ObjectByName) {
  auto j = nlohmann::json::parse(LimitsJson(7, {kMemlock, {RLIMIT_CORE, 0, kInf}}));
  EXPECT_EQ(j["pid"], 7);
  EXPECT_EQ(j["limits"]["memlock"]["soft"], 1 << 20);
  EXPECT_EQ(j["limits"]["memlock"]["hard"], 4 << 20);
  EXPECT_EQ(j["limits"]["core"]["soft"], 0);
  EXPECT_EQ(j["limits"]["core"]["hard"], "unlimited");
}

struct CapCase {
  const char* name;
  const char* status;
  const char* lines;
};

class CapabilityLinesTable : public ::testing::TestWithParam<CapCase> {};

TEST_P(CapabilityLinesTable, Filters) {
  EXPECT_EQ(CapabilityLines(GetParam().status), GetParam().lines);
}

INSTANTIATE_TEST_SUITE_P(
    Status, CapabilityLinesTable,
    ::testing::Values(
        CapCase{"Typical",
                "Name:\tx\nUid:\t0\t0\t0\t0\nCapInh:\t0000000000000000\nCapPrm:\t0000000001000000\n"
                "CapEff:\t0000000001000000\nCapBnd:\t0000000001000000\nCapAmb:\t0000000000000000\n"
                "NoNewPrivs:\t1\nSeccomp:\t0\n",
                "CapInh:\t0000000000000000\nCapPrm:\t0000000001000000\nCapEff:\t0000000001000000\n"
                "CapBnd:\t0000000001000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\n"},
        CapCase{"NoTrailingNewline", "Name:\tx\nNoNewPrivs:\t0", "NoNewPrivs:\t0\n"},
        CapCase{"None", "Name:\tx\nPid:\t3\n", ""}, CapCase{"Empty", "", ""}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ocirlimit
