#include "cli/explain/explain.h"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "adapters/engines/constants.h"
#include "adapters/engines/nvidia.h"
#include "adapters/oci/facts.h"
#include "core/admission.h"
#include "core/requests.h"
#include "core/unprivileged.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

std::string Join(const std::vector<Rlimit>& limits) {
  std::string out;
  for (const auto& r : limits) out += (out.empty() ? "" : " ") + FormatRlimit(r);
  return out.empty() ? "(none)" : out;
}

Json Array(const std::vector<Rlimit>& limits) {
  Json a = Json::array();
  for (const auto& r : limits) a.push_back(FormatRlimit(r));
  return a;
}

Json Strings(const std::vector<std::string>& v) {
  Json a = Json::array();
  for (const auto& s : v) a.push_back(s);
  return a;
}

Json Pairs(const std::vector<std::pair<std::string, std::string>>& v) {
  Json o = Json::object();
  for (const auto& [k, val] : v) o[k] = val;
  return o;
}

// Each condition with who controls it: "env X set, not void/none [author]".
std::string Describe(const std::vector<RuleFact>& facts) {
  if (facts.empty()) return "always";
  // Kinds AND, entries of one kind OR; the text keeps them apart by kind.
  std::string out;
  for (const auto& f : facts) {
    out += (out.empty() ? "" : "; ") + f.text + " [" + FactOwnerName(f.owner) + "]";
  }
  return out;
}

Json FactsJson(const std::vector<RuleFact>& facts) {
  Json a = Json::array();
  for (const auto& f : facts) {
    a.push_back({{"kind", f.kind}, {"fact", f.text}, {"owner", FactOwnerName(f.owner)}});
  }
  return a;
}

Json MatchJson(const RuleMatch& m) {
  Json o = Json::object();
  if (m.always) o["always"] = true;
  if (!m.annotations.empty()) o["annotations"] = Pairs(m.annotations);
  if (!m.env.empty()) o["env"] = Strings(m.env);
  if (!m.env_values.empty()) o["env-values"] = Pairs(m.env_values);
  if (!m.devices.empty()) o["devices"] = Strings(m.devices);
  if (!m.cdi.empty()) o["cdi"] = Strings(m.cdi);
  if (!m.namespaces.empty()) o["namespaces"] = Strings(m.namespaces);
  if (!m.pods.empty()) o["pods"] = Strings(m.pods);
  return o;
}

std::string RootlessMeaning(Rootless mode) {
  if (mode == Rootless::kFail) {
    return "a rootless engine fails the container when a hard limit would have to rise";
  }
  return "a rootless engine gets each soft limit raised up to its own hard limit, hard raises "
         "dropped, lowering kept, one warning";
}

Json SourceNames(const Requests& req) {
  Json a = Json::array();
  for (auto s : req.sources) a.push_back(RequestSourceName(s));
  return a;
}

// "spec (process.rlimits), oci-rlimit (annotation oci-rlimit.io/rlimits)".
std::string SourceList(const Requests& req) {
  std::string out;
  for (auto s : req.sources) {
    const char* what = s == RequestSource::kSpec ? "the spec's own process.rlimits"
                       : s == RequestSource::kUlimitAdjuster
                           ? "annotation ulimits.noderesource.dev/container.NAME, YAML"
                           : "annotation oci-rlimit.io/rlimits";
    out += Cat(out.empty() ? "" : ", ", RequestSourceName(s), " (", what, ")");
  }
  return out;
}

Json RequestsJson(const std::vector<RequestRecord>& records) {
  Json a = Json::array();
  for (const auto& r : records) {
    a.push_back({{"source", r.source},
                 {"where", r.where},
                 {"asked", FormatRlimit(r.asked)},
                 {"granted", r.granted ? Json(FormatRlimit(*r.granted)) : Json(nullptr)},
                 {"why", r.why}});
  }
  return a;
}

}  // namespace

