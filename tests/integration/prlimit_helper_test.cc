// oci-prlimit-helper against real processes and real runc and crun: what
// the container's own process reads from /proc/self/limits, what the helper
// holds in /proc/PID/status while it runs, and which process a recycled PID
// leads to.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <map>
#include <sstream>

#include "harness.h"

namespace ocirlimit::itest {
namespace {

constexpr int kSysResourceBit = 24;
const Limit kHost{8 << 20, 8 << 20};

std::string Helper() { return OurBinary("oci-prlimit-helper"); }
// The test build: the installed helper has no --test-only-pause-after-pidfd.
std::string TestingHelper() { return OurBinary("oci-prlimit-helper-testing"); }

// "CapEff:\t000001fffeffffff" -> {"CapEff": 0x1fffeffffff}, and NoNewPrivs.
std::map<std::string, uint64_t> StatusFields(const std::string& status) {
  std::map<std::string, uint64_t> out;
  std::istringstream ss(status);
  for (std::string line; std::getline(ss, line);) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (key.starts_with("Cap")) out[key] = std::stoull(value, nullptr, 16);
    if (key == "NoNewPrivs") out[key] = std::stoull(value);
  }
  return out;
}

// Every capability set holds nothing but CAP_SYS_RESOURCE, and
// no_new_privs is on.
void ExpectOnlySysResource(const std::string& status) {
  auto f = StatusFields(status);
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
    ASSERT_TRUE(f.contains(set)) << set << " missing in:\n" << status;
    EXPECT_EQ(f[set] & ~(uint64_t{1} << kSysResourceBit), 0U)
        << set << " keeps more than CAP_SYS_RESOURCE:\n"
        << status;
  }
  ASSERT_TRUE(f.contains("NoNewPrivs")) << status;
  EXPECT_EQ(f["NoNewPrivs"], 1U) << status;
}

// ---------------------------------------------------------------------------
// As a hooks.d-style hook: the limits are the hook's args, no config file.

class HelperHookTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("runc", GetParam(), "unshare", "prlimit");
    bundle_ = dir_ / "bundle";
    spec_ = MakeBundle(bundle_, {"sh", "-c",
                                 "cat /proc/self/limits; grep Seccomp: /proc/self/status; "
                                 "if ulimit -l 100; then echo ULIMIT=allowed; "
                                 "else echo ULIMIT=denied; fi"});
    runtime_ = GetParam() == "crun" ? CrunCommand(dir_.path()) : "runc";
    // crun drops a failing hook's stderr unless told where to put it.
    spec_["annotations"]["run.oci.hooks.stderr"] = hook_stderr();
  }

  std::string hook_stderr() const { return dir_ / "hook-stderr"; }

  // Exactly the args a hooks.d file would carry.
  void AddHelperHook(const std::string& stage, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"oci-prlimit-helper"};
    argv.insert(argv.end(), args.begin(), args.end());
    spec_["hooks"][stage] = Json::array({HookEntry(Helper(), argv)});
  }

  CmdResult RunContainer(const std::vector<std::string>& prefix = {}) {
    WriteSpec(bundle_, spec_);
    std::vector<std::string> argv = prefix;
    for (const auto& a : {runtime_, std::string("--root"), dir_ / "state", std::string("run"),
                          std::string("--bundle"), bundle_, UniqueId("helper")}) {
      argv.push_back(a);
    }
    return RunCmd(argv);
  }

  std::optional<Limit> MemlockSeen(const std::vector<std::string>& prefix = {}) {
    CmdResult r = RunContainer(prefix);
    EXPECT_EQ(r.status, 0) << r.err << ReadFile(hook_stderr());
    return LimitRow(r.out, kMemlock);
  }

  // Denies the two syscalls that set rlimits, to the container only.
  void AddSeccompDenyingRlimits() {
    spec_["linux"]["seccomp"] = {{"defaultAction", "SCMP_ACT_ALLOW"},
                                 {"syscalls", Json::array({{{"names", {"prlimit64", "setrlimit"}},
                                                            {"action", "SCMP_ACT_ERRNO"},
                                                            {"errnoRet", 1}}})}};
  }

  TempDir dir_;
  std::string bundle_;
  std::string runtime_;
  Json spec_;
};

TEST_P(HelperHookTest, CreateRuntimeHookWithNoConfigFile) {
  ASSERT_EQ(MemlockSeen(), kHost) << "host baseline changed";
  AddHelperHook("createRuntime", {"--state", "memlock=1M:4M"});
  EXPECT_EQ(MemlockSeen(), (Limit{1 << 20, 4 << 20}));
}

