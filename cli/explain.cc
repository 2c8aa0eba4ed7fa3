#include "cli/explain.h"

#include <sstream>

#include "adapters/oci/facts.h"
#include "core/text.h"

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

std::string Describe(const RuleMatch& m) {
  if (m.always) return "always";
  std::vector<std::string> parts;
  for (const auto& [k, v] : m.annotations)
    parts.push_back("annotation " + Quote(k) + "=" + Quote(v));
  for (const auto& e : m.env) parts.push_back("env " + e + " set, not void/none");
  for (const auto& [k, v] : m.env_values) parts.push_back("env " + k + "=" + Quote(v));
  for (const auto& d : m.devices) parts.push_back("device " + d);
  // Kinds AND, entries of one kind OR; the text keeps them apart by kind.
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

Json MatchJson(const RuleMatch& m) {
  Json o = Json::object();
  if (m.always) o["always"] = true;
  if (!m.annotations.empty()) o["annotations"] = Pairs(m.annotations);
  if (!m.env.empty()) o["env"] = Strings(m.env);
  if (!m.env_values.empty()) o["env-values"] = Pairs(m.env_values);
  if (!m.devices.empty()) o["devices"] = Strings(m.devices);
  return o;
}

}  // namespace

std::string ValidateText(const Config& cfg) {
  std::ostringstream os;
  os << "config: " << (cfg.source.empty() ? "(none)" : cfg.source) << "\n";
  os << "every container (top-level rlimits): " << Join(cfg.rlimits) << "\n";
  if (cfg.rules.empty()) {
    os << "rules: none\n";
  } else {
    os << "rules, in order (a later match wins per type):\n";
    for (const auto& r : cfg.rules) {
      os << "  " << Quote(r.name) << ": " << Join(r.rlimits) << " when " << Describe(r.match)
         << "\n";
    }
  }
  os << "requests (" << kRequestAnnotation << "): ";
  if (cfg.requests.enabled) {
    os << "enabled, ceilings " << Join(cfg.requests.ceilings) << ", over-ceiling = "
       << (cfg.requests.over_ceiling == OverCeiling::kClamp ? "clamp" : "reject") << "\n";
  } else {
    os << "disabled\n";
  }
  os << "on-error: " << (cfg.on_error == OnError::kFail ? "fail" : "warn") << "\n";
  os << "log-file: " << (cfg.log_file.empty() ? "(none)" : cfg.log_file) << "\n";
  return os.str();
}

Json ValidateJson(const Config& cfg) {
  Json o = Json::object();
  o["ok"] = true;
  o["config"] = cfg.source;
  o["rlimits"] = Array(cfg.rlimits);
  Json rules = Json::array();
  for (const auto& r : cfg.rules) {
    rules.push_back(
        {{"name", r.name}, {"rlimits", Array(r.rlimits)}, {"match", MatchJson(r.match)}});
  }
  o["rules"] = rules;
  o["requests"] = {
      {"enabled", cfg.requests.enabled},
      {"ceilings", Array(cfg.requests.ceilings)},
      {"over-ceiling", cfg.requests.over_ceiling == OverCeiling::kClamp ? "clamp" : "reject"}};
  o["on-error"] = cfg.on_error == OnError::kFail ? "fail" : "warn";
  o["log-file"] = cfg.log_file;
  return o;
}

Result<Explanation> Explain(const Config& cfg, const Json& spec, const std::string& bundle) {
  Explanation e;
  e.bundle = bundle;
  auto facts = FactsFromSpec(spec);
  if (!facts) return facts.error();
  auto spec_rlimits = SpecRlimits(spec);
  if (!spec_rlimits) return spec_rlimits.error();
  for (const auto& r : cfg.rules) e.rules.emplace_back(r.name, RuleMatches(r, *facts));
  auto decision = Decide(cfg, *facts);
  if (!decision) {
    e.error = decision.error().Text();
    return e;
  }
  e.decision = *decision;
  for (const auto& ours : e.decision.limits) {
    Outcome o{ours, std::nullopt, ours, ours, ours};
    auto conflicts = FindConflicts({ours}, *spec_rlimits);
    if (!conflicts.empty()) {
      o.spec = conflicts[0].spec;
      o.hook_runc = conflicts[0].spec;
    }
    e.outcomes.push_back(o);
  }
  return e;
}

std::string ExplainText(const Explanation& e) {
  std::ostringstream os;
  os << "bundle: " << e.bundle << "\n";
  if (e.rules.empty()) os << "rules: none (the top-level rlimits apply to every container)\n";
  for (const auto& [name, matched] : e.rules) {
    os << "rule " << Quote(name) << ": " << (matched ? "matches" : "does not match") << "\n";
  }
  if (!e.error.empty()) {
    os << "REFUSED: " << e.error << "\n";
    return os.str();
  }
  for (const auto& n : e.decision.notes) os << "note: " << n << "\n";
  if (e.decision.sources.empty()) {
    os << "limits: none; oci-rlimit leaves this container alone\n";
    return os.str();
  }
  os << "limit                     from             spec's own entry          hook+runc            "
        "     "
        "hook+crun                 oci-rlimit-runtime\n";
  for (size_t i = 0; i < e.outcomes.size(); ++i) {
    const Outcome& o = e.outcomes[i];
    auto cell = [](const std::string& s, size_t w) {
      return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
    };
    os << cell(FormatRlimit(o.ours), 26) << cell(e.decision.sources[i].from, 17)
       << cell(o.spec ? FormatRlimit(*o.spec) : "-", 26) << cell(FormatRlimit(o.hook_runc), 26)
       << cell(FormatRlimit(o.hook_crun), 26) << FormatRlimit(o.wrapper) << "\n";
  }
  for (const auto& o : e.outcomes) {
    if (o.spec && *o.spec != o.ours) {
      os << "conflict: the spec sets " << o.ours.info().spec_type << " to "
         << FormatLimitValue(o.spec->soft) << ":" << FormatLimitValue(o.spec->hard)
         << "; runc re-applies it after hooks, so with the hook under runc the spec's value "
            "wins (crun keeps the hook's); oci-rlimit-runtime replaces the entry under both\n";
    }
  }
  return os.str();
}

Json ExplainJson(const Explanation& e) {
  Json o = Json::object();
  o["bundle"] = e.bundle;
  Json rules = Json::array();
  for (const auto& [name, matched] : e.rules)
    rules.push_back({{"name", name}, {"matched", matched}});
  o["rules"] = rules;
  o["ok"] = e.error.empty();
  if (!e.error.empty()) {
    o["error"] = e.error;
    return o;
  }
  o["notes"] = Strings(e.decision.notes);
  Json limits = Json::array();
  for (size_t i = 0; i < e.outcomes.size(); ++i) {
    const Outcome& out = e.outcomes[i];
    Json l = {{"limit", FormatRlimit(out.ours)},
              {"from", e.decision.sources[i].from},
              {"spec", out.spec ? Json(FormatRlimit(*out.spec)) : Json(nullptr)},
              {"hook_runc", FormatRlimit(out.hook_runc)},
              {"hook_crun", FormatRlimit(out.hook_crun)},
              {"runtime_wrapper", FormatRlimit(out.wrapper)},
              {"conflict", out.spec.has_value() && *out.spec != out.ours}};
    limits.push_back(l);
  }
  o["limits"] = limits;
  return o;
}

}  // namespace ocirlimit
