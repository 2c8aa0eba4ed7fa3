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
#include "formats/error.h"
#include "formats/rlimit.h"

namespace ocirlimit {

// The annotation through which a container asks for limits.
inline constexpr std::string_view kRequestAnnotation = "oci-rlimit.io/rlimits";

// One pod fact that the runtimes' annotations disagree on: containerd's key
// says one value and CRI-O's another. The runtime's own key holds the truth
// and the other is a pod's own annotation, but oci-rlimit cannot tell which
// (docs/policy.md, "Disputed pod facts").
struct DisputedFact {
  std::string field;  // "namespace" or "name"
  std::string containerd_key, containerd_value;
  std::string crio_key, crio_value;
};
// "the pod's namespace: annotation "K1" = "a" but "K2" = "b"".
std::string DisputeText(const DisputedFact& d);

// One CDI device name ("nvidia.com/gpu=0") and the injector it is given to
// (kCdiInjector*), with where it was read, for explain.
struct CdiName {
  std::string name;
  std::string injector;
  std::string from;  // "pod annotation \"nvidia.cdi.k8s.io/pod\"", "env NVIDIA_VISIBLE_DEVICES"
};

// What rules look at, whoever read them (a spec, an NRI message). Who
// controls each fact is the trust model (docs/policy.md, "Trust model").
struct ContainerFacts {
  std::map<std::string, std::string> annotations;  // author: the pod's and container's own
  std::vector<std::string> env;                    // author: NAME=VALUE, as in process.env
  std::vector<std::string> devices;                // node: linux.devices[].path
  std::vector<Rlimit> spec_rlimits = {};  // author: the spec's own process.rlimits, in order
  // author: the container's name as the runtime states it (NRI's
  // Container.name, or containerd's or CRI-O's annotation); the NRI sample's
  // annotation names the container it asks for this way. Unset when unknown.
  std::optional<std::string> container_name = {};
  // CDI device names as given to an injector that turns them into devices
  // (NVIDIA's NRI plugin, NVIDIA's runtime): the author writes them, but the
  // container gets exactly those devices where the node runs that injector
  // ([cdi] injectors; Decide drops names given to others).
  std::vector<CdiName> cdi_devices = {};
  // node: the Kubernetes pod as the runtime states it (the NRI PodSandbox,
  // or the runtime's own annotations through SetPodFromRuntimeAnnotations);
  // unset when unknown or disputed.
  std::optional<std::string> pod_namespace = {};
  std::optional<std::string> pod_name = {};  // the author's choice: a node fact only with namespace
  // The fields the runtimes' annotations disagree on; each is unset above.
  std::vector<DisputedFact> disputes = {};
  // author: the pod's own annotations, where the reader tells them apart
  // from the container's (NRI's PodSandbox); unset where it cannot (a spec).
  // The "ulimit-adjuster" source reads only these, as the NRI sample does.
  std::optional<std::map<std::string, std::string>> pod_annotations = {};
};

// The annotations containerd's CRI plugin and CRI-O write into every spec
// they create, naming the pod's namespace and name.
inline constexpr std::string_view kContainerdSandboxNamespace =
    "io.kubernetes.cri.sandbox-namespace";
inline constexpr std::string_view kContainerdSandboxName = "io.kubernetes.cri.sandbox-name";
inline constexpr std::string_view kCrioPodNamespace = "io.kubernetes.pod.namespace";
inline constexpr std::string_view kCrioPodName = "io.kubernetes.pod.name";
// And the container's name (the pod spec's containers[].name).
inline constexpr std::string_view kContainerdContainerName = "io.kubernetes.cri.container-name";
inline constexpr std::string_view kCrioContainerName = "io.kubernetes.container.name";

// Sets pod_namespace and pod_name from those annotations, and container_name
// (containerd's key, else CRI-O's). Each runtime
// writes its own keys after the pod's annotations, so its value wins over a
// pod annotation of the same key; a pod annotation of the other runtime's
// key then disagrees with it. A field whose two families disagree stays
// unset and is recorded in disputes; Decide then decides for each candidate
// value and gives the lowest (docs/policy.md, "Disputed pod facts").
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

// One entry one request source asked for, and what it got (validate and
// explain show these; audit reports the request it judged against).
struct RequestRecord {
  std::string source;             // "oci-rlimit", "ulimit-adjuster", "spec"
  std::string where;              // `annotation "KEY"`, "process.rlimits"
  Rlimit asked;                   // as asked
  std::optional<Rlimit> granted;  // nullopt: not granted
  std::string why;                // "at or under the ceiling memlock=...", "clamped ...", ...
};
// "spec: process.rlimits asks memlock=1:2; granted memlock=1:2 (why)".
std::string RequestRecordText(const RequestRecord& r);

struct Decision {
  std::vector<Rlimit> limits;           // to apply, in a stable order
  std::vector<LimitSource> sources;     // one per entry of limits
  std::vector<std::string> matched;     // names of the rules that matched, in order
  std::vector<std::string> notes;       // clamped or ignored requests, for the log
  std::vector<RequestRecord> requests;  // every entry a source asked for, in source order
};

// Which request sources Decide reads. kNodeOnly: none of the annotation
// sources, and the spec's own entries clamped to the ceilings, never
// refused (the spec's entries are there whatever oci-rlimit decides): what
// a pod sandbox gets, and what a refused request leaves under on-error =
// "warn" and in audit.
enum class RequestMode { kAll, kNodeOnly };

// Why a rule did or did not match, for `oci-rlimit explain`. A disputed pod
// field is unset here, so a namespaces or pods rule does not match on it.
bool RuleMatches(const Rule& rule, const ContainerFacts& facts);

// With disputed pod facts: whether a rule matches for every candidate pod,
// for none, or for some only.
enum class CandidateMatch { kNone, kSome, kAll };
CandidateMatch RuleMatchesCandidates(const Rule& rule, const ContainerFacts& facts);

// facts without the CDI names given to an injector that [cdi] injectors does
// not list: on such a node nobody turns them into devices, so they would be
// the author's word alone. Decide applies it; explain shows its result.
ContainerFacts WithTrustedCdi(const Config& cfg, ContainerFacts facts);

// The CDI names of the NVIDIA injectors: the pod annotations NVIDIA's NRI
// plugin reads for container `container` (first found of
// nvidia.cdi.k8s.io/container.NAME, nvidia.cdi.k8s.io/pod, nvidia.cdi.k8s.io),
// and the qualified names in NVIDIA_VISIBLE_DEVICES (NVIDIA's runtime in CDI
// mode); comma lists, blanks trimmed.
std::vector<CdiName> NvidiaNriCdiNames(const std::map<std::string, std::string>& pod_annotations,
                                       const std::string& container);
std::vector<CdiName> NvidiaRuntimeCdiNames(const std::vector<std::string>& env);

// Top-level rlimits, then each matching rule in file order (a later rule's
// entry replaces an earlier same-type one), then the requests, source by
// source in requests.sources order (core/requests.h). With disputed
// pod facts (and rules that read them): that decision once per candidate pod,
// and per type the lowest of them (soft and hard apart); a type that some
// candidates set and others leave to the runtime is compared with the spec's
// own entry, and with none to compare with the decision is an error. An error
// means the container must not get these limits: a malformed request
// annotation, an over-ceiling one under over-ceiling = "reject", or that
// undecidable dispute.
Result<Decision> Decide(const Config& cfg, const ContainerFacts& facts,
                        RequestMode mode = RequestMode::kAll);

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
