#include "core/pod_dispute.h"

#include <algorithm>
#include <optional>

#include "formats/text.h"

namespace ocirlimit {
namespace {

const LimitSource* SourceOf(const Decision& d, int resource) {
  for (const auto& s : d.sources) {
    if (s.limit.resource == resource) return &s;
  }
  return nullptr;
}

// Runtimes apply spec entries in order, so of duplicates the last counts.
const Rlimit* SpecEntry(const std::vector<Rlimit>& spec, int resource) {
  auto it = std::find_if(spec.rbegin(), spec.rend(),
                         [&](const Rlimit& r) { return r.resource == resource; });
  return it == spec.rend() ? nullptr : &*it;
}

std::vector<int> TypesInOrder(const std::vector<Decision>& decisions) {
  std::vector<int> types;
  for (const auto& d : decisions) {
    for (const auto& s : d.sources) {
      if (std::find(types.begin(), types.end(), s.limit.resource) == types.end()) {
        types.push_back(s.limit.resource);
      }
    }
  }
  return types;
}

// The lowest of one type over the candidates, or the error that it cannot
// be told.
Result<LimitSource> LowestOfType(int resource, const std::vector<PodCandidate>& candidates,
                                 const std::vector<Decision>& decisions,
                                 const ContainerFacts& facts) {
  const Rlimit* spec = SpecEntry(facts.spec_rlimits, resource);
  std::vector<LimitSource> values;
  for (size_t i = 0; i < decisions.size(); ++i) {
    if (const LimitSource* s = SourceOf(decisions[i], resource)) {
      values.push_back(*s);
      continue;
    }
    if (spec == nullptr) {
      const LimitSource* other = nullptr;
      for (const auto& d : decisions) other = other != nullptr ? other : SourceOf(d, resource);
      const std::string name(other->limit.info().name);
      return MakeError(Cat("disputed pod facts (", DisputesText(facts.disputes), "): for ",
                           candidates[i].label, " oci-rlimit leaves ", name,
                           " to the runtime, for another it sets ", FormatRlimit(other->limit),
                           ", and the spec sets no ", name,
                           " to compare with, so the lower cannot be told: refused"));
    }
    values.push_back({*spec, "the spec's own entry"});
  }
  Rlimit low = values.front().limit;
  for (const auto& v : values) {
    low.soft = std::min(low.soft, v.limit.soft);
    low.hard = std::min(low.hard, v.limit.hard);
  }
  for (const auto& v : values) {
    if (v.limit == low) return LimitSource{low, v.from};
  }
  return LimitSource{low, "the lowest of the disputed pod's candidates"};
}

}  // namespace

std::string DisputeText(const DisputedFact& d) {
  return Cat("the pod's ", d.field, ": annotation ", Quote(d.containerd_key), " = ",
             Quote(d.containerd_value), " but ", Quote(d.crio_key), " = ", Quote(d.crio_value));
}

std::string DisputesText(const std::vector<DisputedFact>& disputes) {
  std::string out;
  for (const auto& d : disputes) out += (out.empty() ? "" : "; ") + DisputeText(d);
  return out;
}

std::vector<PodCandidate> PodCandidates(const ContainerFacts& facts) {
  std::vector<std::optional<std::string>> namespaces = {facts.pod_namespace};
  std::vector<std::optional<std::string>> names = {facts.pod_name};
  for (const auto& d : facts.disputes) {
    (d.field == "namespace" ? namespaces : names) = {d.containerd_value, d.crio_value};
  }
  std::vector<PodCandidate> out;
  for (const auto& ns : namespaces) {
    for (const auto& name : names) {
      PodCandidate c{facts, Cat("namespace ", ns ? Quote(*ns) : "(none)", ", name ",
                                name ? Quote(*name) : "(none)")};
      c.facts.pod_namespace = ns;
      c.facts.pod_name = name;
      c.facts.disputes.clear();
      out.push_back(std::move(c));
    }
  }
  return out;
}

Result<Decision> LowestOfCandidates(const std::vector<PodCandidate>& candidates,
                                    const std::vector<Decision>& decisions,
                                    const ContainerFacts& facts) {
  Decision out;
  for (int resource : TypesInOrder(decisions)) {
    auto low = LowestOfType(resource, candidates, decisions, facts);
    if (!low) return low.error();
    out.sources.push_back(*low);
    out.limits.push_back(low->limit);
  }
  // Matched: the rules that matched for every candidate.
  for (const auto& name : decisions.front().matched) {
    if (std::all_of(decisions.begin(), decisions.end(), [&](const Decision& d) {
          return std::find(d.matched.begin(), d.matched.end(), name) != d.matched.end();
        })) {
      out.matched.push_back(name);
    }
  }
  // Requests read no pod fact: every candidate's are the same.
  out.requests = decisions.front().requests;
  std::string labels;
  for (const auto& c : candidates) labels += (labels.empty() ? "" : "; ") + c.label;
  out.notes.push_back(Cat("disputed pod facts (", DisputesText(facts.disputes),
                          "): one of each is a pod's own annotation; decided for every "
                          "candidate (",
                          labels, "), the container gets the lowest per type"));
  for (const auto& d : decisions) {
    for (const auto& n : d.notes) {
      if (std::find(out.notes.begin(), out.notes.end(), n) == out.notes.end()) {
        out.notes.push_back(n);
      }
    }
  }
  return out;
}

}  // namespace ocirlimit
