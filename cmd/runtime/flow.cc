#include "runtime/flow.h"

#include <algorithm>

#include "adapters/oci/facts.h"
#include "adapters/oci/state.h"
#include "core/admission.h"
#include "core/policy.h"
#include "core/version.h"
#include "formats/log_line.h"
#include "formats/text.h"
#include "runtime/args.h"
#include "runtime/decision.h"
#include "runtime/limit_checks.h"
#include "runtime/plan.h"
#include "runtime/records.h"
#include "runtime/usage.h"

namespace ocirlimit {
namespace {

constexpr size_t kMaxSpecBytes = 64 << 20;
constexpr size_t kMaxProcessBytes = 16 << 20;
// `RUNTIME state ID` answers in milliseconds; a wedged runtime must not hang
// an exec (docker and containerd wait on us).
constexpr int kStateTimeoutMs = 5000;
constexpr size_t kMaxStateOutputBytes = 1 << 20;
// What execvp(3) searches when PATH is unset.
constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

class Wrapper {
 public:
  Wrapper(const std::vector<std::string>& argv, RuntimeOps& ops) : argv_(argv), ops_(ops) {
    if (argv_.empty()) argv_.emplace_back(kRuntimeName);
  }

  int Run() {
    std::vector<std::string> args(argv_.begin() + 1, argv_.end());
    auto own = ParseOwnFlags(args);
    if (!own) return Fail(own.error());
    config_flag_ = own->config;
    // The rest is runc's argv, passed on as it came.
    args.erase(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(own->count));
    argv_.erase(argv_.begin() + 1, argv_.begin() + 1 + static_cast<std::ptrdiff_t>(own->count));
    auto global = ParseGlobalFlags(args);
    if (!global) return Fail(global.error());
    global_ = *global;
    if (global_.self == SelfRequest::kHelp) return Help();
    if (auto loop = LoopGuardError(ops_.Getenv(kLoopGuardEnv))) return Fail(MakeError(*loop));
    if (global_.self == SelfRequest::kVersion) ops_.Stdout(VersionLine());
    auto cfg = ops_.LoadConfig(config_flag_);
    if (!cfg) return Fail(cfg.error());
    cfg_ = std::move(cfg->config);
    // Where every warning of ours goes (Warn): never the exec session's stdio.
    for (const auto& w : cfg->warnings) Warn(w);
    load_warned_ = !cfg->warnings.empty();
    auto runtime = FindRuntime();
    // --version without a runtime fails like any other call: CRI-O and docker
    // run `RUNTIME --version` to check a runtime, and must not see one that
    // cannot run containers as healthy. Our own line is already out.
    if (!runtime && global_.self == SelfRequest::kVersion) {
      return Fail(runtime.error().Wrap("no runtime to ask for its version"));
    }
    if (!runtime && EditsNoSpec(global_.subcommand)) runtime = BaseRuntime(args, runtime.error());
    if (!runtime) return Fail(runtime.error());
    runtime_ = *runtime;

    Status edited = Ok{};
    if (global_.command == RuntimeCommand::kCreate || global_.command == RuntimeCommand::kRun ||
        global_.command == RuntimeCommand::kExec) {
      auto flags = ParseCommandFlags(args, global_.subcommand_at + 1, global_.subcommand);
      if (!flags) return Fail(flags.error());
      edited = global_.command == RuntimeCommand::kExec ? EditProcess(*flags) : EditBundle(*flags);
    }
    if (!edited) return Fail(edited.error().Wrap(global_.subcommand));
    if (global_.subcommand == "delete") Forget(args);

    std::vector<std::string> out = argv_;
    out[0] = runtime_;
    ops_.Setenv(kLoopGuardEnv, runtime_);
    return Fail(ops_.Exec(runtime_, out));
  }

 private:
  static std::string VersionLine() {
    return std::string(kRuntimeName) + " version " + kVersion + " (oci-rlimit)\n";
  }

  // Usage, and what this node's config and PATH give, without running anything.
  int Help() {
    std::string out = kUsage;
    const std::string path =
        config_flag_.value_or(ops_.Getenv(kConfigEnv).value_or(std::string(kDefaultConfigPath)));
    out += "\nHere: config " + path;
    auto cfg = ops_.LoadConfig(config_flag_);
    if (!cfg) {
      out += ": " + cfg.error().Text() + "\n";
    } else {
      cfg_ = std::move(cfg->config);
      out += ": " + std::to_string(cfg_.rlimits.size()) + " default limit(s), " +
             std::to_string(cfg_.rules.size()) + " rule(s)\n";
      auto runtime = FindRuntime();
      out += runtime ? "runtime: " + *runtime + "\n"
                     : "runtime: none: " + runtime.error().Text() + "\n";
    }
    ops_.Stdout(out + VersionLine());
    return 0;
  }