std::vector<std::string> NvidiaInjectorWarnings(NodeOps& ops, const Config& cfg) {
  const auto& injectors = cfg.cdi_injectors;
  if (std::find(injectors.begin(), injectors.end(), kCdiInjectorNvidiaRuntime) == injectors.end()) {
    return {};
  }
  const std::string lead =
      "[cdi] injectors lists \"nvidia-runtime\", which this node cannot back: ";
  std::vector<std::string> installed;
  const std::string name(engines::kNvidiaRuntimeName);
  for (const std::string& n : {name, name + ".cdi", name + ".legacy"}) {
    if (auto path = ops.Which(n)) installed.push_back(*path);
  }
  const std::string operator_runtime = Cat(engines::kOperatorToolkitDir, "/", name);
  if (ops.WhichIn(operator_runtime, "")) installed.push_back(operator_runtime);
  if (installed.empty()) {
    return {lead + "no NVIDIA runtime is installed (" + name +
            " on PATH, or the GPU Operator's toolkit)"};
  }
  std::vector<std::string> out;
  for (const auto& gap : engines::NvidiaInjectorGaps(ops, installed)) out.push_back(lead + gap);
  return out;
}

std::string ValidateText(const Config& cfg, const std::vector<std::string>& node) {
  std::ostringstream os;
  os << "config: " << (cfg.source.empty() ? "(none)" : cfg.source) << "\n";
  os << "every container (top-level rlimits): " << Join(cfg.rlimits) << "\n";
  if (cfg.rules.empty()) {
    os << "rules: none\n";
  } else {
    os << "rules, in order (a later match wins per type):\n";
    for (const auto& r : cfg.rules) {
      os << "  " << Quote(r.name) << ": " << Join(r.rlimits) << " when "
         << Describe(RuleFacts(r.match)) << "\n";
    }
  }
  for (const auto& w : TrustWarnings(cfg)) os << "warning: " << w << "\n";
  for (const auto& w : node) os << "warning: " << w << "\n";
  os << "requests (" << kRequestAnnotation << "): ";
  if (cfg.requests.enabled) {
    os << "enabled, ceilings " << Join(cfg.requests.ceilings) << ", over-ceiling = "
       << (cfg.requests.over_ceiling == OverCeiling::kClamp ? "clamp" : "reject") << "\n";
    os << "request sources, in order (a later source replaces an earlier one's type): "
       << SourceList(cfg.requests) << "\n";
  } else {
    os << "disabled\n";
  }
  os << "on-error: " << (cfg.on_error == OnError::kFail ? "fail" : "warn") << "\n";
  os << "log-file: " << (cfg.log_file.empty() ? "(none)" : cfg.log_file) << "\n";
  os << "rootless: " << RootlessName(cfg.rootless) << " (" << RootlessMeaning(cfg.rootless)
     << ")\n";
  return os.str();
}

Json ValidateJson(const Config& cfg, const std::vector<std::string>& node) {
  Json o = Json::object();
  o["ok"] = true;
  o["config"] = cfg.source;
  o["rlimits"] = Array(cfg.rlimits);
  Json rules = Json::array();
  for (const auto& r : cfg.rules) {
    rules.push_back({{"name", r.name},
                     {"rlimits", Array(r.rlimits)},
                     {"match", MatchJson(r.match)},
                     {"facts", FactsJson(RuleFacts(r.match))}});
  }
  o["rules"] = rules;
  o["warnings"] = Strings(TrustWarnings(cfg));
  for (const auto& w : node) o["warnings"].push_back(w);
  o["requests"] = {
      {"enabled", cfg.requests.enabled},
      {"ceilings", Array(cfg.requests.ceilings)},
      {"over-ceiling", cfg.requests.over_ceiling == OverCeiling::kClamp ? "clamp" : "reject"},
      {"sources", SourceNames(cfg.requests)}};
  o["on-error"] = cfg.on_error == OnError::kFail ? "fail" : "warn";
  o["log-file"] = cfg.log_file;
  o["rootless"] = std::string(RootlessName(cfg.rootless));
  o["cdi-injectors"] = cfg.cdi_injectors;
  return o;
}

