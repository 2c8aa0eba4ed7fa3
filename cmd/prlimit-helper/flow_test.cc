#include "prlimit-helper/flow.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cerrno>
#include <map>
#include <string>
#include <vector>

#include "effects/target_kind.h"
#include "tests/testing/case_name.h"
#include "tests/testing/fake_process_ops.h"

namespace ocirlimit {
namespace {

// Every capability call succeeds, unless no_new_privs_err says otherwise.
class FakeCaps final : public CapOps {
 public:
  int no_new_privs_err = 0;
  int calls = 0;
  Status SetNoNewPrivs() override {
    ++calls;
    if (no_new_privs_err != 0) return MakeError("prctl(PR_SET_NO_NEW_PRIVS)", no_new_privs_err);
    return Ok{};
  }
  Result<Own> ReadOwn() override { return Own{true, false}; }
  int MaxBits() override { return 41; }
  bool InBounding(int /*cap*/) override { return false; }
  Status DropBound(int /*cap*/) override { return Ok{}; }
  bool AmbientSupported() override { return true; }
  Status ResetAmbient() override { return Ok{}; }
  Status SetProc(const std::vector<int>& /*keep*/) override { return Ok{}; }
};

constexpr pid_t kSelf = 500;
constexpr pid_t kTarget = 4242;
const std::string kRunning = "4242 (sleep) S 1 4242 4242 0 -1 4194560 0 0";
const std::string kZombie = "4242 (sleep) Z 1 4242 4242 0 -1 4194560 0 0";
const std::string kKernelThread = "4242 (kworker/0:1) I 2 0 0 0 -1 69238880 0 0";

class FakeHelperOps final : public HelperOps {
 public:
  Result<std::string> stdin_text = std::string();
  // /proc/PID/stat as read the first, second, ... time (the last repeats).
  std::vector<std::string> stats = {kRunning};
  std::string own_status = "Name:\thelper\nCapInh:\t0\nCapPrm:\t1000000\nCapEff:\t1000000\n";
  FakeCaps caps;
  testsupport::FakeProcessOps process;
  int stdin_reads = 0;
  int stat_reads = 0;
  std::string out;
  std::vector<std::string> err;