  // One line on stderr and in --log (containerd, docker); a --log that cannot take it is named
  // there.
  int Fail(const Error& error) {
    const std::string msg = std::string(kRuntimeName) + ": " + error.Text();
    std::string not_logged;
    if (!global_.log.empty() && global_.log_format == "json") {
      if (auto logged = ops_.AppendLine(global_.log, ErrorLogLine(ops_.Now(), msg)); !logged) {
        not_logged = " (warning: not logged: " + logged.error().Text() + ")";
      }
    }
    ops_.Stderr(msg + not_logged);
    return 1;
  }

  // To --log: our stdio is the container's (kubectl logs) or an exec session's.
  void Warn(const std::string& note) {
    const std::string msg = std::string(kRuntimeName) + ": warning: " + note;
    if (global_.log.empty() && global_.command == RuntimeCommand::kExec) {
      unsaid_.push_back(note);
      return;
    }
    if (global_.log.empty()) {
      ops_.Stderr(msg);
      return;
    }
    const std::string line = global_.log_format == "json" ? WarningLogLine(ops_.Now(), msg)
                                                          : WarningTextLogLine(ops_.Now(), msg);
    if (auto logged = ops_.AppendLine(global_.log, line); !logged) {
      ops_.Stderr(std::string(kRuntimeName) + ": warning: " + logged.error().Text());
    }
  }

  Result<std::string> FindRuntime() {
    auto self = ops_.Self();
    if (!self) return self.error().Wrap("identify our own executable");
    const std::string path = ops_.Getenv("PATH").value_or(kDefaultPath);
    return ResolveRuntime(cfg_.runtimes, path, *self,
                          [this](const std::string& p) { return ops_.Probe(p); });
  }

  // For a lifecycle command when none of [runtime] runtimes is left
  // (BaseRuntimeFor); create and run never come here.
  Result<std::string> BaseRuntime(const std::vector<std::string>& args, const Error& why) {
    auto self = ops_.Self();
    auto flags = ParseCommandFlags(args, global_.subcommand_at + 1, global_.subcommand);
    if (!self || !flags) return why;
    auto base = BaseRuntimeFor(
        flags->id, global_.root, ops_.Getenv("PATH").value_or(kDefaultPath), *self,
        [this](const std::string& p) { return ops_.Probe(p); },
        [this](const std::string& p) { return ops_.ReadFile(p, kMaxStateOutputBytes).ok(); });
    if (!base) return why;
    Warn(Cat(why.Text(), "; ", global_.subcommand, " goes to the base runtime ", *base,
             " so the container can still be stopped and removed"));
    return *base;
  }

  Status FitToUs(Verdict& v) { return FitToCaller(ops_, cfg_.rootless, v); }
  Status CheckRaisable(const Verdict& v) { return CheckRaisableHere(ops_, v); }

  // One line per decision in the config's log-file, as every program writes it.
  void Log(LogRecord record) {
    for (auto& note : unsaid_) {
      if (std::find(record.warnings.begin(), record.warnings.end(), note) ==
          record.warnings.end()) {
        record.warnings.push_back(std::move(note));
      }
    }
    unsaid_.clear();
    if (cfg_.log_file.empty()) return;
    record.time = ops_.Now();
    if (auto logged = ops_.AppendLine(cfg_.log_file, FormatLogLine(record)); !logged) {
      Warn(logged.error().Text());
    }
  }

  // What on-error makes of a failure to admit or edit one container: "fail"
  // refuses it, "warn" forwards the unmodified spec (or process file) with a
  // warning, exactly as the hook starts the container untouched.
  // `refused`: Admit refused the container (kFail), which on-error does not
  // excuse (a pod dispute it cannot decide, or any failure under "fail").
  Status ContainerFailed(const CommandFlags& flags, const Error& error, bool refused = false) {
    Verdict v = OnContainerError(cfg_, error);
    if (refused) {
      v.action = Action::kFail;
      v.warnings.clear();
    }
    LogRecord r;
    r.id = flags.id;
    r.via = global_.subcommand;
    r.warnings = v.warnings;
    r.error = error.Text();
    Log(std::move(r));
    if (v.action == Action::kFail) return error;
    for (const auto& w : v.warnings) Warn(w);
    return Ok{};
  }

