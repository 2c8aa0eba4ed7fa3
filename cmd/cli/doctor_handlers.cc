// The verdict on each handler, from its resolved chain (adapters/engines/
// chain.h): ok only for a chain proved to end at runc or crun, FAIL for one
// that cannot start a container, one line per handler either way.
#include <algorithm>

#include "adapters/engines/constants.h"
#include "cli/doctor_context.h"
#include "core/admission.h"
#include "core/text.h"

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

void ReportOne(Context& c, const HandlerSet& set, const Handler& h, const engines::Chain& ch) {
  const std::string head = Cat(set.kind, " ", Quote(h.name));
  if (!h.followable) {
    c.Add(set.area, CheckStatus::kInfo, Cat(head, " ", h.not_followed), h.path);
    return;
  }
  const std::string chain = ch.Text().empty() ? "" : ": " + ch.Text();
  if (ch.end == engines::ChainEnd::kMissing || ch.end == engines::ChainEnd::kLoop) {
    c.Add(set.area, CheckStatus::kFail,
          Cat(head, chain, ": ", ch.problem, ": ", h.who, " fail to start"), h.path,
          ch.end == engines::ChainEnd::kLoop
              ? "point the later runtime at runc or crun, not back at an earlier one"
              : "install it, or name a runtime that exists (absolute paths resolve anywhere)");
    return;
  }
  if (ch.end == engines::ChainEnd::kUnknown) {
    c.Add(set.area, CheckStatus::kWarn, Cat(head, chain, ": not proved: ", ch.problem), h.path);
    return;
  }
  const std::string gets = ch.wrapper ? LimitsText(c.config()) : "no oci-rlimit-runtime limits";
  const std::string nvidia = ch.nvidia ? " and NVIDIA's runtime" : ", not NVIDIA's runtime";
  const Handler* nv = NvidiaHandler(set);
  if (ch.wrapper && !ch.nvidia && nv != nullptr) {
    c.Add(
        set.area, CheckStatus::kWarn,
        Cat(head, chain, ": ", h.who, " get ", gets, nvidia, ", which ", set.kind, " ",
            Quote(nv->name), " runs: GPU pods through it start without their GPUs", NotesText(ch)),
        h.path,
        "for GPU pods, put NVIDIA's runtime first in [runtime] runtimes (oci-rlimit node "
        "install --nvidia keeps it there on every rerun)");
    return;
  }
  c.Add(set.area, ch.wrapper ? CheckStatus::kOk : CheckStatus::kInfo,
        Cat(head, chain, ": ", h.who, " get ", gets, nvidia, NotesText(ch)), h.path);
}

}  // namespace

void ResolveHandlers(Context& c, HandlerSet& set) {
  set.chains.clear();
  for (const auto& h : set.handlers) {
    set.chains.push_back(h.followable ? engines::ResolveChain(c.ops(), h.start, c.config().wrapper)
                                      : engines::Chain{});
  }
}

void ReportHandlers(Context& c, const HandlerSet& set) {
  for (size_t i = 0; i < set.handlers.size(); ++i) {
    ReportOne(c, set, set.handlers[i], set.chains[i]);
  }
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
  const engines::Chain& ch = set.chains[static_cast<size_t>(it - set.handlers.begin())];
  if (!it->followable || ch.end != engines::ChainEnd::kRuntime) {
    const bool broken = ch.end == engines::ChainEnd::kMissing || ch.end == engines::ChainEnd::kLoop;
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
