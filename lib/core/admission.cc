#include "core/admission.h"

#include <algorithm>
#include <cstddef>
#include <optional>

#include "core/requests.h"
#include "formats/text.h"

namespace ocirlimit {

const char* EntryPointName(EntryPoint at) {
  switch (at) {
    case EntryPoint::kHook:
      return "hook";
    case EntryPoint::kPrecreate:
      return "precreate";
    case EntryPoint::kWrapperCreate:
      return "create";
    case EntryPoint::kWrapperExec:
      return "exec";
    case EntryPoint::kNri:
      return "nri";
    case EntryPoint::kExplain:
      return "explain";
    case EntryPoint::kAudit:
      return "audit";
  }
  return "?";
}

const char* ActionName(Action a) {
  switch (a) {
    case Action::kApply:
      return "apply";
    case Action::kProceedUnmodified:
      return "proceed-unmodified";
    case Action::kFail:
      return "fail";
  }
  return "?";
}

bool IsSandbox(const ContainerFacts& facts, SandboxMarker marker) {
  auto value = [&](std::string_view key) -> std::optional<std::string> {
    auto it = facts.annotations.find(std::string(key));
    if (it == facts.annotations.end()) return std::nullopt;
    return it->second;
  };
  const auto containerd = value(kContainerdContainerType);
  const auto crio = value(kCrioContainerType);
  // Any key present and not "sandbox" disagrees: a workload.
  if ((containerd && *containerd != "sandbox") || (crio && *crio != "sandbox")) return false;
  switch (marker) {
    case SandboxMarker::kNone:
      return false;
    case SandboxMarker::kContainerd:
      return containerd.has_value();
    case SandboxMarker::kCrio:
      return crio.has_value();
    case SandboxMarker::kEither:
      return containerd.has_value() || crio.has_value();
  }
  return false;
}

Verdict OnContainerError(const Config& cfg, Error error) {
  Verdict v;
  if (cfg.on_error == OnError::kWarn) {
    v.action = Action::kProceedUnmodified;
    v.warnings.push_back(Cat(
        "on-error = \"warn\": the container starts without oci-rlimit's limits: ", error.Text()));
  } else {
    v.action = Action::kFail;
  }
  v.error = std::move(error);
  return v;
}

namespace {

Verdict Applying(Decision d, std::vector<std::string> notes) {
  Verdict v;
  v.action = Action::kApply;
  v.limits = std::move(d.limits);
  v.sources = std::move(d.sources);
  v.matched = std::move(d.matched);
  v.notes = std::move(notes);
  for (auto& n : d.notes) v.notes.push_back(std::move(n));
  v.requests = std::move(d.requests);
  return v;
}

Verdict Refused(Error error, std::vector<std::string> notes) {
  Verdict v;
  v.action = Action::kFail;
  v.error = std::move(error);
  v.notes = std::move(notes);
  return v;
}

// A decision that failed: the request's error, or not (a pod dispute that
// cannot be decided). Only the request's error is the author's to excuse:
// under on-error = "warn" the container gets what the node gives it (the
// top-level limits and matching rules, the spec's own entries clamped)
// without the request. Anything else refuses the container: starting it
// untouched would drop the node's limits.
Verdict DecideFailed(const Config& cfg, const ContainerFacts& facts, const Error& error,
                     std::vector<std::string> notes) {
  Result<Decision> node = Decide(cfg, facts, RequestMode::kNodeOnly);
  if (!node) return Refused(node.error(), std::move(notes));
  if (cfg.on_error != OnError::kWarn) return Refused(error, std::move(notes));
  Verdict v = Applying(std::move(*node), std::move(notes));
  v.warnings.push_back(
      Cat("on-error = \"warn\": the request is left out; the container gets "
          "the node's limits (top-level and rules) without it: ",
          error.Text()));
  return v;
}

// The hook's limits stand beside the spec's own entries, which runc
// re-applies after hooks: a spec entry the "spec" source reads over its
// ceiling cannot be lowered here.
void HookChecks(const Config& cfg, const ContainerFacts& facts, Verdict& v) {
  const std::vector<Rlimit> over = SpecOverCeiling(cfg.requests, facts.spec_rlimits);
  for (const auto& r : over) {
    std::string msg = Cat("process.rlimits sets ", FormatRlimit(r),
                          ", over its ceiling in requests.ceilings; the hook cannot lower it "
                          "(runc applies the spec's entries after hooks; crun keeps the hook's "
                          "value): use oci-rlimit-runtime or the NRI plugin, which replace the "
                          "spec's entry");
    if (cfg.on_error != OnError::kWarn) {
      v = Refused(MakeError(msg), std::move(v.notes));
      return;
    }
    // Setting the clamped value would only make runc raise the hard limit
    // back, which fails without CAP_SYS_RESOURCE: the type is left alone.
    v.warnings.push_back("on-error = \"warn\": " + msg + "; the container keeps it");
    for (size_t i = v.limits.size(); i-- > 0;) {
      if (v.limits[i].resource != r.resource) continue;
      v.limits.erase(v.limits.begin() + static_cast<std::ptrdiff_t>(i));
      v.sources.erase(v.sources.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  std::vector<Conflict> conflicts;
  for (const auto& c : FindConflicts(v.limits, facts.spec_rlimits)) {
    const bool said = std::any_of(over.begin(), over.end(),
                                  [&](const Rlimit& o) { return o.resource == c.spec.resource; });
    if (!said && c.configured != c.spec) conflicts.push_back(c);
  }
  for (auto& w : ConflictWarnings(conflicts)) v.warnings.push_back(std::move(w));
}

}  // namespace

Verdict Admit(const Config& cfg, const ContainerFacts& facts, EntryPoint at) {
  // A pod's annotations reach its sandbox (pause) container too, which has
  // no use for them: it gets what the node gives.
  RequestMode mode = RequestMode::kAll;
  std::vector<std::string> sandbox_notes;
  if (IsSandbox(facts)) {
    mode = RequestMode::kNodeOnly;
    if (facts.annotations.count(std::string(kRequestAnnotation)) > 0) {
      sandbox_notes.push_back(Cat("annotation ", Quote(kRequestAnnotation),
                                  ": ignored on a pod sandbox (pause) container"));
    }
  }
  Result<Decision> d = Decide(cfg, facts, mode);
  Verdict v = d ? Applying(std::move(*d), std::move(sandbox_notes))
                : DecideFailed(cfg, facts, d.error(), std::move(sandbox_notes));
  if (v.action != Action::kApply) return v;
  // Only the hook sets limits beside the spec's own entries, which runc
  // re-applies after hooks; every other path replaces the spec's entry.
  if (at == EntryPoint::kHook) HookChecks(cfg, facts, v);
  return v;
}

Verdict AdmitWithoutRequests(const Config& cfg, const ContainerFacts& facts, EntryPoint at) {
  Result<Decision> d = Decide(cfg, facts, RequestMode::kNodeOnly);
  if (!d) return Refused(d.error(), {});
  Verdict v = Applying(std::move(*d), {});
  if (at == EntryPoint::kHook) HookChecks(cfg, facts, v);
  return v;
}

}  // namespace ocirlimit
