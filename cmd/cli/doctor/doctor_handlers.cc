// The verdict on each handler, from its resolved chain (adapters/engines/
// chain.h): ok only for a chain proved to end at runc or crun, FAIL for one
// that cannot start a container, one line per handler either way.
#include <algorithm>
#include <cctype>
#include <optional>

#include "adapters/engines/constants.h"
#include "cli/doctor/doctor_context.h"
#include "core/admission.h"
#include "formats/text.h"
#include "node/node_restart.h"

namespace ocirlimit::doctor {
namespace {

// What oci-rlimit-runtime gives a container that matches no rule, through
// the one admission step, and what may add to it.
std::string LimitsText(const engines::OurConfig& our) {
  if (our.state == engines::OurConfigState::kAbsent) {
    return "no limits (oci-rlimit-runtime runs, but there is no config)";
  }
  const Verdict v = Admit(our.config, ContainerFacts{}, EntryPoint::kWrapperCreate);
  std::string out = "oci-rlimit's limits (";
  if (v.limits.empty()) {
    out += "none by default";
  } else {
    std::string list;
    for (const auto& l : v.limits) list += (list.empty() ? "" : " ") + FormatRlimit(l);
    out += "by default " + list;
  }
  if (!our.config.rules.empty())
    out += Cat("; ", std::to_string(our.config.rules.size()), " rule(s) may add");
  if (our.config.requests.enabled) out += "; requests up to the ceilings";
  return out + ")";
}

std::string NotesText(const engines::Chain& chain) {
  std::string out;
  for (const auto& n : chain.notes) out += "; " + n;
  return out;
}

const Handler* NvidiaHandler(const HandlerSet& set) {
  for (size_t i = 0; i < set.handlers.size(); ++i) {
    const auto& ch = set.chains[i];
    if (ch.nvidia && !ch.wrapper && ch.end == engines::ChainEnd::kRuntime) {
      return &set.handlers[i];
    }
  }
  return nullptr;
}

// Why NVIDIA's runtime is meant to run in `h`'s chain, or "" when nothing
// says so: the handler's name, or the installer's remembered --nvidia for
// the handler it writes on an engine it installed.
std::string NvidiaIntended(const Context& c, const HandlerSet& set, const Handler& h) {
  std::string lower = h.name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char x) { return static_cast<char>(std::tolower(x)); });
  if (lower.find("nvidia") != std::string::npos) return "its name says NVIDIA";
  const auto& mode = c.installer_mode;
  if (!mode || !mode->nvidia || h.name != engines::kOurHandler) return "";
  const std::string engine = set.area == "CRI-O" ? "crio" : set.area;
  if (!mode->runtimes.empty() &&
      std::find(mode->runtimes.begin(), mode->runtimes.end(), engine) == mode->runtimes.end()) {
    return "";
  }
  return Cat("the node was installed with --nvidia (", c.installer_mode_path, ")");
}

// A proved chain through the wrapper that skips NVIDIA's runtime: FAIL when
// NVIDIA was meant to run, warn when another handler runs it. The status it
// reported, or nullopt when it reported nothing.
std::optional<CheckStatus> ReportSkipsNvidia(Context& c, const HandlerSet& set, const Handler& h,
                                             const engines::Chain& ch, const std::string& head) {
  if (!ch.wrapper || ch.nvidia) return std::nullopt;
  const std::string intended = NvidiaIntended(c, set, h);
  const std::string advice =
      "for GPU pods, put NVIDIA's runtime first in [runtime] runtimes (oci-rlimit node "
      "install --nvidia keeps it there on every rerun)";
  if (!intended.empty()) {
    c.Add(
        set.area, CheckStatus::kFail,
        Cat(head, ": ", ch.Text(), ": ", intended, ", but the chain reaches ", ch.steps.back().path,
            ", not NVIDIA's runtime: ", h.who, " start without their GPUs", NotesText(ch)),
        h.path, advice);
    return CheckStatus::kFail;
  }
  const Handler* nv = NvidiaHandler(set);
  if (nv == nullptr) return std::nullopt;
  c.Add(set.area, CheckStatus::kWarn,
        Cat(head, ": ", ch.Text(), ": ", h.who, " get ", LimitsText(c.config()),
            ", not NVIDIA's runtime, which ", set.kind, " ", Quote(nv->name),
            " runs: GPU pods through it start without their GPUs", NotesText(ch)),
        h.path, advice);
  return CheckStatus::kWarn;
}

