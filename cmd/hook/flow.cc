#include "hook/flow.h"

#include <utility>

#include "adapters/oci/facts.h"
#include "adapters/oci/state.h"
#include "core/admission.h"
#include "core/policy.h"
#include "core/version.h"
#include "effects/apply.h"
#include "formats/log_line.h"
#include "formats/text.h"
#include "hook/args.h"
#include "hook/chain.h"

namespace ocirlimit {
namespace {

constexpr size_t kMaxSpecBytes = 64 << 20;

constexpr const char* kUsage =
    "usage: oci-rlimit-hook [--config PATH] [createRuntime|prestart|precreate]\n"
    "       oci-rlimit-hook --help | --version\n"
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
    "Rootless engines (not the initial user namespace): a hard limit above the\n"
    "container's own is cut to it (soft capped at it) with one warning, and an\n"
    "unreadable (EACCES) config is no config plus a warning; rootless = \"fail\" refuses.\n"
    "\n"
    "Exit status: 0 applied, nothing configured, or on-error = \"warn\"; 1 failure;\n"
    "2 usage error. In chain mode, the chained hook's own status.\n";

struct BundleFile {
  std::string path;
  Result<std::string> text;
};

class HookFlow {
 public:
  HookFlow(HookOps& ops, const Config& cfg) : ops_(ops), cfg_(cfg) {}

  // The chain target is checked before we touch the container, so a broken
  // chain changes nothing. Chain failures are fatal whatever on-error says:
  // the chained hook (NVIDIA's) is what gives the container its GPUs, and a
  // container started without them fails later and more obscurely.
  int ApplyAndChain(const std::vector<std::string>& argv) {
    auto chain = ResolveChain(cfg_.chain, argv.empty() ? "" : argv[0]);
    if (!chain) return Apply(ops_.ReadStdin(kMaxStateBytes));
    auto self = ops_.Self();
    if (!self) {
      Say(self.error().Text());
      return 1;
    }
    if (auto st = CheckChainTarget(*chain, ops_.Stat(chain->path), *self); !st) {
      Say(st.error().Text());
      return 1;
    }
    auto input = ops_.ReadStdin(kMaxStateBytes);
    if (!input) {
      Say("read state from stdin for the chained hook: " + input.error().Text());
      return 1;
    }
    // With on-error = "fail", a failure has already failed the container;
    // the chained hook would set up devices for a container that never starts.
    if (int rc = Apply(input); rc != 0) return rc;
    Say(ops_.ExecChain(chain->path, argv, *input).Wrap(chain->origin).Text());
    return 1;
  }

  int Precreate() {
    auto input = ops_.ReadStdin(kMaxSpecBytes);
    if (!input) return Failed("read spec from stdin: " + input.error().Text());
    // What the runtime reads after us: a key only a case fold separates from
    // `process` or `rlimits`, or one given twice, is refused as the wrapper
    // refuses it.
    auto spec = ParseJsonObjectForRunc(*input, "precreate spec", RuncDocument::kSpec);
    std::vector<std::string> warnings;
    Result<ContainerFacts> facts = ContainerFacts{};
    if (!spec) {
      facts = spec.error();
    } else if (PolicyNeedsSpec(cfg_)) {
      facts = FactsFromSpec(*spec);
    }
    Verdict v = Decide(facts, EntryPoint::kPrecreate, warnings);
    // A rootless engine runs the container with podman's own hard limits as
    // ceilings (ours too: we are podman's child): clamp the spec's values
    // instead of handing the runtime a spec it cannot apply.
    if (v.action == Action::kApply) {
      auto fitted = FitForCaller(ops_.Process(), ops_.OwnPid(), v.limits, cfg_.rootless);
      if (fitted) {
        if (!fitted->warning.empty()) warnings.push_back(fitted->warning);
        v.limits = fitted->limits;
      } else {
        v = OnContainerError(cfg_, fitted.error());
      }
    }
    const bool refused = v.action == Action::kFail;
    Status merged =
        v.action == Action::kApply ? MergeSpecRlimits(*spec, v.limits) : Status(*v.error);
    for (const auto& w : warnings) Say("warning: " + w);
    if (!cfg_.log_file.empty()) {
      // A spec edit, written as the wrapper writes one; no container id or
      // pid exists yet, so the id is the stage.
      LogRecord r;
      r.time = ops_.Now();
      r.id = "precreate";
      r.via = "precreate";
      if (merged) r.limits = v.limits;
      r.warnings = warnings;
      if (!merged) r.error = merged.error().Text();
      if (auto logged = ops_.AppendLine(cfg_.log_file, FormatLogLine(r)); !logged) {
        Say("warning: " + logged.error().Text());
      }
    }
    if (!merged) {
      int rc = refused ? Refused(merged.error().Text()) : Failed(merged.error().Text());
      // With on-error = "warn", podman still needs a spec back: the one it sent.
      if (rc != 0) return rc;
      if (auto written = ops_.Stdout(*input); !written) {
        Say("write spec to stdout: " + written.error().Text());
        return 1;
      }
      return 0;
    }
    auto written = ops_.Stdout(spec->dump());
    if (!written) return Failed("write spec to stdout: " + written.error().Text());
    return 0;
  }

