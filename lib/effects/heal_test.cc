// The pinned look and heal over a fake process: a reused PID, a zombie, a
// kernel thread or a process that exits while it is read is never touched.
#include "effects/heal.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cerrno>
#include <map>
#include <string>
#include <vector>

#include "tests/testing/case_name.h"
#include "tests/testing/fake_process_ops.h"

namespace ocirlimit {
namespace {

constexpr uint64_t kM = uint64_t{1} << 20;

constexpr const char* kLimits =
    "Limit                     Soft Limit           Hard Limit           Units     \n"
    "Max cpu time              unlimited            unlimited            seconds   \n"
    "Max file size             unlimited            unlimited            bytes     \n"
    "Max data size             unlimited            unlimited            bytes     \n"
    "Max stack size            8388608              unlimited            bytes     \n"
    "Max core file size        0                    unlimited            bytes     \n"
    "Max resident set          unlimited            unlimited            bytes     \n"
    "Max processes             127318               127318               processes \n"
    "Max open files            1024                 524288               files     \n"
    "Max locked memory         65536                8388608              bytes     \n"
    "Max address space         unlimited            unlimited            bytes     \n"
    "Max file locks            unlimited            unlimited            locks     \n"
    "Max pending signals       127318               127318               signals   \n"
    "Max msgqueue size         819200               819200               bytes     \n"
    "Max nice priority         0                    0                    \n"
    "Max realtime priority     0                    0                    \n"
    "Max realtime timeout      unlimited            unlimited            us        \n";

std::string Stat(char state, uint64_t flags, uint64_t start) {
  return "4242 (sleep) " + std::string(1, state) + " 1 4242 4242 0 -1 " + std::to_string(flags) +
         " 0 0 0 0 0 0 0 0 20 0 1 0 " + std::to_string(start) + " 0 0\n";
}

// One process: the shared scripted pidfd and prlimit (it "exits" after
// alive_checks liveness checks), memlock at 64K:8M, and its /proc files.
class FakeProcess : public testsupport::FakeProcessOps, public FsOps {
 public:
  FakeProcess() { limits = {{RLIMIT_MEMLOCK, {65536, 8 * kM}}}; }

  Result<std::vector<Entry>> ListDir(const std::string& dir) override {
    return MakeError("list " + dir, ENOENT);
  }
  Result<std::string> ReadFile(const std::string& path, size_t) override {
    if (path == "/proc/4242/stat") return stat;
    if (path == "/proc/4242/limits") return std::string(kLimits);
    return MakeError("open " + path, ENOENT);
  }