// No runtime appends a stage word, but a hooks.d file may carry one.
TEST_P(HelperHookTest, PrestartHookWithTrailingStageWord) {
  AddHelperHook("prestart", {"--state", "memlock=2M:4M", "prestart"});
  EXPECT_EQ(MemlockSeen(), (Limit{2 << 20, 4 << 20}));
}

TEST_P(HelperHookTest, RaisesSoftLimitUpToHard) {
  const std::vector<std::string> low = {"prlimit", "--memlock=1048576:8388608"};
  ASSERT_EQ(MemlockSeen(low), (Limit{1 << 20, 8 << 20})) << "without the helper";
  AddHelperHook("createRuntime", {"--state", "memlock=8M"});
  EXPECT_EQ(MemlockSeen(low), (Limit{8 << 20, 8 << 20}));
}

TEST_P(HelperHookTest, HardLimitRaiseFailsTheStartAndSaysWhy) {
  AddHelperHook("createRuntime", {"--state", "memlock=16M:16M"});
  CmdResult r = RunContainer();
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.out.find(kMemlock), std::string::npos) << "the container must not have run";
  std::string shown = GetParam() == "runc" ? r.err : ReadFile(hook_stderr());
  EXPECT_NE(shown.find("config entry memlock=16M: the hard limit in force is 8M, and raising it "
                       "needs CAP_SYS_RESOURCE, which oci-prlimit-helper does not have; "
                       "memlock=8M would work"),
            std::string::npos)
      << "runtime stderr: " << r.err << "\nhook stderr: " << shown;
}

// The seccomp-free proof: the profile stops the container from changing
// its own limits (shown by `ulimit -l` failing inside), yet the limit set
// from outside arrives.
TEST_P(HelperHookTest, SeccompDenyingRlimitSyscallsStillGetsTheLimit) {
  AddHelperHook("createRuntime", {"--state", "memlock=1M:4M"});

  CmdResult open = RunContainer();
  ASSERT_EQ(open.status, 0) << open.err;
  ASSERT_NE(open.out.find("ULIMIT=allowed"), std::string::npos)
      << "without the profile, ulimit -l 100 must work, or the proof below proves nothing:\n"
      << open.out;

  AddSeccompDenyingRlimits();
  CmdResult r = RunContainer();
  ASSERT_EQ(r.status, 0) << r.err << ReadFile(hook_stderr());
  EXPECT_NE(r.out.find("Seccomp:\t2"), std::string::npos) << "no seccomp filter:\n" << r.out;
  EXPECT_NE(r.out.find("ULIMIT=denied"), std::string::npos)
      << "the profile did not deny the container its own rlimit syscalls:\n"
      << r.out;
  EXPECT_EQ(LimitRow(r.out, kMemlock), (Limit{1 << 20, 4 << 20})) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Runtimes, HelperHookTest, ::testing::Values("runc", "crun"),
                         [](const auto& info) { return info.param; });

// ---------------------------------------------------------------------------
// Against plain processes, in a private PID namespace: its PIDs are ours to
// recycle (ns_last_pid), and everything in it dies with its init.

struct PausedRun {
  int helper_rc = -1;
  std::string helper_out;
  std::string helper_err;
  std::string helper_status;  // /proc/HELPER/status, read while it was paused
  std::string target;         // pid
  std::string reused;         // pid of the process made to take the target's pid
  std::optional<Limit> target_memlock;
  std::optional<Limit> sibling_memlock;
  std::optional<Limit> reused_memlock;
  std::string script_err;
};

// Runs the helper on a `sleep` target, pausing it after it opened its
// pidfd. `meanwhile` runs during the pause, in sh, with $T the target.
PausedRun RunPaused(const TempDir& dir, const std::string& meanwhile) {
  const std::string fifo = dir / "fifo";
  EXPECT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string script =
      "D=" + dir.path() + "\n" +
      "sleep 1000 & T=$!\n"
      "sleep 1000 & S=$!\n"
      "echo $T > $D/target\n" +
      TestingHelper() + " --json --pid $T --test-only-pause-after-pidfd $D/fifo memlock=1M:4M " +
      ">$D/out 2>$D/err & P=$!\n"
      // Opening the FIFO returns once the helper opened it: its pidfd is open.
      "exec 3>$D/fifo\n"
      "cat /proc/$P/status > $D/helper-status\n" +
      meanwhile +
      "\n"
      "echo go >&3; exec 3>&-\n"
      "wait $P; echo $? > $D/rc\n"
      "cat /proc/$T/limits > $D/target-limits 2>/dev/null\n"
      "cat /proc/$S/limits > $D/sibling-limits\n"
      "[ -n \"${R:-}\" ] && echo $R > $D/reused && cat /proc/$R/limits > $D/reused-limits\n"
      "true\n";
  CmdResult r = RunCmd({"unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", script});
  PausedRun out;
  out.script_err = r.err;
  EXPECT_EQ(r.status, 0) << r.err;
  auto trim = [](std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  };
  std::string rc = trim(ReadFile(dir / "rc"));
  out.helper_rc = rc.empty() ? -1 : std::stoi(rc);
  out.helper_out = ReadFile(dir / "out");
  out.helper_err = ReadFile(dir / "err");
  out.helper_status = ReadFile(dir / "helper-status");
  out.target = trim(ReadFile(dir / "target"));
  out.reused = trim(ReadFile(dir / "reused"));
  out.target_memlock = LimitRow(ReadFile(dir / "target-limits"), kMemlock);
  out.sibling_memlock = LimitRow(ReadFile(dir / "sibling-limits"), kMemlock);
  out.reused_memlock = LimitRow(ReadFile(dir / "reused-limits"), kMemlock);
  return out;
}

