#include "effects/apply.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cerrno>
#include <map>

#include "tests/testing/case_name.h"
#include "tests/testing/fake_process_ops.h"

namespace ocirlimit {
namespace {

constexpr uint64_t kInf = kRlimInfinity;

using FakeOps = testsupport::FakeProcessOps;

const std::vector<Rlimit> kThree = {
    {RLIMIT_MEMLOCK, 1 << 20, 4 << 20}, {RLIMIT_NOFILE, 4096, 4096}, {RLIMIT_CORE, 0, 0}};

TEST(ApplyRlimits, SetsEachLimitAndRecordsBeforeAndAfter) {
  FakeOps ops;
  ApplyOutcome out = ApplyRlimits(ops, 4242, kThree);
  ASSERT_TRUE(out.ok()) << out.error->Text();
  EXPECT_EQ(out.failure, ApplyFailure::kNone);
  EXPECT_EQ(ops.opened_pid, 4242);
  ASSERT_EQ(out.applied.size(), 3u);
  EXPECT_EQ(out.applied[0].resource, RLIMIT_MEMLOCK);
  EXPECT_EQ(out.applied[0].before, (LimitPair{8 << 20, 8 << 20}));
  EXPECT_EQ(out.applied[0].after, (LimitPair{1 << 20, 4 << 20}));
  EXPECT_EQ(out.applied[1].resource, RLIMIT_NOFILE);
  EXPECT_EQ(out.applied[1].before, (LimitPair{1024, 4096}));
  EXPECT_EQ(out.applied[1].after, (LimitPair{4096, 4096}));
  EXPECT_EQ(out.applied[2].resource, RLIMIT_CORE);
  EXPECT_EQ(out.applied[2].before, (LimitPair{0, kInf}));
  EXPECT_EQ(out.applied[2].after, (LimitPair{0, 0}));
  EXPECT_EQ(ops.limits[RLIMIT_NOFILE], (LimitPair{4096, 4096}));
  // Alive before each prlimit and once after the last.
  EXPECT_EQ(ops.checks, 4);
  EXPECT_EQ(ops.closes, 1);
  EXPECT_EQ(ops.open_fds, 0);
}

TEST(ApplyRlimits, NothingToApplyStillChecksTheTarget) {
  FakeOps ops;
  ApplyOutcome out = ApplyRlimits(ops, 4242, {});
  ASSERT_TRUE(out.ok()) << out.error->Text();
  EXPECT_TRUE(out.applied.empty());
  EXPECT_TRUE(ops.set_calls.empty());
  EXPECT_EQ(ops.closes, 1);
}

struct FailCase {
  const char* name;
  pid_t pid;
  // Script for the fake.
  int open_err;
  int alive_checks;
  int alive_err;
  std::map<int, int> set_errs;
  bool has_cap;
  // Expected.
  ApplyFailure failure;
  std::vector<int> applied;    // resources, in order
  std::vector<int> set_calls;  // resources, in order
  const char* message_part;
};

class ApplyRlimitsFails : public ::testing::TestWithParam<FailCase> {};

TEST_P(ApplyRlimitsFails, StopsAndReportsWhatWasDone) {
  const FailCase& c = GetParam();
  FakeOps ops;
  ops.open_err = c.open_err;
  ops.alive_checks = c.alive_checks;
  ops.alive_err = c.alive_err;
  ops.set_errs = c.set_errs;
  ops.has_cap = c.has_cap;
  // memlock is a hard-limit raise from 8M to unlimited; the rest lower.
  const std::vector<Rlimit> limits = {
      {RLIMIT_NOFILE, 512, 512}, {RLIMIT_MEMLOCK, kInf, kInf}, {RLIMIT_CORE, 0, 0}};

  ApplyOutcome out = ApplyRlimits(ops, c.pid, limits);

  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.failure, c.failure);
  const std::string text = out.error->Text();
  EXPECT_NE(text.find(c.message_part), std::string::npos) << text;
  EXPECT_EQ(text.rfind("pid " + std::to_string(c.pid) + ": ", 0), 0u) << text;
  std::vector<int> applied;
  for (const auto& ch : out.applied) applied.push_back(ch.resource);
  EXPECT_EQ(applied, c.applied);
  EXPECT_EQ(ops.set_calls, c.set_calls);
  EXPECT_EQ(ops.open_fds, 0) << "the pidfd must be closed on every path";
}

INSTANTIATE_TEST_SUITE_P(
    Apply, ApplyRlimitsFails,
    ::testing::Values(
        FailCase{"PidZero",
                 0,
                 0,
                 1000,
                 ESRCH,
                 {},
                 false,
                 ApplyFailure::kInvalidTarget,
                 {},
                 {},
                 "refusing to touch pid 0 or 1"},
        FailCase{"PidOne",
                 1,
                 0,
                 1000,
                 ESRCH,
                 {},
                 false,
                 ApplyFailure::kInvalidTarget,
                 {},
                 {},
                 "refusing to touch pid 0 or 1"},
        FailCase{"NegativePid",
                 -5,
                 0,
                 1000,
                 ESRCH,
                 {},
                 false,
                 ApplyFailure::kInvalidTarget,
                 {},
                 {},
                 "refusing"},
        FailCase{"NoSuchProcess",
                 4242,
                 ESRCH,
                 1000,
                 ESRCH,
                 {},
                 false,
                 ApplyFailure::kTargetGone,
                 {},
                 {},
                 "no such process"},
        FailCase{"PidfdOpenDenied",
                 4242,
                 EPERM,
                 1000,
                 ESRCH,
                 {},
                 false,
                 ApplyFailure::kPermission,
                 {},
                 {},
                 "pidfd_open"},
        FailCase{"PidfdOpenOther",
                 4242,
                 EMFILE,
                 1000,
                 ESRCH,
                 {},
                 false,
                 ApplyFailure::kOther,
                 {},
                 {},
                 "Too many open files"},
        FailCase{"GoneBeforeTheFirst",
                 4242,
                 0,
                 0,
                 ESRCH,
                 {},
                 false,
                 ApplyFailure::kTargetGone,
                 {},
                 {},
                 "exited"},
        FailCase{"GoneBetweenLimits",
                 4242,
                 0,
                 1,
                 ESRCH,
                 {},
                 false,
                 ApplyFailure::kTargetGone,
                 {RLIMIT_NOFILE},
                 {RLIMIT_NOFILE},
                 "exited"},
        FailCase{"GoneAfterTheLast",
                 4242,
                 0,
                 3,
                 ESRCH,
                 {},
                 false,
                 ApplyFailure::kTargetGone,
                 {RLIMIT_NOFILE, RLIMIT_MEMLOCK, RLIMIT_CORE},
                 {RLIMIT_NOFILE, RLIMIT_MEMLOCK, RLIMIT_CORE},
                 "exited"},
        // Only ESRCH means exited; another error must not be reported as one.
        FailCase{"AliveCheckFailsOtherwise",
                 4242,
                 0,
                 1,
                 EBADF,
                 {},
                 false,
                 ApplyFailure::kOther,
                 {RLIMIT_NOFILE},
                 {RLIMIT_NOFILE},
                 "cannot check that the process is alive: pidfd_send_signal: Bad file descriptor"},
        FailCase{"ExitedDuringPrlimit",
                 4242,
                 0,
                 1000,
                 ESRCH,
                 {{RLIMIT_MEMLOCK, ESRCH}},
                 false,
                 ApplyFailure::kTargetGone,
                 {RLIMIT_NOFILE},
                 {RLIMIT_NOFILE, RLIMIT_MEMLOCK},
                 "memlock"},
        FailCase{"HardRaiseWithoutCap",
                 4242,
                 0,
                 1000,
                 ESRCH,
                 {{RLIMIT_MEMLOCK, EPERM}},
                 false,
                 ApplyFailure::kPermission,
                 {RLIMIT_NOFILE},
                 {RLIMIT_NOFILE, RLIMIT_MEMLOCK},
                 "pid 4242: config entry memlock=unlimited: the hard limit in force is 8M, and "
                 "raising it needs CAP_SYS_RESOURCE, which effects_unit_test does not have; "
                 "memlock=8M would work (or run the container engine with CAP_SYS_RESOURCE)"},
        FailCase{"EpermWithCap",
                 4242,
                 0,
                 1000,
                 ESRCH,
                 {{RLIMIT_MEMLOCK, EPERM}},
                 true,
                 ApplyFailure::kPermission,
                 {RLIMIT_NOFILE},
                 {RLIMIT_NOFILE, RLIMIT_MEMLOCK},
                 "memlock to unlimited:unlimited: prlimit: Operation not permitted"},
        FailCase{"EpermOnALower",
                 4242,
                 0,
                 1000,
                 ESRCH,
                 {{RLIMIT_CORE, EPERM}},
                 false,
                 ApplyFailure::kPermission,
                 {RLIMIT_NOFILE, RLIMIT_MEMLOCK},
                 {RLIMIT_NOFILE, RLIMIT_MEMLOCK, RLIMIT_CORE},
                 "core to 0:0: prlimit"},
        FailCase{"OtherPrlimitError",
                 4242,
                 0,
                 1000,
                 ESRCH,
                 {{RLIMIT_NOFILE, EINVAL}},
                 false,
                 ApplyFailure::kOther,
                 {},
                 {RLIMIT_NOFILE},
                 "Invalid argument"}),
    [](const ::testing::TestParamInfo<FailCase>& info) { return std::string(info.param.name); });

TEST(ApplyRlimits, EpermWithoutCapOnALowerIsNotBlamedOnRootless) {
  FakeOps ops;
  ops.set_errs = {{RLIMIT_CORE, EPERM}};
  ApplyOutcome out = ApplyRlimits(ops, 4242, {{RLIMIT_CORE, 0, 0}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error->Text().find("rootless"), std::string::npos) << out.error->Text();
}

TEST(ApplyRlimits, AHardRaiseOutsideTheInitialUserNamespaceSaysRootless) {
  FakeOps ops;
  ops.initial_userns = false;
  ops.set_errs = {{RLIMIT_MEMLOCK, EPERM}};
  ApplyOutcome out = ApplyRlimits(ops, 4242, {{RLIMIT_MEMLOCK, kInf, kInf}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error->Text().find("(a rootless engine never has it); memlock=8M would work"),
            std::string::npos)
      << out.error->Text();
}

// --- FitForCaller: which limits a rootless caller tries at all ---

TEST(FitForCaller, InTheInitialUserNamespaceChangesNothing) {
  FakeOps ops;
  auto fit = FitForCaller(ops, 4242, {{RLIMIT_MEMLOCK, kInf, kInf}}, Rootless::kDegrade);
  ASSERT_TRUE(fit.ok()) << fit.error().Text();
  EXPECT_EQ(fit->limits, (std::vector<Rlimit>{{RLIMIT_MEMLOCK, kInf, kInf}}));
  EXPECT_EQ(fit->warning, "");
}

TEST(FitForCaller, OutsideItFitsToTheTargetsCurrentLimits) {
  FakeOps ops;
  ops.initial_userns = false;
  ops.opened_pid = 4242;  // GetLimit checks the pid
  ops.limits[RLIMIT_MEMLOCK] = {1 << 20, 8 << 20};
  auto fit = FitForCaller(ops, 4242, {{RLIMIT_MEMLOCK, kInf, kInf}, {RLIMIT_NOFILE, 512, 512}},
                          Rootless::kDegrade);
  ASSERT_TRUE(fit.ok()) << fit.error().Text();
  EXPECT_EQ(fit->limits,
            (std::vector<Rlimit>{{RLIMIT_MEMLOCK, 8 << 20, 8 << 20}, {RLIMIT_NOFILE, 512, 512}}));
  EXPECT_NE(fit->warning.find("memlock unlimited:unlimited -> 8388608:8388608"), std::string::npos)
      << fit->warning;
  EXPECT_TRUE(ops.set_calls.empty()) << "fitting only reads";
}

TEST(FitForCaller, OutsideItWithFailRefuses) {
  FakeOps ops;
  ops.initial_userns = false;
  ops.opened_pid = 4242;
  auto fit = FitForCaller(ops, 4242, {{RLIMIT_MEMLOCK, kInf, kInf}}, Rootless::kFail);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.error().Text().find("rootless = \"fail\""), std::string::npos)
      << fit.error().Text();
}

}  // namespace
}  // namespace ocirlimit
