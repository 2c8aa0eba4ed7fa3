// The bad-input catalogue (bad_input.h), oci-prlimit-helper: --pid and its
// target, the rlimits on its argv, and the OCI state of --state.
#include <gtest/gtest.h>

#include "bad_input.h"

namespace ocirlimit::itest::badinput {
namespace {

// --pid: refused, malformed, missing; the target gone or a zombie.
std::vector<Case> PidAndTarget() {
  return {
      {"HelperTargetExitedBeforeApply",
       Prog::kHelper,
       3,
       {"pid {pid}: no such process"},
       [](World&) {}},
      {"HelperPidZero",
       Prog::kHelper,
       2,
       {"pid 0: refusing"},
       [](World& w) {
         w.args = {"--pid", "0", "memlock=1M"};
       }},
      {"HelperPidOne",
       Prog::kHelper,
       2,
       {"pid 1: refusing"},
       [](World& w) {
         w.args = {"--pid", "1", "memlock=1M"};
       }},
      {"HelperPidNegative",
       Prog::kHelper,
       2,
       {"--pid: \"-5\" is not a process id"},
       [](World& w) {
         w.args = {"--pid", "-5", "memlock=1M"};
       }},
      {"HelperPidString",
       Prog::kHelper,
       2,
       {"--pid: \"abc\" is not a process id"},
       [](World& w) {
         w.args = {"--pid", "abc", "memlock=1M"};
       }},
      {"HelperPidMissing",
       Prog::kHelper,
       2,
       {"--pid"},
       [](World& w) {
         w.args = {"memlock=1M", "--pid"};
       }},
      {"HelperTargetZombie",
       Prog::kHelper,
       3,
       {"pid {zombie}: is a zombie (exited, not yet reaped) before its limits were set"},
       [](World& w) {
         w.args = {"--pid", std::to_string(w.Zombie()), "memlock=1M"};
       }},
      {"HelperTargetZombieGet",
       Prog::kHelper,
       3,
       {"pid {zombie}: is a zombie"},
       [](World& w) {
         w.args = {"--get", "--pid", std::to_string(w.Zombie())};
       }},
  };
}

// The rlimits on its argv, a raise it may not do, a kernel thread, a
// test-only flag.
std::vector<Case> RlimitsAndFlags() {
  return {
      {"HelperRlimitTypo",
       Prog::kHelper,
       2,
       {"unknown name \"memlok\""},
       [](World& w) {
         w.args = {"--pid", std::to_string(w.Live()), "memlok=1M"};
       }},
      {"HelperSoftAboveHard",
       Prog::kHelper,
       2,
       {"soft 4194304 is greater than hard 1048576"},
       [](World& w) {
         w.args = {"--pid", std::to_string(w.Live()), "memlock=4M:1M"};
       }},
      {"HelperOverflow",
       Prog::kHelper,
       2,
       {"\"99999999999999999999\" overflows 64 bits"},
       [](World& w) {
         w.args = {"--pid", std::to_string(w.Live()), "memlock=99999999999999999999"};
       }},
      {"HelperDuplicate",
       Prog::kHelper,
       2,
       {"memlock is given twice"},
       [](World& w) {
         w.args = {"--pid", std::to_string(w.Live()), "memlock=1M", "RLIMIT_MEMLOCK=2M"};
       }},
      {"HelperHardRaiseWithoutCapability",
       Prog::kHelper,
       4,
       {"pid {live}", "needs CAP_SYS_RESOURCE"},
       [](World& w) {
         w.args = {"--pid", std::to_string(w.Live()), "nofile=1024:4194304"};
       }},
      // kthreadd is pid 2 in the initial PID namespace (checked in setup).
      {"HelperTargetKernelThread",
       Prog::kHelper,
       2,
       {"pid 2: refusing to touch a kernel thread"},
       [](World& w) {
         ASSERT_NE(ReadFile("/proc/2/stat").find("(kthreadd)"), std::string::npos)
             << "kthreadd is not pid 2 in this PID namespace";
         w.args = {"--pid", "2", "memlock=1M"};
       }},
      {"HelperTestOnlyFlagUnknownInTheInstalledBinary",
       Prog::kHelper,
       2,
       {"unknown flag \"--test-only-pause-after-pidfd\""},
       [](World& w) {
         w.args = {"--pid", std::to_string(w.Live()), "--test-only-pause-after-pidfd",
                   w.dir / "fifo", "memlock=1M"};
       }},
  };
}

// --state: the state on stdin malformed, too big, too deep, too late.
std::vector<Case> StateInput() {
  return {
      {"HelperStateMalformed",
       Prog::kHelper,
       1,
       {"state: not valid JSON"},
       [](World& w) {
         w.args = {"--state", "memlock=1M"};
         w.stdin_data = "{\"pid\":";
       }},
      {"HelperStatePidString",
       Prog::kHelper,
       1,
       {"state.pid: \"12\" is not an integer"},
       [](World& w) {
         w.args = {"--state", "memlock=1M"};
         w.stdin_data = w.State("\"12\"");
       }},
      {"HelperStateOver1MiB",
       Prog::kHelper,
       1,
       {"input is larger than 1048576 bytes"},
       [](World& w) {
         w.args = {"--state", "memlock=1M"};
         w.stdin_data = w.State(w.vars["{pid}"], R"(,"x":")" + Big(2 << 20) + "\"");
       }},
      {"HelperStateDeeplyNested",
       Prog::kHelper,
       1,
       {"state: nested deeper than 64 levels"},
       [](World& w) {
         w.args = {"--state", "memlock=1M"};
         w.stdin_data = w.State(w.vars["{pid}"], R"(,"annotations":)" + Deep());
       }},
      {"HelperStateNewlineInId",
       Prog::kHelper,
       1,
       {"state.id: ", "control character"},
       [](World& w) {
         w.args = {"--state", "memlock=1M"};
         w.stdin_data = R"({"id":"a\nb","status":"creating","pid":)" + w.vars["{pid}"] + "}";
       }},
      {"HelperStateStatusStopped",
       Prog::kHelper,
       1,
       {"state.status: \"stopped\" is too late"},
       [](World& w) {
         w.args = {"--state", "memlock=1M"};
         w.stdin_data = R"({"id":"x","status":"stopped","pid":)" + w.vars["{pid}"] + "}";
       }},
  };
}

// --state: the target gone (a huge id cut in the message), a late stage.
std::vector<Case> StateTarget() {
  return {
      {"HelperStateHugeIdIsCutInTheMessage",
       Prog::kHelper,
       3,
       {"container \"bbbb", "\u2026\" (900000 bytes): pid {pid}: no such process"},
       [](World& w) {
         w.args = {"--state", "memlock=1M"};
         w.stdin_data = R"({"id":")" + std::string(900000, 'b') +
                        R"(","status":"creating","pid":)" + w.vars["{pid}"] + "}";
       }},
      {"HelperStateTargetExited",
       Prog::kHelper,
       3,
       {"container \"bad-input\": pid {pid}: no such process"},
       [](World& w) {
         w.args = {"--state", "memlock=1M"};
         w.stdin_data = w.State(w.vars["{pid}"]);
       }},
      {"HelperStateLateStage",
       Prog::kHelper,
       2,
       {"poststart"},
       [](World& w) {
         w.args = {"--state", "memlock=1M", "poststart"};
       }},
  };
}

}  // namespace

std::vector<Case> HelperCases() {
  return Join({PidAndTarget(), RlimitsAndFlags(), StateInput(), StateTarget()});
}

INSTANTIATE_TEST_SUITE_P(Helper, BadInput, ::testing::ValuesIn(HelperCases()), CaseName);

}  // namespace ocirlimit::itest::badinput
