#include "core/policy.h"

#include <algorithm>

#include "core/pattern.h"
#include "core/pod_dispute.h"
#include "core/requests.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

// The value of NAME in a process.env list. Of duplicates the last counts:
// that is the one the process's own getenv sees, because runc 1.1 and crun
// 1.8 both pass the process only the last entry (measured; docs/policy.md,
// "Env"), and docker and podman let a later entry replace an earlier one.
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

bool AnyAnnotation(const std::vector<std::pair<Regex, Regex>>& patterns,
                   const std::map<std::string, std::string>& annotations) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const auto& p) {
    return std::any_of(annotations.begin(), annotations.end(), [&](const auto& a) {
      return p.first.FullMatch(a.first) && p.second.FullMatch(a.second);
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
                 const std::vector<Regex>& compiled, const std::vector<std::string>& env) {
  for (size_t i = 0; i < patterns.size() && i < compiled.size(); ++i) {
    const std::string& name = patterns[i].first;
    const std::string* e = EnvValue(env, name);
    if (e != nullptr && compiled[i].FullMatch(ValueOf(*e, name))) return true;
  }
  return false;
}

bool AnyCdi(const std::vector<std::string>& globs, const std::vector<CdiName>& names) {
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) {
    return std::any_of(names.begin(), names.end(),
                       [&](const CdiName& n) { return GlobMatch(g, n.name); });
  });
}

// A qualified CDI name: vendor/class=name, each part non-empty.
bool IsCdiName(const std::string& s) {
  const size_t slash = s.find('/');
  const size_t eq = s.find('=');
  return slash != std::string::npos && slash > 0 && eq != std::string::npos && eq > slash + 1 &&
         eq + 1 < s.size();
}

void AddCdiList(const std::string& list, const std::string_view injector, const std::string& from,
                std::vector<CdiName>& out) {
  size_t at = 0;
  while (at <= list.size()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    const std::string name(Trim(list.substr(at, comma - at)));
    if (IsCdiName(name)) out.push_back({name, std::string(injector), from});
    at = comma + 1;
  }
}

bool AnyDevice(const std::vector<std::string>& globs, const std::vector<std::string>& devices) {
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) {
    return std::any_of(devices.begin(), devices.end(),
                       [&](const std::string& d) { return GlobMatch(g, d); });
  });
}

bool AnyName(const std::vector<std::string>& globs, const std::optional<std::string>& name) {
  return name && std::any_of(globs.begin(), globs.end(), [&](const std::string& g) {
           return GlobMatch(g, *name, /*pathname=*/false);
         });
}

bool UsesPod(const RuleMatch& m) { return !m.namespaces.empty() || !m.pods.empty(); }

const std::string* Find(const std::map<std::string, std::string>& a, std::string_view key) {
  auto it = a.find(std::string(key));
  return it == a.end() ? nullptr : &it->second;
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

}  // namespace

void SetPodFromRuntimeAnnotations(ContainerFacts& facts) {
  struct Field {
    const char* field;
    std::string_view containerd, crio;
    std::optional<std::string>& out;
  };
  const Field fields[] = {
      {"namespace", kContainerdSandboxNamespace, kCrioPodNamespace, facts.pod_namespace},
      {"name", kContainerdSandboxName, kCrioPodName, facts.pod_name},
  };
  facts.pod_namespace.reset();
  facts.pod_name.reset();
  facts.disputes.clear();
  for (const Field& f : fields) {
    const std::string* a = Find(facts.annotations, f.containerd);
    const std::string* b = Find(facts.annotations, f.crio);
    if (a != nullptr && b != nullptr && *a != *b) {
      facts.disputes.push_back({f.field, std::string(f.containerd), *a, std::string(f.crio), *b});
    } else if (a != nullptr) {
      f.out = *a;
    } else if (b != nullptr) {
      f.out = *b;
    }
  }
  facts.container_name.reset();
  for (std::string_view key : {kContainerdContainerName, kCrioContainerName}) {
    const std::string* n = Find(facts.annotations, key);
    if (n != nullptr && !facts.container_name) facts.container_name = *n;
  }
}