  Result<std::string> ReadStdin(size_t /*max_bytes*/, int /*timeout_ms*/) override {
    ++stdin_reads;
    return stdin_text;
  }
  Result<std::string> ReadProc(const std::string& path, size_t /*max_bytes*/) override {
    if (path == "/proc/self/status") return own_status;
    EXPECT_EQ(path, "/proc/" + std::to_string(kTarget) + "/stat");
    const std::string& text = stats[std::min<size_t>(stat_reads++, stats.size() - 1)];
    return text;
  }
  CapOps& Caps() override { return caps; }
  ProcessOps& Processes() override { return process; }
  ProcessOps& ApplyProcesses(const HelperArgs& /*args*/) override { return process; }
  pid_t Self() override { return kSelf; }
  void Out(const std::string& text) override { out += text; }
  void Err(const std::string& line) override { err.push_back(line); }
};

const std::string kState =
    R"({"ociVersion":"1.0.2","id":"c1","status":"creating","pid":4242,"bundle":"/b"})";

struct FlowCase {
  const char* name;
  std::vector<std::string> args;
  int no_new_privs_err = 0;
  std::vector<std::string> stats = {kRunning};
  std::string stdin_text = {};
  int set_err = 0;  // errno of every prlimit(2) that sets
  int want_exit = 0;
  std::vector<std::string> want_sets = {};  // "pid resource soft:hard"
  std::string want_err = {};                // the one stderr line; empty: none
  std::string want_out_part = {};           // a part of stdout; empty: no stdout
  bool reads_stdin = false;
};

class HelperFlow : public ::testing::TestWithParam<FlowCase> {};

TEST_P(HelperFlow, ExitStatusOutputAndCalls) {
  const FlowCase& c = GetParam();
  FakeHelperOps ops;
  ops.caps.no_new_privs_err = c.no_new_privs_err;
  ops.stats = c.stats;
  ops.stdin_text = c.stdin_text;
  if (c.set_err != 0) {
    ops.process.set_errs = {{RLIMIT_MEMLOCK, c.set_err}, {RLIMIT_NOFILE, c.set_err}};
  }
  EXPECT_EQ(RunHelper(c.args, ops, false), c.want_exit);
  EXPECT_EQ(ops.process.sets, c.want_sets);
  if (c.want_err.empty()) {
    EXPECT_TRUE(ops.err.empty()) << ops.err.front();
  } else {
    ASSERT_EQ(ops.err.size(), 1U) << "one line, got " << ops.err.size();
    EXPECT_EQ(ops.err[0], c.want_err);
  }
  if (c.want_out_part.empty()) {
    EXPECT_EQ(ops.out, "");
  } else {
    EXPECT_NE(ops.out.find(c.want_out_part), std::string::npos) << ops.out;
  }
  EXPECT_EQ(ops.stdin_reads, c.reads_stdin ? 1 : 0);
  EXPECT_EQ(ops.process.open_fds, 0) << "pidfd leaked";
}

const std::string kMemlock = std::to_string(RLIMIT_MEMLOCK);

INSTANTIATE_TEST_SUITE_P(
    Cases, HelperFlow,
    ::testing::Values(
        FlowCase{.name = "PidSetsEachLimit",
                 .args = {"--pid", "4242", "memlock=1M:2M"},
                 .want_sets = {"4242 " + kMemlock + " 1048576:2097152"}},
        FlowCase{.name = "StateReadsThePidFromStdin",
                 .args = {"--state", "memlock=1M", "createRuntime"},
                 .stdin_text = kState,
                 .want_sets = {"4242 " + kMemlock + " 1048576:1048576"},
                 .reads_stdin = true},
        FlowCase{
            .name = "BadArgvIsUsageBeforeAnything",
            .args = {"--pid", "4242", "memlok=1M"},
            .want_exit = 2,
            .want_err = "oci-prlimit-helper: rlimit \"memlok=1M\": unknown name \"memlok\" (want "
                        "one of as, core, cpu, data, fsize, locks, memlock, msgqueue, nice, "
                        "nofile, nproc, rss, rtprio, rttime, sigpending, stack) (see --help)"},
        FlowCase{.name = "HelpPrintsUsage", .args = {"--help"}, .want_out_part = "usage:"},
        FlowCase{.name = "VersionPrintsName",
                 .args = {"--version"},
                 .want_out_part = "oci-prlimit-helper "},
        FlowCase{.name = "FailedDropStopsBeforeStdin",
                 .args = {"--state", "memlock=1M"},
                 .no_new_privs_err = EPERM,
                 .stdin_text = kState,
                 .want_exit = 1,
                 .want_err = "oci-prlimit-helper: set no_new_privs: prctl(PR_SET_NO_NEW_PRIVS): "
                             "Operation not permitted"},
        FlowCase{.name = "PidOneRefused",
                 .args = {"--pid", "1", "memlock=1M"},
                 .want_exit = 2,
                 .want_err = "oci-prlimit-helper: pid 1: refusing to touch pid 0 or 1 (init, or "
                             "no process at all)"},
        FlowCase{.name = "OwnPidRefused",
                 .args = {"--pid", "500", "memlock=1M"},
                 .want_exit = 2,
                 .want_err = "oci-prlimit-helper: pid 500: refusing to touch the helper's own "
                             "process"},
        FlowCase{.name = "ZombieRefusedBeforeApply",
                 .args = {"--pid", "4242", "memlock=1M"},
                 .stats = {kZombie},
                 .want_exit = 3,
                 .want_err = "oci-prlimit-helper: pid 4242: is a zombie (exited, not yet reaped) "
                             "before its limits were set"},
        FlowCase{.name = "KernelThreadRefused",
                 .args = {"--pid", "4242", "memlock=1M"},
                 .stats = {kKernelThread},
                 .want_exit = 2,
                 .want_err = "oci-prlimit-helper: pid 4242: refusing to touch a kernel thread"},
        FlowCase{.name = "ExitedWhileApplyingIsGone",
                 .args = {"--pid", "4242", "memlock=1M"},
                 .stats = {kRunning, kZombie},
                 .want_exit = 3,
                 .want_sets = {"4242 " + kMemlock + " 1048576:1048576"},
                 .want_err = "oci-prlimit-helper: pid 4242: is a zombie (exited, not yet reaped) "
                             "after its limits were set"},
        FlowCase{.name = "BadStateIsFailureWithoutTouchingAProcess",
                 .args = {"--state", "memlock=1M"},
                 .stdin_text = "{not json",
                 .want_exit = 1,
                 .want_err = "oci-prlimit-helper: state: not valid JSON",
                 .reads_stdin = true},
        FlowCase{.name = "PermissionDeniedIsExitFour",
                 .args = {"--pid", "4242", "memlock=1M"},
                 .set_err = EPERM,
                 .want_exit = 4,
                 .want_err = "oci-prlimit-helper: pid 4242: memlock to 1048576:1048576: prlimit: "
                             "Operation not permitted (nothing was applied)"},
        FlowCase{.name = "GetPrintsLimitsAndSetsNothing",
                 .args = {"--get", "--pid", "4242"},
                 .want_out_part = "memlock=8388608:8388608\n"},
        FlowCase{.name = "JsonApplyPrintsOneObject",
                 .args = {"--json", "--pid", "4242", "memlock=1M"},
                 .want_sets = {"4242 " + kMemlock + " 1048576:1048576"},
                 .want_out_part = "\"pid\":4242"},
        FlowCase{.name = "DebugCapsAlonePrintsOwnSets",
                 .args = {"--debug-caps"},
                 .want_out_part = "CapEff:\t1000000"}),
    CaseName{});

}  // namespace
}  // namespace ocirlimit
