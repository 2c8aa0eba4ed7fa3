#include "prlimit-helper/flow.h"

#include <optional>
#include <string>
#include <vector>

#include "adapters/oci/state.h"
#include "core/version.h"
#include "effects/apply.h"
#include "effects/target_kind.h"
#include "formats/text.h"
#include "prlimit-helper/helper_output.h"
#include "prlimit-helper/read_limits.h"

namespace ocirlimit {
namespace {

constexpr const char* kName = "oci-prlimit-helper";
// Well under the shortest runtime hook timeout we know of (podman's 60 s).
constexpr int kStdinTimeoutMs = 10000;
constexpr size_t kMaxProcStatusBytes = 1 << 16;

struct Target {
  pid_t pid = 0;
  std::string context;  // prefixes errors: `container "ID": ` with --state
};

class Flow {
 public:
  Flow(HelperOps& ops, const HelperArgs& args) : ops_(ops), args_(args) {}
  int Run();

 private:
  void Say(const std::string& msg) { ops_.Err(std::string(kName) + ": " + msg); }
  ReadFileFn Reader() {
    return [this](const std::string& path, size_t max) { return ops_.ReadProc(path, max); };
  }
  std::optional<int> DebugCaps();
  Result<Target> ResolveTarget();
  int Refuse(const TargetRefusal& r, const std::vector<Change>& applied = {});
  int RefuseInvalid(const Error& error);
  int Get(ProcessOps& ops);
  int Apply(ProcessOps& ops);

  HelperOps& ops_;
  const HelperArgs& args_;
  Target target_;
};

// --debug-caps: the capability lines, alone (exit 0) or on stderr before the
// work, since stdout is kept for --json and --get. nullopt: go on.
std::optional<int> Flow::DebugCaps() {
  auto status = ops_.ReadProc("/proc/self/status", kMaxProcStatusBytes);
  if (!status) {
    Say(status.error().Text());
    return kExitFailure;
  }
  std::string lines = CapabilityLines(*status);
  if (args_.mode == HelperMode::kDebugCaps) {
    ops_.Out(lines);
    return kExitOk;
  }
  for (size_t at = 0, nl; (nl = lines.find('\n', at)) != std::string::npos; at = nl + 1) {
    Say("debug-caps: " + lines.substr(at, nl - at));
  }
  return std::nullopt;
}

Result<Target> Flow::ResolveTarget() {
  if (args_.source == TargetSource::kPid) return Target{args_.pid, ""};
  auto input = ops_.ReadStdin(kMaxStateBytes, kStdinTimeoutMs);
  if (!input) return input.error().Wrap("read state from stdin");
  auto state = ParseState(*input);
  if (!state) return state.error();
  if (auto timing = CheckStateTiming(*state, kName); !timing) return timing.error();
  return Target{state->pid, "container " + Quote(state->id) + ": "};
}

int Flow::Refuse(const TargetRefusal& r, const std::vector<Change>& applied) {
  ApplyOutcome refused;
  refused.applied = applied;
  refused.error = r.error;
  refused.failure = r.failure;
  if (args_.json && args_.mode == HelperMode::kApply) {
    ops_.Out(ApplyJson(target_.pid, args_.limits, refused));
  }
  Say(target_.context + r.error.Text());
  return HelperExitCode(refused);
}

// pid 0, 1 or our own: a usage error, before any syscall touches it.
int Flow::RefuseInvalid(const Error& error) {
  ApplyOutcome refused;
  refused.error = error;
  refused.failure = ApplyFailure::kInvalidTarget;
  if (args_.json && args_.mode == HelperMode::kApply) {
    ops_.Out(ApplyJson(target_.pid, args_.limits, refused));
  }
  Say(target_.context + error.Text());
  return kExitUsage;
}

int Flow::Get(ProcessOps& ops) {
  ReadOutcome read = ReadRlimits(ops, target_.pid);
  if (!read.ok()) {
    Say(target_.context + read.error->Text());
    return HelperExitCode(read.failure);
  }
  ops_.Out(args_.json ? LimitsJson(target_.pid, read.limits) : LimitsText(read.limits));
  return kExitOk;
}

int Flow::Apply(ProcessOps& ops) {
  std::vector<Rlimit> limits = args_.limits;
  // As a hook (--state) of a rootless engine, not the initial user
  // namespace: the limits it can set, and one warning (core/unprivileged.h).
  // With --pid an admin asked for exactly these limits: no fitting.
  if (args_.source == TargetSource::kState) {
    auto fitted = FitForCaller(ops, target_.pid, limits, Rootless::kDegrade);
    if (!fitted) {
      Say(target_.context + fitted.error().Text());
      return kExitFailure;
    }
    if (!fitted->warning.empty()) Say(target_.context + "warning: " + fitted->warning);
    limits = fitted->limits;
  }
  ApplyOutcome outcome = ApplyRlimits(ops, target_.pid, limits);
  // A target that exited while we worked is a zombie now: prlimit(2) still
  // succeeded on it, but nothing it changed will ever run. Checked through
  // the unpaused ops: a test pause wraps only the apply's own pidfd.
  if (outcome.ok()) {
    if (auto r = CheckPinnedTargetKind(ops_.Processes(), target_.pid, "after its limits were set",
                                       Reader())) {
      return Refuse(*r, outcome.applied);
    }
  }
  if (args_.json) ops_.Out(ApplyJson(target_.pid, limits, outcome));
  if (!outcome.ok()) Say(target_.context + ApplyFailureMessage(outcome, limits));
  return HelperExitCode(outcome);
}

int Flow::Run() {
  if (args_.mode == HelperMode::kHelp) {
    ops_.Out(kHelperUsage);
    return kExitOk;
  }
  if (args_.mode == HelperMode::kVersion) {
    ops_.Out(std::string(kName) + " " + kVersion + "\n");
    return kExitOk;
  }
  // Before stdin, /proc or the target are read: input cannot reach a
  // process that holds more than it needs.
  if (auto exit_status = DropOrExitStatus(ops_.Caps(), [this](const std::string& m) { Say(m); })) {
    return *exit_status;
  }
  if (args_.debug_caps) {
    if (auto done = DebugCaps()) return *done;
  }
  auto target = ResolveTarget();
  if (!target) {
    Say(target.error().Text());
    return kExitFailure;
  }
  target_ = *target;
  if (auto checked = CheckTarget(target_.pid, ops_.Self()); !checked) {
    return RefuseInvalid(checked.error());
  }
  if (auto r = CheckPinnedTargetKind(ops_.Processes(), target_.pid, "before its limits were set",
                                     Reader())) {
    return Refuse(*r);
  }
  ProcessOps& ops = ops_.ApplyProcesses(args_);
  return args_.mode == HelperMode::kGet ? Get(ops) : Apply(ops);
}

}  // namespace

int RunHelper(const std::vector<std::string>& args, HelperOps& ops, bool test_build) {
  auto parsed = ParseHelperArgs(args, test_build);
  if (!parsed) {
    ops.Err(std::string(kName) + ": " + parsed.error().Text() + " (see --help)");
    return kExitUsage;
  }
  return Flow(ops, *parsed).Run();
}

}  // namespace ocirlimit
