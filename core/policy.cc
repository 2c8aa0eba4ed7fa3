#include "core/policy.h"

#include <algorithm>

#include "core/pattern.h"
#include "core/text.h"

namespace ocirlimit {
namespace {

// The value of NAME in a process.env list. Of duplicates the last counts, as
// docker and podman let a later entry replace an earlier one.
const std::string* EnvValue(const std::vector<std::string>& env, const std::string& name) {
  const std::string* found = nullptr;
  for (const auto& entry : env) {
    // "NAME" alone counts as set to nothing.
    if (entry.starts_with(name) && (entry.size() == name.size() || entry[name.size()] == '=')) {
      found = &entry;
    }
  }
  return found;
}

std::string ValueOf(const std::string& entry, const std::string& name) {
  return entry.size() > name.size() ? entry.substr(name.size() + 1) : std::string();
}

// NVIDIA's container toolkit reads these values of NVIDIA_VISIBLE_DEVICES
// as "no GPU"; the same reading keeps GPU rules off such containers.
bool IsVoid(const std::string& value) {
  std::string v = Lower(Trim(value));
  return v.empty() || v == "void" || v == "none";
}

bool AnyAnnotation(const std::vector<std::pair<std::string, std::string>>& patterns,
                   const std::map<std::string, std::string>& annotations) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const auto& p) {
    return std::any_of(annotations.begin(), annotations.end(), [&](const auto& a) {
      return RegexFullMatch(p.first, a.first) && RegexFullMatch(p.second, a.second);
    });
  });
}

bool AnyEnvSet(const std::vector<std::string>& names, const std::vector<std::string>& env) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
    const std::string* e = EnvValue(env, n);
    return e != nullptr && !IsVoid(ValueOf(*e, n));
  });
}

bool AnyEnvValue(const std::vector<std::pair<std::string, std::string>>& patterns,
                 const std::vector<std::string>& env) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const auto& p) {
    const std::string* e = EnvValue(env, p.first);
    return e != nullptr && RegexFullMatch(p.second, ValueOf(*e, p.first));
  });
}

bool AnyDevice(const std::vector<std::string>& globs, const std::vector<std::string>& devices) {
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) {
    return std::any_of(devices.begin(), devices.end(),
                       [&](const std::string& d) { return GlobMatch(g, d); });
  });
}

void Set(Decision& d, const Rlimit& r, const std::string& from) {
  for (auto& s : d.sources) {
    if (s.limit.resource == r.resource) {
      s = {r, from};
      return;
    }
  }
  d.sources.push_back({r, from});
}

const Rlimit* Ceiling(const Requests& req, int resource) {
  for (const auto& c : req.ceilings) {
    if (c.resource == resource) return &c;
  }
  return nullptr;
}

Status ApplyRequest(const Requests& req, const std::string& value, Decision& d) {
  const std::string where = "annotation " + Quote(kRequestAnnotation) + " = " + Quote(value);
  if (!req.enabled) {
    d.notes.push_back(where + ": ignored, requests are not enabled ([requests] enabled = true)");
    return Ok{};
  }
  auto asked = ParseRlimitCsv(value);
  if (!asked) return asked.error().Wrap(where);
  const bool reject = req.over_ceiling == OverCeiling::kReject;
  for (const auto& r : *asked) {
    const std::string name(r.info().name);
    const Rlimit* c = Ceiling(req, r.resource);
    if (c == nullptr) {
      std::string why = FormatRlimit(r) + ": " + name + " is not in requests.ceilings";
      if (reject) return MakeError(Cat(where, ": ", why, " (over-ceiling = \"reject\")"));
      d.notes.push_back(Cat(where, ": ", why, "; ignored"));
      continue;
    }
    Rlimit granted = r;
    granted.soft = std::min(r.soft, c->soft);
    granted.hard = std::min(r.hard, c->hard);
    if (granted != r) {
      std::string why = FormatRlimit(r) + " is over the ceiling " + FormatRlimit(*c);
      if (reject) return MakeError(Cat(where, ": ", why, " (over-ceiling = \"reject\")"));
      d.notes.push_back(Cat(where, ": ", why, "; clamped to ", FormatRlimit(granted)));
    }
    Set(d, granted, "request");
  }
  return Ok{};
}

}  // namespace

bool PolicyNeedsSpec(const Config& cfg) { return !cfg.rules.empty() || cfg.requests.enabled; }

bool RuleMatches(const Rule& rule, const ContainerFacts& facts) {
  const RuleMatch& m = rule.match;
  if (m.always) return true;
  if (!m.annotations.empty() && !AnyAnnotation(m.annotations, facts.annotations)) return false;
  if (!m.env.empty() && !AnyEnvSet(m.env, facts.env)) return false;
  if (!m.env_values.empty() && !AnyEnvValue(m.env_values, facts.env)) return false;
  if (!m.devices.empty() && !AnyDevice(m.devices, facts.devices)) return false;
  return true;
}

Result<Decision> Decide(const Config& cfg, const ContainerFacts& facts) {
  Decision d;
  for (const auto& r : cfg.rlimits) Set(d, r, "default");
  for (const auto& rule : cfg.rules) {
    if (!RuleMatches(rule, facts)) continue;
    d.matched.push_back(rule.name);
    for (const auto& r : rule.rlimits) Set(d, r, "rule " + Quote(rule.name));
  }
  if (auto it = facts.annotations.find(std::string(kRequestAnnotation));
      it != facts.annotations.end()) {
    if (auto st = ApplyRequest(cfg.requests, it->second, d); !st) return st.error();
  }
  for (const auto& s : d.sources) d.limits.push_back(s.limit);
  return d;
}

std::vector<Conflict> FindConflicts(const std::vector<Rlimit>& configured,
                                    const std::vector<Rlimit>& spec) {
  std::vector<Conflict> out;
  for (const auto& c : configured) {
    // Runtimes apply spec entries in order, so of duplicates the last sticks.
    auto it = std::find_if(spec.rbegin(), spec.rend(),
                           [&](const Rlimit& s) { return s.resource == c.resource; });
    if (it != spec.rend()) out.push_back({c, *it});
  }
  return out;
}

std::vector<std::string> ConflictWarnings(const std::vector<Conflict>& conflicts) {
  std::vector<std::string> out;
  for (const auto& c : conflicts) {
    const auto& info = c.configured.info();
    out.push_back(Cat("spec process.rlimits sets ", info.spec_type, " to ",
                      FormatLimitValue(c.spec.soft), ":", FormatLimitValue(c.spec.hard),
                      "; runc re-applies it after hooks, so under runc the spec's value wins over ",
                      FormatRlimit(c.configured),
                      " (crun keeps the hook's value); use oci-rlimit-runtime (runtime mode) to "
                      "replace the spec entry"));
  }
  return out;
}

}  // namespace ocirlimit