  // Notes and warnings of a verdict that applies, on stderr and in the log.
  void Report(const CommandFlags& flags, const Verdict& v) {
    std::vector<std::string> said = v.notes;
    said.insert(said.end(), v.warnings.begin(), v.warnings.end());
    for (const auto& s : said) Warn(s);
    LogRecord r;
    r.id = flags.id;
    r.via = global_.subcommand;
    r.limits = v.limits;
    r.warnings = std::move(said);
    Log(std::move(r));
  }

  bool NothingConfigured() const { return cfg_.rlimits.empty() && !PolicyNeedsSpec(cfg_); }

  std::optional<DecisionRecord> Recorded(const std::string& id) {
    return ReadRecord(ops_, id, [this](const std::string& w) { Warn(w); });
  }
  void Forget(const std::vector<std::string>& args) {
    RemoveRecord(ops_, args, global_.subcommand_at, [this](const std::string& w) { Warn(w); });
  }
  void Remember(const std::string& id, const std::vector<Rlimit>& limits) {
    WriteRecord(ops_, id, cfg_, limits, [this](const std::string& w) { Warn(w); });
  }

  Status EditBundle(const CommandFlags& flags) {
    std::optional<DecisionRecord> recorded = Recorded(flags.id);
    if (recorded && !DefersTo(*recorded)) recorded.reset();
    if (!recorded && NothingConfigured()) {
      // No file and no environment entry: say so once per container (on
      // create, not on every exec), where the engine keeps our words.
      if (cfg_.source.empty() && !load_warned_) {
        Warn("no config (" + std::string(kDefaultConfigPath) + ", its config.d/, $" +
             std::string(kRlimitsEnv) + "): " + Quote(flags.id) + " keeps the runtime's limits");
      }
      Remember(flags.id, {});
      return Ok{};
    }
    const std::string path = flags.bundle + "/config.json";
    auto text = ops_.ReadFile(path, kMaxSpecBytes);
    if (!text) return ContainerFailed(flags, text.error());
    Verdict v;
    if (recorded) {
      v = RecordedVerdict(*recorded, global_.subcommand);
    } else {
      auto decided = DecideCreate(flags, path, *text);
      if (!decided) return decided.error();
      if (!*decided) return Ok{};  // on-error = "warn": the spec goes on unmodified
      v = std::move(**decided);
    }
    if (auto raisable = CheckRaisable(v); !raisable) {
      return ContainerFailed(flags, raisable.error());
    }
    Report(flags, v);
    if (!recorded) Remember(flags.id, v.limits);
    auto merged = MergeBundleSpec(*text, path, v.limits);
    if (!merged) return ContainerFailed(flags, merged.error());
    // Nothing to add, or nothing that changes a byte: the file (and its
    // inode) stays as it is.
    if (!*merged || **merged == *text) return Ok{};
    if (auto replaced = ops_.ReplaceFile(path, **merged); !replaced) {
      return ContainerFailed(flags, replaced.error());
    }
    return Ok{};
  }

  // ContainerFailed for a step that would give a verdict: an error refuses
  // the container, nullopt lets it go on unmodified (on-error = "warn").
  Result<std::optional<Verdict>> Failed(const CommandFlags& flags, const Error& error,
                                        bool refused = false) {
    if (auto st = ContainerFailed(flags, error, refused); !st) return st.error();
    return std::optional<Verdict>{};
  }

  // The wrapper's own decision at create, from the spec's facts.
  Result<std::optional<Verdict>> DecideCreate(const CommandFlags& flags, const std::string& path,
                                              const std::string& text) {
    // Rules and requests need the spec's facts; without them the text-level
    // merge is the only parse.
    ContainerFacts facts;
    if (PolicyNeedsSpec(cfg_)) {
      auto spec = ParseJsonObject(text, Quote(path));
      if (!spec) return Failed(flags, spec.error());
      auto f = FactsFromSpec(*spec);
      if (!f) return Failed(flags, f.error().Wrap(Quote(path)));
      facts = std::move(*f);
    }
    Verdict v = Admit(cfg_, facts, EntryPoint::kWrapperCreate);
    if (v.action != Action::kApply) return Failed(flags, *v.error, v.action == Action::kFail);
    if (auto fitted = FitToUs(v); !fitted) return Failed(flags, fitted.error());
    return std::optional<Verdict>(std::move(v));
  }