 private:
  void Say(const std::string& msg) { ops_.Stderr(std::string(kHookName) + ": " + msg); }

  // A verdict that refuses the container whatever on-error says (Admit's
  // kFail: under "fail" any failure; under "warn" a pod dispute it cannot
  // decide): said, exit 1.
  int Refused(const std::string& msg) {
    Say(msg);
    return 1;
  }

  // A failure about this container, as on-error says (OnContainerError):
  // "fail" says it and exits 1; "warn" says it once as a warning and exits 0.
  int Failed(const std::string& msg) {
    Verdict v = OnContainerError(cfg_, MakeError(msg));
    if (v.action == Action::kFail) {
      Say(msg);
      return 1;
    }
    for (const auto& w : v.warnings) Say("warning: " + w);
    return 0;
  }

  // The bundle's config.json, read once: for rules and requests (then it
  // must be readable) and for conflict warnings (then a failure is only a
  // warning, since conflicts only change what runc ends up doing).
  BundleFile ReadBundleSpec(const State& state) {
    std::string path = (state.bundle.empty() ? std::string(".") : state.bundle) + "/config.json";
    auto text = ops_.ReadFile(path, kMaxSpecBytes);
    return {std::move(path), std::move(text)};
  }

  // Parsed into a DOM only for rules and requests: the conflict check reads
  // just process.rlimits, and the DOM was half the hook's instructions on a
  // runc-spec config.json, 25 ms on a 1 MiB one (docs/performance.md).
  Result<Json> BundleSpec(const BundleFile& bundle) {
    if (!PolicyNeedsSpec(cfg_)) return MakeError("not needed without rules or requests");
    if (!bundle.text) return bundle.text.error();
    return ParseJsonObject(*bundle.text, bundle.path);
  }

  // The container's facts for Admit: from the DOM when rules or requests
  // need one; else only the spec's own rlimits, for the conflict warnings
  // (then an unreadable spec is only a warning).
  Result<ContainerFacts> Facts(const BundleFile& bundle, const Result<Json>& spec,
                               std::vector<std::string>& warnings) {
    if (PolicyNeedsSpec(cfg_)) {
      if (!spec) return spec.error().Wrap("rules and requests need the bundle's spec");
      auto facts = FactsFromSpec(*spec);
      if (!facts) return facts.error().Wrap("bundle spec");
      return facts;
    }
    const std::string cannot = "cannot check the bundle for conflicts: ";
    ContainerFacts facts;
    if (!bundle.text) {
      warnings.push_back(cannot + bundle.text.error().Text());
      return facts;
    }
    auto rlimits = SpecRlimitsOnly(*bundle.text, bundle.path);
    if (!rlimits) {
      warnings.push_back(cannot + rlimits.error().Text());
    } else {
      facts.spec_rlimits = std::move(*rlimits);
    }
    return facts;
  }