// The one line for `h`; true when it is FAIL.
bool ReportOne(Context& c, const HandlerSet& set, const Handler& h, const engines::Chain& ch) {
  const std::string head = Cat(set.kind, " ", Quote(h.name));
  if (!h.followable) {
    c.Add(set.area, CheckStatus::kInfo, Cat(head, " ", h.not_followed), h.path);
    return false;
  }
  const std::string chain = ch.Text().empty() ? "" : ": " + ch.Text();
  if (ch.end == engines::ChainEnd::kMissing || ch.end == engines::ChainEnd::kLoop) {
    c.Add(set.area, CheckStatus::kFail,
          Cat(head, chain, ": ", ch.problem, ": ", h.who, " fail to start",
              RunningPodsAdvice(c, set.area, h, ch)),
          h.path,
          ch.end == engines::ChainEnd::kLoop
              ? "point the later runtime at runc or crun, not back at an earlier one"
              : "install it, or name a runtime that exists (absolute paths resolve anywhere)");
    return true;
  }
  if (ch.end == engines::ChainEnd::kUnknown) {
    c.Add(set.area, CheckStatus::kWarn, Cat(head, chain, ": not proved: ", ch.problem), h.path);
    return false;
  }
  if (!h.pending.empty()) {
    c.Add(set.area, CheckStatus::kWarn, Cat(head, chain, ": ", h.pending), h.path,
          "restart the engine (systemctl restart crio); a SIGHUP does not add a handler");
    return false;
  }
  if (auto s = ReportSkipsNvidia(c, set, h, ch, head)) return *s == CheckStatus::kFail;
  const std::string gets = ch.wrapper ? LimitsText(c.config()) : "no oci-rlimit-runtime limits";
  const std::string nvidia = ch.nvidia ? " and NVIDIA's runtime" : ", not NVIDIA's runtime";
  c.Add(set.area, ch.wrapper ? CheckStatus::kOk : CheckStatus::kInfo,
        Cat(head, chain, ": ", h.who, " get ", gets, nvidia, NotesText(ch)), h.path);
  return false;
}

}  // namespace

void ResolveHandlers(Context& c, HandlerSet& set) {
  set.chains.clear();
  for (const auto& h : set.handlers) {
    set.chains.push_back(h.followable ? engines::ResolveChain(c.ops(), h.start, c.config().wrapper)
                                      : engines::Chain{});
    for (const auto& step : set.chains.back().steps) {
      auto& seen = c.nvidia_runtimes;
      if (step.kind == engines::ProgramKind::kNvidia &&
          std::find(seen.begin(), seen.end(), step.path) == seen.end()) {
        seen.push_back(step.path);
      }
    }
  }
}

void ReportHandlers(Context& c, HandlerSet& set) {
  set.failed.clear();
  for (size_t i = 0; i < set.handlers.size(); ++i) {
    set.failed.push_back(ReportOne(c, set, set.handlers[i], set.chains[i]));
  }
}

void LoadInstallerMode(Context& c) {
  const std::string path = std::string(node::kStateDir) + "/mode.json";
  auto text = c.ops().ReadFile(path);
  if (!text) return;
  auto mode = node::ParseMode(*text, path);
  if (!mode) {
    c.Add("oci-rlimit", CheckStatus::kWarn,
          "the installer's mode file does not parse, so doctor cannot tell whether --nvidia was "
          "meant: " +
              mode.error().Text(),
          path, "rerun oci-rlimit node install with the flags the node should have");
    return;
  }
  c.installer_mode = std::move(*mode);
  c.installer_mode_path = path;
}

std::optional<int64_t> RestartPendingSince(Context& c, const std::string& engine) {
  auto text = c.ops().ReadFile(std::string(node::kStateDir) + "/" + node::kRestartFile);
  if (!text) return std::nullopt;
  for (const auto& p : node::ParsePending(*text)) {
    if (p.engine != engine) continue;
    const auto& starts_of = c.options().engine_starts;
    std::vector<int64_t> starts;
    if (starts_of) {
      starts = starts_of(engine);
    } else if (!c.options().rooted) {
      starts = node::EngineStartTimes("", engine);
    }
    // None running: it reads the new config when it starts.
    if (std::any_of(starts.begin(), starts.end(), [&](int64_t s) { return s < p.since; })) {
      return p.since;
    }
  }
  return std::nullopt;
}

void ReportDefault(Context& c, const HandlerSet& set, const DefaultHandler& def) {
  const std::string& name = def.name;
  const std::string& path = def.path;
  auto it = std::find_if(set.handlers.begin(), set.handlers.end(),
                         [&](const Handler& h) { return h.name == name; });
  const std::string head = Cat(def.who, " get ", set.kind, " ", Quote(name), " (", def.origin, ")");
  if (it == set.handlers.end()) {
    c.Add(set.area, CheckStatus::kFail, head + ", which is not configured: they fail to start",
          path, "define it, or set the default to a handler that exists");
    return;
  }
  const size_t index = static_cast<size_t>(it - set.handlers.begin());
  const engines::Chain& ch = set.chains[index];
  const bool failed = index < set.failed.size() && set.failed[index];
  if (!it->followable || ch.end != engines::ChainEnd::kRuntime || failed) {
    const bool broken =
        failed || ch.end == engines::ChainEnd::kMissing || ch.end == engines::ChainEnd::kLoop;
    c.Add(set.area, broken && it->followable ? CheckStatus::kFail : CheckStatus::kInfo,
          head + (broken && it->followable ? ", which fails (above)" : ", not followed (above)"),
          path);
    return;
  }
  const bool wrapper_elsewhere =
      std::any_of(set.chains.begin(), set.chains.end(), [](const auto& x) { return x.wrapper; });
  const std::string gets = ch.wrapper ? LimitsText(c.config()) : "no oci-rlimit-runtime limits";
  const bool warn = ch.nvidia && !ch.wrapper && wrapper_elsewhere;
  c.Add(set.area, warn ? CheckStatus::kWarn : CheckStatus::kInfo,
        Cat(head, ": ", gets, ch.nvidia ? " and NVIDIA's runtime" : ", not NVIDIA's runtime"), path,
        warn ? Cat("GPU pods need runtimeClassName ", engines::kOurHandler,
                   " (with NVIDIA's runtime in its chain) for their limits, or oci-rlimit-nri")
             : "");
}

}  // namespace ocirlimit::doctor
