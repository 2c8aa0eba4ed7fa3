// oci-prlimit-helper: sets rlimits on another process (a container's init)
// from the host, holding no capability but CAP_SYS_RESOURCE. Also usable
// as a createRuntime/prestart hook with --state.
#include <unistd.h>

#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "adapters/oci/state.h"
#include "core/text.h"
#include "core/version.h"
#include "effects/apply.h"
#include "effects/files.h"
#include "effects/target_kind.h"
#include "prlimit-helper/helper_args.h"
#include "prlimit-helper/helper_output.h"
#include "prlimit-helper/privileges.h"
#include "prlimit-helper/read_limits.h"
#ifdef OCI_RLIMIT_HELPER_TESTING
#include "prlimit-helper/test_pause.h"
#endif

namespace ocirlimit {
namespace {

constexpr const char* kName = "oci-prlimit-helper";
#ifdef OCI_RLIMIT_HELPER_TESTING
constexpr bool kTestBuild = true;
#else
constexpr bool kTestBuild = false;
#endif
// Well under the shortest runtime hook timeout we know of (podman's 60 s).
constexpr int kStdinTimeoutMs = 10000;
constexpr size_t kMaxProcStatusBytes = 1 << 16;

void Say(const std::string& msg) { std::cerr << kName << ": " << msg << "\n"; }

Result<std::string> OwnCapabilities() {
  auto status = ReadFileBounded("/proc/self/status", kMaxProcStatusBytes);
  if (!status) return status.error();
  return CapabilityLines(*status);
}

struct Target {
  pid_t pid = 0;
  std::string context;  // prefixes errors: `container "ID": ` with --state
};

Result<Target> ResolveTarget(const HelperArgs& args) {
  if (args.source == TargetSource::kPid) return Target{args.pid, ""};
  auto input = ReadFdBounded(STDIN_FILENO, kMaxStateBytes, kStdinTimeoutMs);
  if (!input) return input.error().Wrap("read state from stdin");
  auto state = ParseState(*input);
  if (!state) return state.error();
  if (auto timing = CheckStateTiming(*state, kName); !timing) return timing.error();
  return Target{state->pid, "container " + Quote(state->id) + ": "};
}

int Refuse(const HelperArgs& args, const Target& target, const TargetRefusal& r,
           const std::vector<Change>& applied = {}) {
  ApplyOutcome refused;
  refused.applied = applied;
  refused.error = r.error;
  refused.failure = r.failure;
  if (args.json && args.mode == HelperMode::kApply) {
    std::cout << ApplyJson(target.pid, args.limits, refused) << std::flush;
  }
  Say(target.context + r.error.Text());
  return HelperExitCode(refused);
}

int Get(ProcessOps& ops, const HelperArgs& args, const Target& target) {
  ReadOutcome read = ReadRlimits(ops, target.pid);
  if (!read.ok()) {
    Say(target.context + read.error->Text());
    return HelperExitCode(read.failure);
  }
  std::cout << (args.json ? LimitsJson(target.pid, read.limits) : LimitsText(read.limits));
  return kExitOk;
}

int Apply(ProcessOps& ops, const HelperArgs& args, const Target& target) {
  std::vector<Rlimit> limits = args.limits;
  // As a hook (--state) of a rootless engine, not the initial user
  // namespace: the limits it can set, and one warning (core/unprivileged.h).
  // With --pid an admin asked for exactly these limits: no fitting.
  if (args.source == TargetSource::kState) {
    auto fitted = FitForCaller(ops, target.pid, limits, Rootless::kDegrade);
    if (!fitted) {
      Say(target.context + fitted.error().Text());
      return kExitFailure;
    }
    if (!fitted->warning.empty()) Say(target.context + "warning: " + fitted->warning);
    limits = fitted->limits;
  }
  ApplyOutcome outcome = ApplyRlimits(ops, target.pid, limits);
  // A target that exited while we worked is a zombie now: prlimit(2) still
  // succeeded on it, but nothing it changed will ever run.
  if (outcome.ok()) {
    // Through the real ops: a test pause wraps only the apply's own pidfd.
    if (auto r =
            CheckPinnedTargetKind(LinuxProcessOps(), target.pid, "after its limits were set")) {
      return Refuse(args, target, *r, outcome.applied);
    }
  }
  if (args.json) std::cout << ApplyJson(target.pid, limits, outcome) << std::flush;
  if (!outcome.ok()) Say(target.context + ApplyFailureMessage(outcome, limits));
  return HelperExitCode(outcome);
}

int Main(int argc, char** argv) {
  auto args = ParseHelperArgs(std::vector<std::string>(argv + 1, argv + argc), kTestBuild);
  if (!args) {
    Say(args.error().Text() + " (see --help)");
    return kExitUsage;
  }
  if (args->mode == HelperMode::kHelp) {
    std::cout << kHelperUsage;
    return kExitOk;
  }
  if (args->mode == HelperMode::kVersion) {
    std::cout << kName << " " << kVersion << "\n";
    return kExitOk;
  }
  // Before stdin, /proc or the target are read: input cannot reach a
  // process that holds more than it needs.
  if (auto exit_status = DropOrExitStatus(LinuxCapOps(), Say)) return *exit_status;
  if (args->debug_caps) {
    auto caps = OwnCapabilities();
    if (!caps) {
      Say(caps.error().Text());
      return kExitFailure;
    }
    if (args->mode == HelperMode::kDebugCaps) {
      std::cout << *caps;
      return kExitOk;
    }
    // stdout is kept for --json and --get.
    std::string lines = *caps;
    for (size_t at = 0, nl; (nl = lines.find('\n', at)) != std::string::npos; at = nl + 1) {
      Say("debug-caps: " + lines.substr(at, nl - at));
    }
  }

  auto target = ResolveTarget(*args);
  if (!target) {
    Say(target.error().Text());
    return kExitFailure;
  }
  if (auto checked = CheckTarget(target->pid, getpid()); !checked) {
    ApplyOutcome refused;
    refused.error = checked.error();
    refused.failure = ApplyFailure::kInvalidTarget;
    if (args->json && args->mode == HelperMode::kApply) {
      std::cout << ApplyJson(target->pid, args->limits, refused);
    }
    Say(target->context + checked.error().Text());
    return kExitUsage;
  }

  ProcessOps& real = LinuxProcessOps();
#ifdef OCI_RLIMIT_HELPER_TESTING
  std::optional<PauseAfterPidfdOps> paused;
  if (args->test_pause_fifo) paused.emplace(real, *args->test_pause_fifo);
  ProcessOps& ops = paused ? static_cast<ProcessOps&>(*paused) : real;
#else
  ProcessOps& ops = real;
#endif

  if (auto r = CheckPinnedTargetKind(real, target->pid, "before its limits were set")) {
    return Refuse(*args, *target, *r);
  }
  if (args->mode == HelperMode::kGet) return Get(ops, *args, *target);
  return Apply(ops, *args, *target);
}

}  // namespace
}  // namespace ocirlimit

int main(int argc, char** argv) {
  // Nothing should throw (errors are values); if the library does (bad_alloc),
  // say so in one line instead of aborting.
  try {
    return ocirlimit::Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "oci-prlimit-helper: internal error: " << e.what() << "\n";
    return 1;
  }
}