Result<Explanation> Explain(const Config& cfg, const Json& spec, const std::string& bundle) {
  Explanation e;
  e.bundle = bundle;
  e.rootless = cfg.rootless;
  auto facts = FactsFromSpec(spec);
  if (!facts) return facts.error();
  for (const auto& r : cfg.rules) {
    const CandidateMatch m = RuleMatchesCandidates(r, WithTrustedCdi(cfg, *facts));
    e.rules.emplace_back(r.name, m == CandidateMatch::kAll);
    e.rule_candidates.push_back(m);
    e.rule_facts.push_back(RuleFacts(r.match));
  }
  e.trust_warnings = TrustWarnings(cfg);
  e.pod_namespace = facts->pod_namespace;
  e.pod_name = facts->pod_name;
  e.disputes = facts->disputes;
  e.devices = facts->devices;
  // The same admission step as the hook and the wrapper, so explain cannot
  // disagree with them.
  const Verdict v = Admit(cfg, *facts, EntryPoint::kExplain);
  if (v.action != Action::kApply) {
    e.error = v.error->Text();
    return e;
  }
  e.decision.limits = v.limits;
  e.decision.sources = v.sources;
  e.decision.matched = v.matched;
  e.decision.notes = v.notes;
  e.decision.requests = v.requests;
  e.warnings = v.warnings;
  for (const auto& ours : e.decision.limits) {
    Outcome o{ours, std::nullopt, ours, ours, ours};
    auto conflicts = FindConflicts({ours}, facts->spec_rlimits);
    if (!conflicts.empty()) {
      o.spec = conflicts[0].spec;
      o.hook_runc = conflicts[0].spec;
      o.hook_runc_needs_cap = conflicts[0].spec.hard > ours.hard;
    }
    e.outcomes.push_back(o);
  }
  return e;
}

namespace {

// What the bundle says: its pod, the disputed facts, its devices, and which
// rules match.
void WriteFacts(std::ostream& os, const Explanation& e) {
  os << "bundle: " << e.bundle << "\n";
  if (e.rules.empty()) os << "rules: none (the top-level rlimits apply to every container)\n";
  if (e.pod_namespace || e.pod_name) {
    os << "pod (as the runtime states it): namespace " << Quote(e.pod_namespace.value_or("?"))
       << ", name " << Quote(e.pod_name.value_or("?")) << "\n";
  }
  for (const auto& d : e.disputes) {
    os << "disputed: " << DisputeText(d)
       << " (one is a pod's own annotation; rules are decided for each, the lowest wins)\n";
  }
  os << "devices (linux.devices):";
  if (e.devices.empty()) os << " none";
  for (const auto& d : e.devices) os << " " << Quote(d);
  os << "\n";
  for (size_t i = 0; i < e.rules.size(); ++i) {
    const auto& [name, matched] = e.rules[i];
    const bool some = i < e.rule_candidates.size() && e.rule_candidates[i] == CandidateMatch::kSome;
    os << "rule " << Quote(name) << ": "
       << (matched ? "matches"
           : some  ? "matches for some disputed candidates"
                   : "does not match");
    if (i < e.rule_facts.size()) os << " (" << Describe(e.rule_facts[i]) << ")";
    os << "\n";
  }
}

// One row per limit: ours, where it came from, and what each path sets.
void WriteOutcomes(std::ostream& os, const Explanation& e) {
  os << "limit                     from             spec's own entry          hook+runc            "
        "     "
        "hook+crun                 oci-rlimit-runtime\n";
  for (size_t i = 0; i < e.outcomes.size(); ++i) {
    const Outcome& o = e.outcomes[i];
    auto cell = [](const std::string& s, size_t w) {
      return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
    };
    os << cell(FormatRlimit(o.ours), 26) << cell(e.decision.sources[i].from, 17)
       << cell(o.spec ? FormatRlimit(*o.spec) : "-", 26)
       << cell(o.hook_runc_needs_cap ? "fails w/o CAP_SYS_RESOURCE" : FormatRlimit(o.hook_runc), 26)
       << cell(FormatRlimit(o.hook_crun), 26) << FormatRlimit(o.wrapper) << "\n";
  }
}

// The spec's own entries that differ from ours, and what runc makes of them.
void WriteConflicts(std::ostream& os, const Explanation& e) {
  for (const auto& o : e.outcomes) {
    if (o.spec && *o.spec != o.ours) {
      os << "conflict: the spec sets " << o.ours.info().spec_type << " to "
         << FormatLimitValue(o.spec->soft) << ":" << FormatLimitValue(o.spec->hard)
         << "; runc re-applies it after hooks, so with the hook under runc the spec's value "
            "wins (crun keeps the hook's); oci-rlimit-runtime replaces the entry under both\n";
      if (o.hook_runc_needs_cap) {
        os << "  runc must raise the hard limit back above the hook's: without CAP_SYS_RESOURCE "
              "(rootless, a restricted node) the container fails (\"error setting rlimit type "
           << o.ours.resource << ": operation not permitted\")\n";
      }
    }
  }
}

}  // namespace