  std::string stat = Stat('S', 4194560, 500);
};

TEST(ParseProcLimits, ReadsAllSixteen) {
  auto limits = ParseProcLimits(kLimits);
  ASSERT_TRUE(limits) << limits.error().Text();
  ASSERT_EQ(limits->size(), 16u);
  EXPECT_EQ((*limits)[RLIMIT_MEMLOCK], (Rlimit{RLIMIT_MEMLOCK, 65536, 8 * kM}));
  EXPECT_EQ((*limits)[RLIMIT_NOFILE], (Rlimit{RLIMIT_NOFILE, 1024, 524288}));
  EXPECT_EQ((*limits)[RLIMIT_CPU], (Rlimit{RLIMIT_CPU, kRlimInfinity, kRlimInfinity}));
  EXPECT_EQ((*limits)[RLIMIT_RTPRIO], (Rlimit{RLIMIT_RTPRIO, 0, 0}));
}

struct BadLimits {
  const char* name;
  std::string text;
  const char* error;
};

class ParseProcLimitsBad : public testing::TestWithParam<BadLimits> {};

TEST_P(ParseProcLimitsBad, Refuses) {
  auto limits = ParseProcLimits(GetParam().text);
  ASSERT_FALSE(limits);
  EXPECT_NE(limits.error().Text().find(GetParam().error), std::string::npos)
      << limits.error().Text();
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  return s.replace(s.find(from), from.size(), to);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseProcLimitsBad,
    testing::Values(BadLimits{"Empty", "", "no rows"},
                    BadLimits{"HeaderOnly", "Limit  Soft Limit\n", "no row \"Max cpu time\""},
                    BadLimits{"CutShort", std::string(kLimits).substr(0, 400), "no row"},
                    BadLimits{"NotANumber",
                              Replace(kLimits, "65536                8388608", "lots 8388608"),
                              "\"Max locked memory\": no values"}),
    CaseName{});

struct LookCase {
  const char* name;
  std::string stat;
  std::optional<uint64_t> start;
  int open_err = 0;
  int alive_checks = 1000;
  const char* error = "";  // a substring, or "" for a good look
  ApplyFailure failure = ApplyFailure::kNone;
};

std::vector<LookCase> LookCases() {
  return {
      {"Alive", Stat('S', 4194560, 500), 500},
      {"NothingRecordedIsNotProven", Stat('S', 4194560, 500), std::nullopt, 0, 1000,
       "neither a start time nor a cgroup", ApplyFailure::kInvalidTarget},
      {"Reused", Stat('S', 4194560, 501), 500, 0, 1000, "the PID was reused",
       ApplyFailure::kTargetGone},
      {"Zombie", Stat('Z', 4194560, 500), 500, 0, 1000, "is a zombie", ApplyFailure::kTargetGone},
      {"KernelThread", Stat('S', 0x00200040, 500), 500, 0, 1000, "kernel thread",
       ApplyFailure::kInvalidTarget},
      {"Gone", Stat('S', 4194560, 500), 500, ESRCH, 1000, "no such process",
       ApplyFailure::kTargetGone},
      {"ExitsWhileRead", Stat('S', 4194560, 500), 500, 0, 0, "process exited",
       ApplyFailure::kTargetGone},
      {"ExitsBeforeLimits", Stat('S', 4194560, 500), 500, 0, 1, "exited while its limits",
       ApplyFailure::kTargetGone},
  };
}

class LookAndHeal : public testing::TestWithParam<LookCase> {
 protected:
  void SetUp() override {
    p.stat = GetParam().stat;
    p.open_err = GetParam().open_err;
    p.alive_checks = GetParam().alive_checks;
  }
  FakeProcess p;
};

TEST_P(LookAndHeal, Look) {
  const LookCase& c = GetParam();
  ProcessLook look = LookAtProcess(p, p, 4242, InitRecord{0, c.start, ""});
  if (*c.error == '\0') {
    ASSERT_TRUE(look.ok()) << look.error->Text();
    ASSERT_EQ(look.limits.size(), 16u);
    EXPECT_EQ(look.limits[RLIMIT_MEMLOCK], (Rlimit{RLIMIT_MEMLOCK, 65536, 8 * kM}));
  } else {
    ASSERT_FALSE(look.ok());
    EXPECT_NE(look.error->Text().find(c.error), std::string::npos) << look.error->Text();
    EXPECT_EQ(look.failure, c.failure);
    EXPECT_TRUE(look.limits.empty());
  }
}

TEST_P(LookAndHeal, Heal) {
  const LookCase& c = GetParam();
  const std::vector<Rlimit> want = {{RLIMIT_MEMLOCK, 8 * kM, 8 * kM}};
  HealOutcome out = HealProcess(p, p, 4242, InitRecord{0, c.start, ""}, want, Rootless::kDegrade);
  if (*c.error == '\0') {
    ASSERT_TRUE(out.ok()) << out.error->Text();
    ASSERT_EQ(out.applied.size(), 1u);
    EXPECT_EQ(out.applied[0].before, (LimitPair{65536, 8 * kM}));
    EXPECT_EQ(p.limits[RLIMIT_MEMLOCK], (LimitPair{8 * kM, 8 * kM}));
    return;
  }
  ASSERT_FALSE(out.ok());
  // Each of these fails before the first prlimit.
  EXPECT_TRUE(p.set_calls.empty()) << "a prlimit reached pid 4242";
  EXPECT_EQ(p.limits[RLIMIT_MEMLOCK], (LimitPair{65536, 8 * kM}));
}

INSTANTIATE_TEST_SUITE_P(Cases, LookAndHeal, testing::ValuesIn(LookCases()), CaseName{});

TEST(HealProcess, ExitsWhileSetIsReportedNotDone) {
  FakeProcess p;
  p.alive_checks = 2;  // the identity check and the one before the set pass
  HealOutcome out = HealProcess(p, p, 4242, InitRecord{0, 500, ""},
                                {{RLIMIT_MEMLOCK, 8 * kM, 8 * kM}}, Rootless::kDegrade);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.failure, ApplyFailure::kTargetGone);
  EXPECT_EQ(p.set_calls.size(), 1u);
}

TEST(HealProcess, RootlessFitsToTheCurrentHardLimit) {
  FakeProcess p;
  p.initial_userns = false;
  HealOutcome out = HealProcess(p, p, 4242, InitRecord{0, 500, ""},
                                {{RLIMIT_MEMLOCK, 16 * kM, 16 * kM}}, Rootless::kDegrade);
  ASSERT_TRUE(out.ok()) << out.error->Text();
  EXPECT_EQ(out.limits, (std::vector<Rlimit>{{RLIMIT_MEMLOCK, 8 * kM, 8 * kM}}));
  EXPECT_FALSE(out.warning.empty());
  EXPECT_EQ(p.limits[RLIMIT_MEMLOCK], (LimitPair{8 * kM, 8 * kM}));

  FakeProcess strict;
  strict.initial_userns = false;
  HealOutcome refused = HealProcess(strict, strict, 4242, InitRecord{0, 500, ""},
                                    {{RLIMIT_MEMLOCK, 16 * kM, 16 * kM}}, Rootless::kFail);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(strict.set_calls.empty());
}

TEST(HealProcess, RefusesPidOne) {
  FakeProcess p;
  HealOutcome out =
      HealProcess(p, p, 1, InitRecord{}, {{RLIMIT_MEMLOCK, 1, 1}}, Rootless::kDegrade);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.failure, ApplyFailure::kInvalidTarget);
  EXPECT_TRUE(p.set_calls.empty());
}

}  // namespace
}  // namespace ocirlimit