const char* FactOwnerName(FactOwner owner) { return owner == FactOwner::kNode ? "node" : "author"; }

std::vector<RuleFact> RuleFacts(const RuleMatch& m) {
  std::vector<RuleFact> out;
  if (m.always) return out;
  for (const auto& [k, v] : m.annotations)
    out.push_back({"annotations", "annotation " + Quote(k) + "=" + Quote(v), FactOwner::kAuthor});
  for (const auto& e : m.env)
    out.push_back({"env", "env " + e + " set, not void/none", FactOwner::kAuthor});
  for (const auto& [k, v] : m.env_values)
    out.push_back({"env-values", "env " + k + "=" + Quote(v), FactOwner::kAuthor});
  for (const auto& d : m.devices) out.push_back({"devices", "device " + d, FactOwner::kNode});
  for (const auto& c : m.cdi) {
    out.push_back({"cdi", "CDI device " + c + " (named to an injector in [cdi] injectors)",
                   FactOwner::kNode});
  }
  for (const auto& n : m.namespaces)
    out.push_back({"namespaces", "namespace " + n, FactOwner::kNode});
  // A pod's name is its author's choice: only within namespaces the node
  // controls does it say who the pod is.
  const FactOwner pods = m.namespaces.empty() ? FactOwner::kAuthor : FactOwner::kNode;
  for (const auto& p : m.pods) {
    out.push_back(
        {"pods",
         "pod " + p + (m.namespaces.empty() ? " (in any namespace: its author names it)" : ""),
         pods});
  }
  return out;
}

std::vector<std::string> TrustWarnings(const Config& cfg) {
  std::vector<std::string> out;
  for (const auto& rule : cfg.rules) {
    const std::vector<RuleFact> facts = RuleFacts(rule.match);
    if (facts.empty()) continue;
    std::vector<std::string> kinds;
    bool node = false;
    for (const auto& f : facts) {
      node = node || f.owner == FactOwner::kNode;
      if (std::find(kinds.begin(), kinds.end(), f.kind) == kinds.end()) kinds.push_back(f.kind);
    }
    if (node) continue;
    std::string list;
    for (const auto& k : kinds) list += (list.empty() ? "" : ", ") + k;
    out.push_back(Cat("rule ", Quote(rule.name),
                      " matches only facts the container's author sets (", list,
                      "): any container can claim its limits; add a devices or namespaces "
                      "condition (docs/policy.md, \"Trust model\")"));
  }
  return out;
}

bool PolicyNeedsSpec(const Config& cfg) { return !cfg.rules.empty() || cfg.requests.enabled; }

bool RuleMatches(const Rule& rule, const ContainerFacts& facts) {
  const RuleMatch& m = rule.match;
  if (m.always) return true;
  const std::shared_ptr<const CompiledMatch> compiled =
      m.compiled ? m.compiled : CompileRuleMatch(m);
  if (!m.annotations.empty() && !AnyAnnotation(compiled->annotations, facts.annotations)) {
    return false;
  }
  if (!m.env.empty() && !AnyEnvSet(m.env, facts.env)) return false;
  if (!m.env_values.empty() && !AnyEnvValue(m.env_values, compiled->env_values, facts.env)) {
    return false;
  }
  if (!m.devices.empty() && !AnyDevice(m.devices, facts.devices)) return false;
  if (!m.cdi.empty() && !AnyCdi(m.cdi, facts.cdi_devices)) return false;
  if (!m.namespaces.empty() && !AnyName(m.namespaces, facts.pod_namespace)) return false;
  if (!m.pods.empty() && !AnyName(m.pods, facts.pod_name)) return false;
  return true;
}

