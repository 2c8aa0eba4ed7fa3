// Which rlimits one container gets: the top-level default, then the
// [[rule]]s that match it, then its own request under the admin's ceilings
// (docs/policy.md). Pure: the caller hands in the container's facts
// (adapters/oci/facts.h reads them from a spec).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/error.h"
#include "core/rlimit.h"

namespace ocirlimit {

// The annotation through which a container asks for limits.
inline constexpr std::string_view kRequestAnnotation = "oci-rlimit.io/rlimits";

// What rules look at, whoever read them (a spec, an NRI message). Who
// controls each fact is the trust model (docs/policy.md, "Trust model").
struct ContainerFacts {
  std::map<std::string, std::string> annotations;  // author: the pod's and container's own
  std::vector<std::string> env;                    // author: NAME=VALUE, as in process.env
  std::vector<std::string> devices;                // node: linux.devices[].path
  std::vector<Rlimit> spec_rlimits = {};           // the spec's own process.rlimits, in order
  // node: the Kubernetes pod as the runtime states it (the NRI PodSandbox,
  // or the runtime's own annotations through SetPodFromRuntimeAnnotations);
  // unset when unknown or in doubt.
  std::optional<std::string> pod_namespace = {};
  std::optional<std::string> pod_name = {};
  // Why the pod is in doubt (the runtimes' annotations disagree), or empty.
  std::string pod_doubt = {};
};

// The annotations containerd's CRI plugin and CRI-O write into every spec
// they create, naming the pod's namespace and name.
inline constexpr std::string_view kContainerdSandboxNamespace =
    "io.kubernetes.cri.sandbox-namespace";
inline constexpr std::string_view kContainerdSandboxName = "io.kubernetes.cri.sandbox-name";
inline constexpr std::string_view kCrioPodNamespace = "io.kubernetes.pod.namespace";
inline constexpr std::string_view kCrioPodName = "io.kubernetes.pod.name";

// Sets pod_namespace and pod_name from those annotations. Each runtime
// writes its own keys after the pod's annotations, so its value wins over a
// pod annotation of the same key; a pod annotation of the other runtime's
// key then disagrees with it. When the two families disagree, neither
// counts: pod_namespace and pod_name stay unset and pod_doubt says why.
void SetPodFromRuntimeAnnotations(ContainerFacts& facts);

// Who controls a fact a rule can match.
enum class FactOwner {
  kAuthor,  // the container or pod author: env, annotations, the image
  kNode,    // the node: the runtime, the device plugin, the kubelet
};
const char* FactOwnerName(FactOwner owner);

// One condition of a rule, described for validate and explain.
struct RuleFact {
  std::string kind;  // "env", "env-values", "annotations", "devices", "namespaces", "pods"
  std::string text;  // e.g. "env NVIDIA_VISIBLE_DEVICES set, not void/none"
  FactOwner owner;
};
// Empty for always = true.
std::vector<RuleFact> RuleFacts(const RuleMatch& m);

// One line per rule whose conditions are all author-controlled: any
// container can set those facts and get the rule's limits.
std::vector<std::string> TrustWarnings(const Config& cfg);

// True when deciding needs the container's spec: rules that look at it, or
// requests. Without either, every container gets the top-level rlimits.
bool PolicyNeedsSpec(const Config& cfg);

// Where one decided limit came from.
struct LimitSource {
  Rlimit limit;
  std::string from;  // "default", "rule \"gpu\"", "request"
};

struct Decision {
  std::vector<Rlimit> limits;        // to apply, in a stable order
  std::vector<LimitSource> sources;  // one per entry of limits
  std::vector<std::string> matched;  // names of the rules that matched, in order
  std::vector<std::string> notes;    // clamped or ignored requests, for the log
};

// Why a rule did or did not match, for `oci-rlimit explain`.
bool RuleMatches(const Rule& rule, const ContainerFacts& facts);

// Top-level rlimits, then each matching rule in file order (a later rule's
// entry replaces an earlier same-type one), then the request. An error means
// the container must not get its limits: a malformed request annotation, or
// an over-ceiling one under over-ceiling = "reject".
Result<Decision> Decide(const Config& cfg, const ContainerFacts& facts);

// A configured limit that the spec also sets for the same type.
struct Conflict {
  Rlimit configured;
  Rlimit spec;
};
std::vector<Conflict> FindConflicts(const std::vector<Rlimit>& configured,
                                    const std::vector<Rlimit>& spec);

// One warning per configured type that the spec sets too: runc re-applies
// the spec's value after hooks, crun keeps ours.
std::vector<std::string> ConflictWarnings(const std::vector<Conflict>& conflicts);

}  // namespace ocirlimit