class HelperProcessTest : public ::testing::Test {
 protected:
  void SetUp() override { OCI_RLIMIT_REQUIRE("unshare", "sleep", "sh", "prlimit", "capsh"); }
  TempDir dir_;
};

// The control for the two tests below: the pause alone changes nothing.
TEST_F(HelperProcessTest, PausedHelperStillAppliesToALiveTarget) {
  PausedRun run = RunPaused(dir_, "");
  EXPECT_EQ(run.helper_rc, 0) << run.helper_err << run.script_err;
  EXPECT_EQ(run.target_memlock, (Limit{1 << 20, 4 << 20}));
  EXPECT_EQ(run.sibling_memlock, kHost);
  auto j = Json::parse(run.helper_out);
  EXPECT_EQ(j["ok"], true) << run.helper_out;
  EXPECT_EQ(j["changes"][0]["after"]["hard"], 4 << 20) << run.helper_out;
}

TEST_F(HelperProcessTest, TargetKilledAfterPidfdOpenFailsClearlyAndTouchesNoOne) {
  PausedRun run = RunPaused(dir_, "kill -9 $T; wait $T");
  EXPECT_EQ(run.helper_rc, 3) << run.helper_err;
  EXPECT_NE(run.helper_err.find("oci-prlimit-helper: pid " + run.target +
                                ": process exited before its limits were set"),
            std::string::npos)
      << run.helper_err;
  EXPECT_EQ(run.sibling_memlock, kHost) << "a bystander was touched";
  auto j = Json::parse(run.helper_out);
  EXPECT_EQ(j["ok"], false);
  EXPECT_TRUE(j["changes"].empty()) << run.helper_out;
  EXPECT_EQ(j["exit_code"], 3);
}

TEST_F(HelperProcessTest, RecycledPidIsNeverTouched) {
  PausedRun run = RunPaused(dir_,
                            "kill -9 $T; wait $T\n"
                            "echo $((T - 1)) > /proc/sys/kernel/ns_last_pid\n"
                            "sleep 1000 & R=$!");
  ASSERT_FALSE(run.target.empty());
  ASSERT_EQ(run.reused, run.target) << "the test did not manage to recycle the pid";
  EXPECT_EQ(run.helper_rc, 3) << run.helper_err;
  EXPECT_NE(run.helper_err.find("pid " + run.target + ": process exited before"), std::string::npos)
      << run.helper_err;
  EXPECT_EQ(run.reused_memlock, kHost) << "the new process behind the old pid was touched";
  EXPECT_EQ(run.sibling_memlock, kHost);
}

// Read from outside, while the helper runs (paused with its pidfd open).
TEST_F(HelperProcessTest, KeepsNoCapabilityButSysResourceWhileItRuns) {
  auto own = StatusFields(ReadFile("/proc/self/status"));
  ASSERT_NE(own["CapEff"] & ~(uint64_t{1} << kSysResourceBit), 0U)
      << "the test must start the helper with capabilities to drop";
  PausedRun run = RunPaused(dir_, "");
  ASSERT_FALSE(run.helper_status.empty()) << run.script_err;
  ASSERT_NE(run.helper_status.find("Name:\toci-prlimit-he"), std::string::npos)
      << "read the wrong process:\n"
      << run.helper_status;
  ExpectOnlySysResource(run.helper_status);
}

// The helper's own report, started with an ambient capability to clear.
TEST_F(HelperProcessTest, DebugCapsShowsAmbientClearedAndNoNewPrivs) {
  const std::vector<std::string> capsh = {"capsh", "--inh=cap_net_admin", "--addamb=cap_net_admin",
                                          "--"};
  auto with = [&](const std::string& cmd) {
    std::vector<std::string> argv = capsh;
    argv.insert(argv.end(), {"-c", cmd});
    return RunCmd(argv);
  };
  CmdResult before = with("cat /proc/self/status");
  ASSERT_EQ(before.status, 0) << before.err;
  ASSERT_NE(StatusFields(before.out)["CapAmb"], 0U) << "capsh set no ambient capability";

  CmdResult r = with("exec " + Helper() + " --debug-caps");
  ASSERT_EQ(r.status, 0) << r.err;
  ExpectOnlySysResource(r.out);
}

