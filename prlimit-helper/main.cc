// oci-prlimit-helper: sets rlimits on another process (a container's init)
// from the host, holding no capability but CAP_SYS_RESOURCE. Also usable
// as a createRuntime/prestart hook with --state.
#include <unistd.h>

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "adapters/oci/state.h"
#include "core/text.h"
#include "core/version.h"
#include "effects/apply.h"
#include "effects/files.h"
#include "prlimit-helper/helper_args.h"
#include "prlimit-helper/helper_output.h"
#include "prlimit-helper/privileges.h"
#include "prlimit-helper/read_limits.h"
#include "prlimit-helper/test_pause.h"

namespace ocirlimit {
namespace {

constexpr const char* kName = "oci-prlimit-helper";
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
  ApplyOutcome outcome = ApplyRlimits(ops, target.pid, args.limits);
  if (args.json) std::cout << ApplyJson(target.pid, args.limits, outcome) << std::flush;
  if (!outcome.ok()) Say(target.context + ApplyFailureMessage(outcome, args.limits));
  return HelperExitCode(outcome);
}

int Main(int argc, char** argv) {
  auto args = ParseHelperArgs(std::vector<std::string>(argv + 1, argv + argc));
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
  if (auto dropped = DropToSysResource(); !dropped) {
    Say(dropped.error().Text());
    return kExitFailure;
  }
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
  std::optional<PauseAfterPidfdOps> paused;
  if (args->test_pause_fifo) paused.emplace(real, *args->test_pause_fifo);
  ProcessOps& ops = paused ? static_cast<ProcessOps&>(*paused) : real;

  if (args->mode == HelperMode::kGet) return Get(ops, *args, *target);
  return Apply(ops, *args, *target);
}

}  // namespace
}  // namespace ocirlimit

int main(int argc, char** argv) { return ocirlimit::Main(argc, argv); }
