// oci-rlimit-hook: an OCI createRuntime/prestart hook that sets the
// configured rlimits on the container's init process before user code runs;
// with the stage `precreate` (podman), it edits the proposed spec instead.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "adapters/oci/facts.h"
#include "adapters/oci/state.h"
#include "core/log_line.h"
#include "core/policy.h"
#include "core/text.h"
#include "core/version.h"
#include "effects/apply.h"
#include "effects/config_loader.h"
#include "effects/files.h"
#include "hook/chain.h"
#include "hook/chain_exec.h"
#include "hook/hook_logic.h"

namespace ocirlimit {
namespace {

constexpr const char* kName = "oci-rlimit-hook";
// Well under the shortest runtime hook timeout we know of (podman's 60 s).
constexpr int kStdinTimeoutMs = 10000;
constexpr size_t kMaxSpecBytes = 64 << 20;

constexpr const char* kUsage =
    "usage: oci-rlimit-hook [--config PATH] [createRuntime|prestart|precreate]\n"
    "\n"
    "As a createRuntime or prestart hook: reads the OCI state on stdin and sets the\n"
    "configured rlimits on the container's init process with prlimit(2).\n"
    "As a podman precreate hook: reads the proposed spec on stdin and writes it to\n"
    "stdout with the configured rlimits merged into process.rlimits.\n"
    "\n"
    "Config: --config PATH, else $OCI_RLIMIT_CONFIG, else /etc/oci-rlimit/config.toml.\n"
    "$OCI_RLIMIT_RLIMITS and $NVIDIA_CONTAINER_RUNTIME_RLIMITS (\"memlock=unlimited,...\")\n"
    "override file entries of the same type.\n"
    "\n"
    "Chain mode: with [hook] chain = \"/path/to/hook\" (or when run under the name\n"
    "nvidia-container-runtime-hook, which chains to /usr/bin/nvidia-container-runtime-hook),\n"
    "after setting the limits it execs that hook with the same argv, environment and\n"
    "state bytes. It still chains when no rlimits are configured or when on-error =\n"
    "\"warn\" excused a failure; a missing target, a chain to itself or a failed exec\n"
    "always fails. precreate never chains.\n"
    "\n"
    "Exit status: 0 applied, nothing configured, or on-error = \"warn\"; 1 failure;\n"
    "2 usage error. In chain mode, the chained hook's own status.\n";

void Say(const std::string& msg) { std::cerr << kName << ": " << msg << "\n"; }

int Failed(const Config& cfg, const std::string& msg) {
  Say(msg);
  return cfg.on_error == OnError::kWarn ? 0 : 1;
}

struct BundleFile {
  std::string path;
  Result<std::string> text;
};

// The bundle's config.json, read once: for rules and requests (then it must
// be readable) and for conflict warnings (then a failure is only a warning,
// since conflicts only change what runc ends up doing).
BundleFile ReadBundleSpec(const State& state) {
  std::string path = (state.bundle.empty() ? std::string(".") : state.bundle) + "/config.json";
  auto text = ReadFileBounded(path, kMaxSpecBytes);
  return {std::move(path), std::move(text)};
}

// Parsed into a DOM only for rules and requests: the conflict check reads
// just process.rlimits, and the DOM was half the hook's instructions on a
// runc-spec config.json, 25 ms on a 1 MiB one (docs/performance.md).
Result<Json> BundleSpec(const Config& cfg, const BundleFile& bundle) {
  if (!PolicyNeedsSpec(cfg)) return MakeError("not needed without rules or requests");
  if (!bundle.text) return bundle.text.error();
  return ParseJsonObject(*bundle.text, bundle.path);
}

// Uses the DOM when rules or requests already built one, so the text is
// parsed once either way.
std::vector<std::string> SpecWarnings(const std::vector<Rlimit>& limits, const BundleFile& bundle,
                                      const Result<Json>& spec) {
  const std::string cannot = "cannot check the bundle for conflicts: ";
  if (!bundle.text) return {cannot + bundle.text.error().Text()};
  Result<std::vector<Rlimit>> rlimits =
      spec ? SpecRlimits(*spec) : SpecRlimitsOnly(*bundle.text, bundle.path);
  if (!rlimits && spec) return {cannot + rlimits.error().Wrap(bundle.path).Text()};
  if (!rlimits) return {cannot + rlimits.error().Text()};
  return ConflictWarnings(FindConflicts(limits, *rlimits));
}

// The limits for this container (docs/policy.md); notes on requests join `warnings`.
Result<std::vector<Rlimit>> PolicyLimits(const Config& cfg, const Result<Json>& spec,
                                         std::vector<std::string>& warnings) {
  if (!PolicyNeedsSpec(cfg)) return cfg.rlimits;
  if (!spec) return spec.error().Wrap("rules and requests need the bundle's spec");
  auto facts = FactsFromSpec(*spec);
  if (!facts) return facts.error().Wrap("bundle spec");
  auto decision = Decide(cfg, *facts);
  if (!decision) return decision.error();
  for (const auto& n : decision->notes) warnings.push_back(n);
  return decision->limits;
}

void Log(const Config& cfg, const State& state, const std::vector<Change>& applied,
         const std::vector<std::string>& warnings, const std::string& error) {
  if (cfg.log_file.empty()) return;
  auto logged = AppendLine(
      cfg.log_file, FormatLogLine(Rfc3339Now(), state.id, state.pid, applied, warnings, error));
  if (!logged) Say("warning: " + logged.error().Text());
}

int RunApply(const Config& cfg, const Result<std::string>& input) {
  if (cfg.rlimits.empty() && !PolicyNeedsSpec(cfg)) return 0;
  if (!input) return Failed(cfg, "read state from stdin: " + input.error().Text());
  auto state = ParseState(*input);
  if (!state) return Failed(cfg, state.error().Text());
  if (auto timing = CheckStateTiming(*state); !timing) return Failed(cfg, timing.error().Text());

  const BundleFile bundle = ReadBundleSpec(*state);
  const Result<Json> spec = BundleSpec(cfg, bundle);
  std::vector<std::string> warnings;
  auto limits = PolicyLimits(cfg, spec, warnings);
  for (const auto& w : warnings) Say("warning: " + w);
  if (!limits) {
    std::string error = "container " + Quote(state->id) + ": " + limits.error().Text();
    Log(cfg, *state, {}, warnings, error);
    return Failed(cfg, error);
  }
  if (limits->empty()) {
    Log(cfg, *state, {}, warnings, "");
    return 0;
  }
  for (const auto& w : SpecWarnings(*limits, bundle, spec)) {
    Say("warning: " + w);
    warnings.push_back(w);
  }

  ApplyOutcome outcome = ApplyRlimits(LinuxProcessOps(), state->pid, *limits);
  std::string error;
  if (!outcome.ok()) error = "container " + Quote(state->id) + ": " + outcome.error->Text();
  Log(cfg, *state, outcome.applied, warnings, error);
  if (!error.empty()) return Failed(cfg, error);
  return 0;
}

// The chain target is checked before we touch the container, so a broken
// chain changes nothing. Chain failures are fatal whatever on-error says: the
// chained hook (NVIDIA's) is what gives the container its GPUs, and a
// container started without them fails later and more obscurely.
int RunApplyAndChain(const Config& cfg, char** argv) {
  auto chain = ResolveChain(cfg.chain, argv[0] == nullptr ? "" : argv[0]);
  if (!chain) return RunApply(cfg, ReadFdBounded(STDIN_FILENO, kMaxStateBytes, kStdinTimeoutMs));
  auto self = StatFollow("/proc/self/exe");
  if (!self) {
    Say(self.error().Text());
    return 1;
  }
  if (auto st = CheckChainTarget(*chain, StatFollow(chain->path), *self); !st) {
    Say(st.error().Text());
    return 1;
  }
  auto input = ReadFdBounded(STDIN_FILENO, kMaxStateBytes, kStdinTimeoutMs);
  if (!input) {
    Say("read state from stdin for the chained hook: " + input.error().Text());
    return 1;
  }
  // With on-error = "fail", a failure has already failed the container; the
  // chained hook would set up devices for a container that never starts.
  if (int rc = RunApply(cfg, input); rc != 0) return rc;
  Say(ExecWithStdin(chain->path, argv, *input).Wrap(chain->origin).Text());
  return 1;
}

int RunPrecreate(const Config& cfg) {
  auto input = ReadFdBounded(STDIN_FILENO, kMaxSpecBytes, kStdinTimeoutMs);
  if (!input) return Failed(cfg, "read spec from stdin: " + input.error().Text());
  auto spec = ParseJsonObject(*input, "precreate spec");
  std::vector<std::string> warnings;
  Result<std::vector<Rlimit>> limits =
      spec ? PolicyLimits(cfg, spec, warnings) : Result<std::vector<Rlimit>>(spec.error());
  for (const auto& w : warnings) Say("warning: " + w);
  if (!cfg.log_file.empty() && (!warnings.empty() || !limits)) {
    // No container id or pid exists yet; the log line says what happened.
    State none;
    none.id = "precreate";
    Log(cfg, none, {}, warnings, limits ? "" : limits.error().Text());
  }
  Status merged = limits ? MergeSpecRlimits(*spec, *limits) : Status(limits.error());
  if (!merged) {
    int rc = Failed(cfg, merged.error().Text());
    // With on-error = "warn", podman still needs a spec back: the one it sent.
    if (rc != 0) return rc;
    if (auto written = WriteAll(STDOUT_FILENO, *input); !written) {
      Say("write spec to stdout: " + written.error().Text());
      return 1;
    }
    return 0;
  }
  auto written = WriteAll(STDOUT_FILENO, spec->dump());
  if (!written) return Failed(cfg, "write spec to stdout: " + written.error().Text());
  return 0;
}

int Main(int argc, char** argv) {
  auto args = ParseHookArgs(std::vector<std::string>(argv + 1, argv + argc));
  if (!args) {
    Say(args.error().Text());
    return 2;
  }
  if (args->mode == HookMode::kHelp) {
    std::cout << kUsage;
    return 0;
  }
  if (args->mode == HookMode::kVersion) {
    std::cout << kName << " " << kVersion << "\n";
    return 0;
  }
  auto cfg = LoadConfig(args->config, ProcessEnv());
  // A config we cannot read gives no on-error policy to follow: fail closed.
  if (!cfg) {
    Say(cfg.error().Text());
    return 1;
  }
  if (args->mode == HookMode::kPrecreate) return RunPrecreate(*cfg);
  return RunApplyAndChain(*cfg, argv);
}

}  // namespace
}  // namespace ocirlimit

int main(int argc, char** argv) { return ocirlimit::Main(argc, argv); }