TEST_F(HelperProcessTest, Refusals) {
  struct Case {
    std::string script;
    int rc;
    std::string message;
  };
  const std::string h = Helper();
  const std::vector<Case> cases = {
      {h + " --pid 1 memlock=1M", 2, "pid 1: refusing to touch pid 0 or 1"},
      {h + " --pid 0 memlock=1M", 2, "pid 0: refusing to touch pid 0 or 1"},
      {"exec " + h + " --pid $$ memlock=1M", 2, ": refusing to touch the helper's own process"},
      // In a fresh PID namespace, only its init exists.
      {"unshare --pid --fork --mount-proc " + h + " --pid 4242 memlock=1M", 3,
       "pid 4242: no such process"},
      {"sleep 1000 & T=$!; " + h + " --pid $T memlock=16M:16M; rc=$?; kill $T; exit $rc", 4,
       "config entry memlock=16M: the hard limit in force is 8M, and raising it needs "
       "CAP_SYS_RESOURCE, which oci-prlimit-helper does not have; memlock=8M would work (or run "
       "the container engine with CAP_SYS_RESOURCE) (nothing was applied)"},
      {"sleep 1000 & T=$!; " + h + " --pid $T core=0 memlock=16M:16M; rc=$?; kill $T; exit $rc", 5,
       "(partial apply: applied before the failure: core 0:unlimited->0:0; not applied: "
       "memlock)"},
      {h + " --pid 42", 2, "no limits"},
      {"echo '{\"id\":\"c\",\"status\":\"running\",\"pid\":42}' | " + h + " --state memlock=1M", 1,
       "state.status: \"running\" is too late"},
  };
  for (const auto& c : cases) {
    CmdResult r = Sh(c.script);
    EXPECT_EQ(r.status, c.rc) << c.script << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.script << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line:\n" << r.err;
  }
}

// A target of another uid, as in a user-namespaced container. The helper
// holds no CAP_KILL, yet must still confirm the target alive; prlimit itself
// then needs CAP_SYS_RESOURCE, which only some machines give us.
TEST_F(HelperProcessTest, TargetOfAnotherUid) {
  OCI_RLIMIT_REQUIRE("setpriv", "mkfifo");
  ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  const bool sys_resource =
      (StatusFields(ReadFile("/proc/self/status"))["CapEff"] >> kSysResourceBit & 1) != 0;
  // The target writes to the FIFO only once it runs as uid 65534.
  CmdResult r = Sh("D=" + dir_.path() + "; mkfifo -m 0666 $D/ready; " +
                   "setpriv --reuid 65534 --regid 65534 --clear-groups "
                   "sh -c 'echo > $0; exec sleep 1000' $D/ready & T=$!; read x < $D/ready; " +
                   Helper() + " --pid $T memlock=1M:4M; echo rc=$?; grep Uid: /proc/$T/status; " +
                   "cat /proc/$T/limits; kill $T");
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_NE(r.out.find("Uid:\t65534\t65534\t65534"), std::string::npos) << r.out;
  if (sys_resource) {
    EXPECT_NE(r.out.find("rc=0"), std::string::npos) << r.out << r.err;
    EXPECT_EQ(LimitRow(r.out, kMemlock), (Limit{1 << 20, 4 << 20})) << r.out;
  } else {
    EXPECT_NE(r.out.find("rc=4"), std::string::npos) << r.out << r.err;
    EXPECT_NE(r.err.find("memlock to 1048576:4194304: prlimit: Operation not permitted"),
              std::string::npos)
        << "the liveness check must not be what fails:\n"
        << r.err;
    EXPECT_EQ(LimitRow(r.out, kMemlock), kHost) << r.out;
  }
}

TEST_F(HelperProcessTest, GetPrintsTheTargetsLimits) {
  CmdResult r = Sh("sleep 1000 & T=$!; prlimit --pid $T --memlock=1048576:2097152; " + Helper() +
                   " --get --pid $T; " + Helper() + " --get --json --pid $T; kill $T");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\nmemlock=1048576:2097152\n"), std::string::npos) << r.out;
  auto json_line = r.out.substr(r.out.find('{'));
  auto j = Json::parse(json_line);
  EXPECT_EQ(j["limits"]["memlock"]["soft"], 1 << 20);
  EXPECT_EQ(j["limits"]["memlock"]["hard"], 2 << 20);
}

}  // namespace
}  // namespace ocirlimit::itest