  // The one admission step (core/admission.h); notes and warnings join
  // `warnings`, except on-error's excuse, which Failed says with the error.
  Verdict Decide(const Result<ContainerFacts>& facts, EntryPoint at,
                 std::vector<std::string>& warnings) {
    if (!facts) return OnContainerError(cfg_, facts.error());
    Verdict v = Admit(cfg_, *facts, at);
    warnings.insert(warnings.end(), v.notes.begin(), v.notes.end());
    if (v.action == Action::kApply) {
      warnings.insert(warnings.end(), v.warnings.begin(), v.warnings.end());
    }
    return v;
  }

  void Log(const State& state, const std::vector<Change>& applied,
           const std::vector<std::string>& warnings, const std::string& error) {
    if (cfg_.log_file.empty()) return;
    auto logged = ops_.AppendLine(
        cfg_.log_file, FormatLogLine(ops_.Now(), state.id, state.pid, applied, warnings, error));
    if (!logged) Say("warning: " + logged.error().Text());
  }

  int Apply(const Result<std::string>& input) {
    if (cfg_.rlimits.empty() && !PolicyNeedsSpec(cfg_)) return 0;
    if (!input) return Failed("read state from stdin: " + input.error().Text());
    auto state = ParseState(*input);
    if (!state) return Failed(state.error().Text());
    if (auto timing = CheckStateTiming(*state); !timing) return Failed(timing.error().Text());

    const BundleFile bundle = ReadBundleSpec(*state);
    const Result<Json> spec = BundleSpec(bundle);
    std::vector<std::string> warnings;
    auto facts = Facts(bundle, spec, warnings);
    const Verdict v = Decide(facts, EntryPoint::kHook, warnings);
    for (const auto& w : warnings) Say("warning: " + w);
    if (v.action != Action::kApply) {
      std::string error = "container " + Quote(state->id) + ": " + v.error->Text();
      Log(*state, {}, warnings, error);
      return v.action == Action::kFail ? Refused(error) : Failed(error);
    }
    if (v.limits.empty()) {
      Log(*state, {}, warnings, "");
      return 0;
    }
    // A rootless engine (not the initial user namespace) gets what it can set.
    auto fitted = FitForCaller(ops_.Process(), state->pid, v.limits, cfg_.rootless);
    if (!fitted) {
      std::string error = "container " + Quote(state->id) + ": " + fitted.error().Text();
      Log(*state, {}, warnings, error);
      return Failed(error);
    }
    if (!fitted->warning.empty()) {
      Say("warning: " + fitted->warning);
      warnings.push_back(fitted->warning);
    }

    ApplyOutcome outcome = ApplyRlimits(ops_.Process(), state->pid, fitted->limits);
    std::string error;
    if (!outcome.ok()) error = "container " + Quote(state->id) + ": " + outcome.error->Text();
    Log(*state, outcome.applied, warnings, error);
    if (!error.empty()) return Failed(error);
    return 0;
  }

  HookOps& ops_;
  const Config& cfg_;
};

}  // namespace

int RunHook(const std::vector<std::string>& argv, HookOps& ops) {
  auto say = [&](const std::string& msg) { ops.Stderr(std::string(kHookName) + ": " + msg); };
  auto args = ParseHookArgs(argv.empty() ? std::vector<std::string>{}
                                         : std::vector<std::string>(argv.begin() + 1, argv.end()));
  if (!args) {
    say(args.error().Text());
    return 2;
  }
  if (args->mode == HookMode::kHelp) return ops.Stdout(kUsage) ? 0 : 1;
  if (args->mode == HookMode::kVersion) {
    return ops.Stdout(std::string(kHookName) + " " + kVersion + "\n") ? 0 : 1;
  }
  auto loaded = ops.LoadConfig(args->config);
  // A config we cannot read gives no on-error policy to follow: fail closed
  // (except a rootless engine's EACCES, which is no config and a warning).
  if (!loaded) {
    say(loaded.error().Text());
    return 1;
  }
  for (const auto& w : loaded->warnings) say("warning: " + w);
  HookFlow flow(ops, loaded->config);
  if (args->mode == HookMode::kPrecreate) return flow.Precreate();
  return flow.ApplyAndChain(argv);
}

}  // namespace ocirlimit
