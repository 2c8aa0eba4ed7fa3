#include "runtime/runtime_wrapper.h"

#include "adapters/oci/facts.h"
#include "core/policy.h"
#include "core/text.h"
#include "runtime/runtime_args.h"
#include "runtime/runtime_plan.h"

namespace ocirlimit {
namespace {

constexpr size_t kMaxSpecBytes = 64 << 20;
constexpr size_t kMaxProcessBytes = 16 << 20;
// What execvp(3) searches when PATH is unset.
constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

class Wrapper {
 public:
  Wrapper(const std::vector<std::string>& argv, RuntimeOps& ops) : argv_(argv), ops_(ops) {
    if (argv_.empty()) argv_.emplace_back(kRuntimeName);
  }

  int Run() {
    const std::vector<std::string> args(argv_.begin() + 1, argv_.end());
    auto global = ParseGlobalFlags(args);
    if (!global) return Fail(global.error());
    global_ = *global;
    if (auto loop = LoopGuardError(ops_.Getenv(kLoopGuardEnv))) return Fail(MakeError(*loop));
    auto cfg = ops_.LoadConfig();
    if (!cfg) return Fail(cfg.error());
    cfg_ = std::move(*cfg);
    auto runtime = FindRuntime();
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

    std::vector<std::string> out = argv_;
    out[0] = runtime_;
    ops_.Setenv(kLoopGuardEnv, runtime_);
    return Fail(ops_.Exec(runtime_, out));
  }

 private:
  // One line on stderr and, for containerd and docker, one in the --log file.
  int Fail(const Error& error) {
    const std::string msg = std::string(kRuntimeName) + ": " + error.Text();
    ops_.Stderr(msg);
    if (!global_.log.empty() && global_.log_format == "json") {
      if (auto logged = ops_.AppendLine(global_.log, ErrorLogLine(ops_.Now(), msg)); !logged) {
        ops_.Stderr(std::string(kRuntimeName) + ": warning: " + logged.error().Text());
      }
    }
    return 1;
  }

  // A warning goes to the --log file when there is one: under containerd,
  // docker and CRI-O the runtime's stdio is the container's, and a warning
  // there would land in the workload's own log (kubectl logs). Only a
  // runtime run by hand, without --log, warns on stderr.
  void Warn(const std::string& note) {
    const std::string msg = std::string(kRuntimeName) + ": warning: " + note;
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

  // The limits for this container (docs/policy.md). Rules and requests need
  // the spec's DOM; without them the text-level merge skips that cost.
  template <class DecideFn>
  Result<std::vector<Rlimit>> Limits(const DecideFn& decide, const std::string& id) {
    if (!PolicyNeedsSpec(cfg_)) return cfg_.rlimits;
    Result<Decision> decision = decide();
    if (!decision) return decision.error();
    for (const auto& note : decision->notes) {
      Warn(note);
      if (cfg_.log_file.empty()) continue;
      auto logged = ops_.AppendLine(cfg_.log_file,
                                    ops_.Now() + " id=" + Quote(id) + " warning=" + Quote(note));
      if (!logged) ops_.Stderr(std::string(kRuntimeName) + ": warning: " + logged.error().Text());
    }
    return decision->limits;
  }

  Status EditBundle(const CommandFlags& flags) {
    if (cfg_.rlimits.empty() && !PolicyNeedsSpec(cfg_)) return Ok{};
    const std::string path = flags.bundle + "/config.json";
    auto text = ops_.ReadFile(path, kMaxSpecBytes);
    if (!text) return text.error();
    auto limits = Limits([&] { return DecideForSpecText(cfg_, *text, path); }, flags.id);
    if (!limits) return limits.error();
    auto merged = MergeBundleSpec(*text, path, *limits);
    if (!merged) return merged.error();
    if (!*merged) return Ok{};
    return ops_.ReplaceFile(path, **merged);
  }

  Status EditProcess(const CommandFlags& flags) {
    if ((cfg_.rlimits.empty() && !PolicyNeedsSpec(cfg_)) || flags.process.empty()) return Ok{};
    auto text = ops_.ReadFile(flags.process, kMaxProcessBytes);
    if (!text) return text.error();
    auto process = ParseProcessFile(*text, flags.process);
    if (!process) return process.error();
    // A process file carries env but no annotations or devices: env rules
    // match here as at create, annotation and device rules and requests do not.
    auto limits = Limits(
        [&] {
          return DecideForSpec(cfg_, Json({{"process", *process}}), flags.process);
        },
        flags.id);
    if (!limits) return limits.error();
    if (limits->empty()) return Ok{};
    if (auto merged = MergeExecProcess(*process, flags.process, *limits); !merged) {
      return merged.error();
    }
    return ops_.ReplaceFile(flags.process, process->dump());
  }

  std::vector<std::string> argv_;
  RuntimeOps& ops_;
  GlobalFlags global_;
  Config cfg_;
  std::string runtime_;
};

}  // namespace

int RunRuntimeWrapper(const std::vector<std::string>& argv, RuntimeOps& ops) {
  return Wrapper(argv, ops).Run();
}

}  // namespace ocirlimit
