// `oci-rlimit validate` and `oci-rlimit explain`: what a config says, and
// what it does to one bundle under each runtime, as a table or JSON. Pure:
// the CLI reads the files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adapters/oci/spec.h"
#include "core/config.h"
#include "core/policy.h"
#include "node/node_ops.h"

namespace ocirlimit {

// The config, effective after environment overrides; `node` are warnings
// about what this node cannot back (NvidiaInjectorWarnings).
std::string ValidateText(const Config& cfg, const std::vector<std::string>& node = {});
Json ValidateJson(const Config& cfg, const std::vector<std::string>& node = {});

// With "nvidia-runtime" in [cdi] injectors: why this node cannot back it
// (no NVIDIA runtime installed, or a config of one that ignores the variable
// in unprivileged containers: engines::NvidiaInjectorGaps). doctor also
// checks that a handler's chain runs it.
std::vector<std::string> NvidiaInjectorWarnings(NodeOps& ops, const Config& cfg);

// What one limit type ends up as in the container's init process.
struct Outcome {
  Rlimit ours;
  std::optional<Rlimit> spec;  // the spec's own entry of the same type
  Rlimit hook_runc;            // runc re-applies the spec's entry after hooks
  Rlimit hook_crun;            // crun applies it before hooks: ours stays
  Rlimit wrapper;              // oci-rlimit-runtime replaces the spec's entry
  // runc re-applies the spec's entry by raising the hard limit back above
  // ours: without CAP_SYS_RESOURCE (rootless, a restricted node) runc fails
  // instead, and the container with it.
  bool hook_runc_needs_cap = false;
};

struct Explanation {
  std::string bundle;
  std::vector<std::pair<std::string, bool>> rules;  // name, matched (for every candidate pod)
  std::vector<CandidateMatch> rule_candidates;      // per rule: with disputed pod facts, kSome too
  std::vector<std::vector<RuleFact>> rule_facts;    // per rule: its conditions and their owners
  std::vector<std::string> trust_warnings;          // TrustWarnings(cfg)
  // The Kubernetes pod as the runtime states it (ContainerFacts).
  std::optional<std::string> pod_namespace;
  std::optional<std::string> pod_name;
  std::vector<DisputedFact> disputes;  // the pod fields the runtimes' annotations disagree on
  // linux.devices[].path as the spec holds them when oci-rlimit decides (a
  // device a later runtime adds, such as NVIDIA's, is not among them).
  std::vector<std::string> devices;
  Decision decision;
  std::vector<Outcome> outcomes;
  std::string error;  // the container would fail: a rejected or malformed request
  // A request ignored under on-error = "warn" (the container gets the rest).
  std::vector<std::string> warnings;
  Rootless rootless = Rootless::kDegrade;  // what a rootless engine does (config `rootless`)
};

Result<Explanation> Explain(const Config& cfg, const Json& spec, const std::string& bundle);
std::string ExplainText(const Explanation& e);
Json ExplainJson(const Explanation& e);

}  // namespace ocirlimit
