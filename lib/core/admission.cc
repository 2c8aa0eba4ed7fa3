#include "core/admission.h"

#include <optional>

#include "core/text.h"

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
// top-level limits and matching rules) without the request. Anything else
// refuses the container: starting it untouched would drop the node's limits.
Verdict DecideFailed(const Config& cfg, const ContainerFacts& facts, const Error& error,
                     std::vector<std::string> notes) {
  if (facts.annotations.count(std::string(kRequestAnnotation)) == 0) {
    return Refused(error, std::move(notes));
  }
  ContainerFacts without_request = facts;
  without_request.annotations.erase(std::string(kRequestAnnotation));
  Result<Decision> node = Decide(cfg, without_request);
  if (!node) return Refused(node.error(), std::move(notes));
  if (cfg.on_error != OnError::kWarn) return Refused(error, std::move(notes));
  Verdict v = Applying(std::move(*node), std::move(notes));
  v.warnings.push_back(
      Cat("on-error = \"warn\": the request is left out; the container gets "
          "the node's limits (top-level and rules) without it: ",
          error.Text()));
  return v;
}

}  // namespace

Verdict Admit(const Config& cfg, const ContainerFacts& facts, EntryPoint at) {
  const ContainerFacts* decide_on = &facts;
  ContainerFacts without_request;
  std::vector<std::string> sandbox_notes;
  if (IsSandbox(facts) && facts.annotations.count(std::string(kRequestAnnotation)) > 0) {
    without_request = facts;
    without_request.annotations.erase(std::string(kRequestAnnotation));
    decide_on = &without_request;
    sandbox_notes.push_back(Cat("annotation ", Quote(kRequestAnnotation),
                                ": ignored on a pod sandbox (pause) container"));
  }
  Result<Decision> d = Decide(cfg, *decide_on);
  Verdict v = d ? Applying(std::move(*d), std::move(sandbox_notes))
                : DecideFailed(cfg, *decide_on, d.error(), std::move(sandbox_notes));
  if (v.action != Action::kApply) return v;
  // Only the hook sets limits beside the spec's own entries, which runc
  // re-applies after hooks; every other path replaces the spec's entry.
  if (at == EntryPoint::kHook) {
    for (auto& w : ConflictWarnings(FindConflicts(v.limits, facts.spec_rlimits))) {
      v.warnings.push_back(std::move(w));
    }
  }
  return v;
}

}  // namespace ocirlimit
