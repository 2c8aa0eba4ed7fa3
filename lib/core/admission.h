// The admission step: config + one container's facts + the entry point that
// asks -> what to do (docs/policy.md, "One decision on every path"). Every
// program calls this and only this: the hook (createRuntime/prestart and
// precreate), oci-rlimit-runtime (create/run and exec), `oci-rlimit
// explain`, and the NRI plugin. Pure: no syscalls, no JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/policy.h"
#include "formats/error.h"
#include "formats/rlimit.h"

namespace ocirlimit {

enum class EntryPoint {
  kHook,           // createRuntime/prestart: prlimit(2) on the init process
  kPrecreate,      // podman's precreate hook: merged into the proposed spec
  kWrapperCreate,  // oci-rlimit-runtime create/run: merged into config.json
  kWrapperExec,    // oci-rlimit-runtime exec: merged into the --process file
  kNri,            // the NRI plugin: adjusts the spec at CreateContainer
  kExplain,        // oci-rlimit explain: says what the others would do
  kAudit,          // oci-rlimit audit: a running container against the policy
};
const char* EntryPointName(EntryPoint at);

enum class Action {
  kApply,  // set `limits` (none: nothing to change)
  // on-error = "warn" excused `error`, oci-rlimit's own failure to apply what
  // the node gives (OnContainerError): start the container untouched. Admit
  // never gives it: a bad request under "warn" is kApply without the request.
  kProceedUnmodified,
  kFail,  // refuse the container with `error`
};
const char* ActionName(Action a);

struct Verdict {
  Action action = Action::kApply;
  std::vector<Rlimit> limits;        // with kApply, in a stable order
  std::vector<LimitSource> sources;  // one per entry of limits
  std::vector<std::string> matched;  // names of the rules that matched, in order
  // For stderr and the log: conflicts with the spec's own rlimits (hook
  // only), a request ignored under on-error = "warn", and the on-error
  // excuse with kProceedUnmodified.
  std::vector<std::string> warnings;
  std::vector<std::string> notes;       // clamped or ignored requests
  std::vector<RequestRecord> requests;  // every entry a request source asked for
  std::optional<Error> error;           // set with kProceedUnmodified and kFail
};

// The CRI's mark of a Kubernetes pod sandbox (pause) container: containerd's
// and CRI-O's annotation, with the value "sandbox".
inline constexpr std::string_view kContainerdContainerType = "io.kubernetes.cri.container-type";
inline constexpr std::string_view kCrioContainerType = "io.kubernetes.cri-o.ContainerType";
// Whose mark counts: the engine that made the container writes its own key
// over any value from the pod (containerd: kContainerdContainerType; CRI-O:
// kCrioContainerType), while the other key is the pod author's (CRI-O copies
// every pod annotation into the spec). kNone: no engine that makes pod
// sandboxes (docker, podman, NRI's Synchronize, which lists none); kEither:
// not known (audit's --runtime-root).
enum class SandboxMarker { kNone, kContainerd, kCrio, kEither };
// The engine's own key is "sandbox", and the other key, when present, is
// "sandbox" too: two keys that disagree make it a workload. kEither: some
// key is "sandbox" and none disagrees.
bool IsSandbox(const ContainerFacts& facts, SandboxMarker marker = SandboxMarker::kEither);

// Top-level limits, then matching rules, then the container's request
// (never for a sandbox: a pod's annotations reach its pause container too,
// and it has no use for them). A malformed or rejected request is the
// request's error, never the node's, the same way on every path: "fail"
// refuses the container; "warn" applies the top-level limits and matching
// rules without the request, with a warning. A pod dispute that cannot be
// decided (core/pod_dispute.h) refuses the container whatever on-error says.
// Errors in the admin's own config never get here: they are fatal before.
// With the "spec" source, the hook cannot lower a spec entry over its
// ceiling (runc applies the spec's entries after hooks): "fail" refuses the
// container, "warn" applies the limits and says runc will keep the spec's.
[[nodiscard]] Verdict Admit(const Config& cfg, const ContainerFacts& facts, EntryPoint at);

// Admit with RequestMode::kNodeOnly: what the node gives the container
// without its annotation requests (the spec's own entries clamped). Audit
// judges a refused or excused request's container against this.
[[nodiscard]] Verdict AdmitWithoutRequests(const Config& cfg, const ContainerFacts& facts,
                                           EntryPoint at);

// What the caller does when its own step fails after Admit (a prlimit,
// writing the spec): the same on-error rule. `error` is the failure.
[[nodiscard]] Verdict OnContainerError(const Config& cfg, Error error);

}  // namespace ocirlimit