  // The facts of the container an exec joins: its bundle's config.json, found
  // through `RUNTIME --root R state ID`, so an exec session gets what the
  // container's init got (requests, annotation and device rules included).
  Result<ContainerFacts> ContainerSpecFacts(const std::string& id) {
    std::vector<std::string> argv = {runtime_};
    if (!global_.root.empty()) argv.insert(argv.end(), {"--root", global_.root});
    argv.insert(argv.end(), {"state", id});
    auto state = ops_.RunCaptured(argv, kStateTimeoutMs, kMaxStateOutputBytes);
    if (!state) return state.error();
    auto bundle = BundleFromRuntimeState(*state);
    if (!bundle) return bundle.error();
    const std::string path = *bundle + "/config.json";
    auto text = ops_.ReadFile(path, kMaxSpecBytes);
    if (!text) return text.error();
    auto spec = ParseJsonObject(*text, Quote(path));
    if (!spec) return spec.error();
    auto facts = FactsFromSpec(*spec);
    if (!facts) return facts.error().Wrap(Quote(path));
    return facts;
  }

  Result<std::optional<Verdict>> DecideExec(const CommandFlags& flags, const Json& process) {
    ContainerFacts facts;
    if (PolicyNeedsSpec(cfg_)) {
      auto from_spec = ContainerSpecFacts(flags.id);
      if (from_spec) {
        facts = std::move(*from_spec);
      } else {
        // A process file carries env but no annotations or devices: env
        // rules still match, annotation and device rules and requests do not.
        Warn("exec " + Quote(flags.id) + ": cannot read the container's spec (" +
             from_spec.error().Text() + "); deciding from the --process file's env alone");
        auto f = FactsFromSpec(Json({{"process", process}}));
        if (!f) return Failed(flags, f.error().Wrap("--process " + Quote(flags.process)));
        facts = std::move(*f);
      }
    }
    // The exec'd process gets the --process file's own entries: those are
    // what the "spec" request source judges, over the container's.
    if (auto own = ProcessRlimits(process, "--process " + Quote(flags.process)); own) {
      facts.spec_rlimits = OverrideRlimits(std::move(facts.spec_rlimits), *own);
    }
    Verdict v = Admit(cfg_, facts, EntryPoint::kWrapperExec);
    if (v.action != Action::kApply) return Failed(flags, *v.error, v.action == Action::kFail);
    if (auto fitted = FitToUs(v); !fitted) return Failed(flags, fitted.error());
    return std::optional<Verdict>(std::move(v));
  }

  // An exec session gets its container's recorded decision; a container
  // without one (created before the upgrade, or by a rootless engine) is
  // decided from its spec's facts, as at create.
  Status EditProcess(const CommandFlags& flags) {
    if (flags.process.empty()) return Ok{};
    const std::optional<DecisionRecord> recorded = Recorded(flags.id);
    if (!recorded && NothingConfigured()) return Ok{};
    auto text = ops_.ReadFile(flags.process, kMaxProcessBytes);
    if (!text) return ContainerFailed(flags, text.error());
    auto process = ParseProcessFile(*text, flags.process);
    if (!process) return ContainerFailed(flags, process.error());
    Verdict v;
    if (recorded) {
      v = RecordedVerdict(*recorded, "exec");
    } else {
      auto decided = DecideExec(flags, *process);
      if (!decided) return decided.error();
      if (!*decided) return Ok{};  // on-error = "warn": the process file goes on unmodified
      v = std::move(**decided);
    }
    if (auto raisable = CheckRaisable(v); !raisable) {
      return ContainerFailed(flags, raisable.error());
    }
    Report(flags, v);
    if (v.limits.empty()) return Ok{};
    if (auto merged = MergeExecProcess(*process, flags.process, v.limits); !merged) {
      return ContainerFailed(flags, merged.error());
    }
    std::string out = process->dump();
    if (out == *text) return Ok{};
    if (auto replaced = ops_.ReplaceFile(flags.process, out); !replaced) {
      return ContainerFailed(flags, replaced.error());
    }
    return Ok{};
  }

  std::vector<std::string> argv_;
  RuntimeOps& ops_;
  GlobalFlags global_;
  std::optional<std::string> config_flag_;  // --config, ours
  Config cfg_;
  bool load_warned_ = false;  // loading the config already warned (an unreadable file)
  std::string runtime_;
  std::vector<std::string> unsaid_;  // an exec's warnings without --log (Warn)
};

}  // namespace

int RunRuntimeWrapper(const std::vector<std::string>& argv, RuntimeOps& ops) {
  return Wrapper(argv, ops).Run();
}

}  // namespace ocirlimit