namespace ocirlimit {
namespace {

// The caller's own PID is refused before anything is pinned, even when its
// /proc/PID/stat reads like any other process's.
class SelfReadable : public FakeProcess {
 public:
  Result<std::string> ReadFile(const std::string& path, size_t max) override {
    const std::string self = "/proc/" + std::to_string(getpid());
    if (path == self + "/stat") return stat;
    if (path == self + "/limits") return FakeProcess::ReadFile("/proc/4242/limits", max);
    return FakeProcess::ReadFile(path, max);
  }
};

TEST(HealProcess, RefusesTheCallersOwnPid) {
  SelfReadable p;
  HealOutcome out = HealProcess(p, p, getpid(), InitRecord{}, {{RLIMIT_MEMLOCK, 4 * kM, 4 * kM}},
                                Rootless::kDegrade);
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(out.failure, ApplyFailure::kInvalidTarget);
  EXPECT_TRUE(p.sets.empty());
  EXPECT_EQ(p.opens, 0);
}

// A process that became a zombie while its limits were set: the identity
// check after the set reports the heal failed.
class ZombieAfterSet : public FakeProcess {
 public:
  Result<std::string> ReadFile(const std::string& path, size_t max) override {
    if (path == "/proc/4242/stat" && !sets.empty()) return Stat('Z', 4194560, 500);
    return FakeProcess::ReadFile(path, max);
  }
};

TEST(HealProcess, AZombieAfterTheSetIsNotAHeal) {
  ZombieAfterSet p;
  HealOutcome out = HealProcess(p, p, 4242, InitRecord{0, 500, ""},
                                {{RLIMIT_MEMLOCK, 4 * kM, 4 * kM}}, Rootless::kDegrade);
  EXPECT_FALSE(p.sets.empty());
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(out.failure, ApplyFailure::kTargetGone);
}

// The proof's cgroup: the process's /proc/PID/cgroup must place it in the
// recorded cgroup, read pinned, before any set.
class InCgroup : public FakeProcess {
 public:
  Result<std::string> ReadFile(const std::string& path, size_t max) override {
    if (path == "/proc/4242/cgroup") return cgroup;
    if (path == "/proc/4242/status") return std::string("Uid:\t1000\t1000\t1000\t1000\n");
    return FakeProcess::ReadFile(path, max);
  }
  std::string cgroup = "0::/kubepods/pod1/c1\n";
};

TEST(HealProcess, ARecordedCgroupMustHoldTheProcess) {
  InCgroup p;
  const std::vector<Rlimit> want = {{RLIMIT_MEMLOCK, 4 * kM, 4 * kM}};
  p.cgroup = "0::/user.slice/user-1000.slice/user@1000.service/c1\n";
  HealOutcome refused = HealProcess(p, p, 4242, InitRecord{0, std::nullopt, "/kubepods/pod1/c1"},
                                    want, Rootless::kDegrade);
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.failure, ApplyFailure::kInvalidTarget);
  EXPECT_TRUE(p.set_calls.empty());
  p.cgroup = "0::/kubepods/pod1/c1\n";
  HealOutcome ok = HealProcess(p, p, 4242, InitRecord{0, std::nullopt, "/kubepods/pod1/c1"}, want,
                               Rootless::kDegrade);
  EXPECT_TRUE(ok.ok()) << ok.error->Text();
  EXPECT_FALSE(p.set_calls.empty());
}

// A user's state names no process to root (this test runs as root): it is
// left alone before it is even pinned, whatever else holds.
TEST(HealProcess, AUsersRecordIsNeverActedOnByRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "the caller must be root";
  InCgroup p;
  HealOutcome out = HealProcess(p, p, 4242, InitRecord{1000, 500, "/kubepods/pod1/c1"},
                                {{RLIMIT_MEMLOCK, 4 * kM, 4 * kM}}, Rootless::kDegrade);
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(out.failure, ApplyFailure::kInvalidTarget);
  EXPECT_NE(out.error->Text().find("unproven: its state is uid 1000's"), std::string::npos)
      << out.error->Text();
  EXPECT_TRUE(p.set_calls.empty());
  ProcessLook look = LookAtProcess(p, p, 4242, InitRecord{1000, 500, ""});
  EXPECT_FALSE(look.ok());
  EXPECT_EQ(look.failure, ApplyFailure::kInvalidTarget);
  EXPECT_EQ(p.opens, 0) << "never pinned";
}

}  // namespace
}  // namespace ocirlimit