namespace {

Result<Decision> DecideOne(const Config& cfg, const ContainerFacts& facts, RequestMode mode) {
  Decision d;
  for (const auto& r : cfg.rlimits) Set(d, r, "default");
  for (const auto& rule : cfg.rules) {
    if (!RuleMatches(rule, facts)) continue;
    d.matched.push_back(rule.name);
    for (const auto& r : rule.rlimits) Set(d, r, "rule " + Quote(rule.name));
  }
  if (auto st = ApplyRequests(cfg.requests, facts, mode, d); !st) return st.error();
  for (const auto& s : d.sources) d.limits.push_back(s.limit);
  return d;
}

bool DisputeMatters(const Config& cfg, const ContainerFacts& facts) {
  return !facts.disputes.empty() && std::any_of(cfg.rules.begin(), cfg.rules.end(),
                                                [](const Rule& r) { return UsesPod(r.match); });
}

}  // namespace

CandidateMatch RuleMatchesCandidates(const Rule& rule, const ContainerFacts& facts) {
  if (facts.disputes.empty()) {
    return RuleMatches(rule, facts) ? CandidateMatch::kAll : CandidateMatch::kNone;
  }
  size_t matched = 0;
  const std::vector<PodCandidate> candidates = PodCandidates(facts);
  for (const auto& c : candidates) matched += RuleMatches(rule, c.facts) ? 1 : 0;
  if (matched == 0) return CandidateMatch::kNone;
  return matched == candidates.size() ? CandidateMatch::kAll : CandidateMatch::kSome;
}

ContainerFacts WithTrustedCdi(const Config& cfg, ContainerFacts facts) {
  std::erase_if(facts.cdi_devices, [&](const CdiName& n) {
    return std::find(cfg.cdi_injectors.begin(), cfg.cdi_injectors.end(), n.injector) ==
           cfg.cdi_injectors.end();
  });
  return facts;
}

std::vector<CdiName> NvidiaNriCdiNames(const std::map<std::string, std::string>& pod_annotations,
                                       const std::string& container) {
  std::vector<CdiName> out;
  for (const std::string& key :
       {"nvidia.cdi.k8s.io/container." + container, std::string("nvidia.cdi.k8s.io/pod"),
        std::string("nvidia.cdi.k8s.io")}) {
    auto it = pod_annotations.find(key);
    if (it == pod_annotations.end()) continue;
    AddCdiList(it->second, kCdiInjectorNvidiaNri, "pod annotation " + Quote(key), out);
    break;
  }
  return out;
}

std::vector<CdiName> NvidiaRuntimeCdiNames(const std::vector<std::string>& env) {
  std::vector<CdiName> out;
  const std::string name = "NVIDIA_VISIBLE_DEVICES";
  if (const std::string* e = EnvValue(env, name)) {
    AddCdiList(ValueOf(*e, name), kCdiInjectorNvidiaRuntime, "env " + name, out);
  }
  return out;
}

Result<Decision> Decide(const Config& cfg, const ContainerFacts& facts, RequestMode mode) {
  const bool untrusted =
      std::any_of(facts.cdi_devices.begin(), facts.cdi_devices.end(), [&](const CdiName& n) {
        return std::find(cfg.cdi_injectors.begin(), cfg.cdi_injectors.end(), n.injector) ==
               cfg.cdi_injectors.end();
      });
  if (untrusted) return Decide(cfg, WithTrustedCdi(cfg, facts), mode);
  if (!DisputeMatters(cfg, facts)) return DecideOne(cfg, facts, mode);
  const std::vector<PodCandidate> candidates = PodCandidates(facts);
  std::vector<Decision> decisions;
  for (const auto& c : candidates) {
    auto d = DecideOne(cfg, c.facts, mode);
    if (!d) return d.error();
    decisions.push_back(std::move(*d));
  }
  return LowestOfCandidates(candidates, decisions, facts);
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