std::string ExplainText(const Explanation& e) {
  std::ostringstream os;
  WriteFacts(os, e);
  for (const auto& w : e.trust_warnings) os << "warning: " << w << "\n";
  if (!e.error.empty()) {
    os << "REFUSED: " << e.error << "\n";
    return os.str();
  }
  for (const auto& r : e.decision.requests) os << "request " << RequestRecordText(r) << "\n";
  for (const auto& n : e.decision.notes) os << "note: " << n << "\n";
  for (const auto& w : e.warnings) os << "warning: " << w << "\n";
  if (e.decision.sources.empty()) {
    os << "limits: none; oci-rlimit leaves this container alone\n";
    return os.str();
  }
  WriteOutcomes(os, e);
  os << "rootless engine: " << RootlessName(e.rootless) << " (" << RootlessMeaning(e.rootless)
     << ")\n";
  WriteConflicts(os, e);
  return os.str();
}

Json ExplainJson(const Explanation& e) {
  Json o = Json::object();
  o["bundle"] = e.bundle;
  Json rules = Json::array();
  for (size_t i = 0; i < e.rules.size(); ++i) {
    const bool some = i < e.rule_candidates.size() && e.rule_candidates[i] == CandidateMatch::kSome;
    Json r = {{"name", e.rules[i].first},
              {"matched", e.rules[i].second},
              {"matched_some_candidates", some}};
    if (i < e.rule_facts.size()) r["facts"] = FactsJson(e.rule_facts[i]);
    rules.push_back(r);
  }
  o["rules"] = rules;
  o["warnings"] = Strings(e.trust_warnings);
  Json disputed = Json::array();
  for (const auto& d : e.disputes) {
    disputed.push_back(
        {{"field", d.field},
         {"claims", {{d.containerd_key, d.containerd_value}, {d.crio_key, d.crio_value}}},
         {"text", DisputeText(d)}});
  }
  o["pod"] = {{"namespace", e.pod_namespace ? Json(*e.pod_namespace) : Json(nullptr)},
              {"name", e.pod_name ? Json(*e.pod_name) : Json(nullptr)},
              {"disputed", disputed}};
  o["devices"] = Strings(e.devices);
  o["ok"] = e.error.empty();
  if (!e.error.empty()) {
    o["error"] = e.error;
    return o;
  }
  o["requests"] = RequestsJson(e.decision.requests);
  o["notes"] = Strings(e.decision.notes);
  o["verdict_warnings"] = Strings(e.warnings);
  Json limits = Json::array();
  for (size_t i = 0; i < e.outcomes.size(); ++i) {
    const Outcome& out = e.outcomes[i];
    Json l = {{"limit", FormatRlimit(out.ours)},
              {"from", e.decision.sources[i].from},
              {"spec", out.spec ? Json(FormatRlimit(*out.spec)) : Json(nullptr)},
              {"hook_runc", FormatRlimit(out.hook_runc)},
              {"hook_runc_fails_without_cap_sys_resource", out.hook_runc_needs_cap},
              {"hook_crun", FormatRlimit(out.hook_crun)},
              {"runtime_wrapper", FormatRlimit(out.wrapper)},
              {"conflict", out.spec.has_value() && *out.spec != out.ours}};
    limits.push_back(l);
  }
  o["limits"] = limits;
  o["rootless"] = std::string(RootlessName(e.rootless));
  return o;
}

}  // namespace ocirlimit
