// The ceilings of [requests] at the door: a ValidatingAdmissionPolicy
// (admissionregistration.k8s.io/v1, Kubernetes 1.30+) and its binding, from
// the config the admin ships to the nodes, so that `kubectl apply` of a pod
// (or of a Deployment, StatefulSet, DaemonSet, ReplicaSet, Job or CronJob
// whose pod template) the nodes would refuse is refused with the node's own
// message. The nodes stay the authority: the policy only refuses earlier
// what a node refuses, warns where a node starts the pod with a warning, and
// leaves to the node what CEL cannot judge exactly (docs/policy.md, "At
// admission"). Pure: Config in, YAML text out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "adapters/k8s/selector.h"
#include "core/config.h"
#include "formats/error.h"

namespace ocirlimit::k8s {

struct PolicyOptions {
  // The policy and its binding; the warning-only one is NAME-warn.
  std::string name = "oci-rlimit-requests";
  // For what the nodes refuse: Deny, Warn, Audit (Deny and Warn not both).
  // What the nodes start anyway is only ever warned about (and audited when
  // Audit is listed).
  std::vector<std::string> actions = {"Deny"};
  std::vector<Requirement> namespace_selector;  // empty: every namespace
  std::vector<Requirement> object_selector;     // empty: every object
  // Also judge securityContext.ulimits (KEP-5758; alpha): only for API
  // servers that have the field.
  bool ulimits_field = false;
  std::string config_origin;  // named in the YAML's header comment
};

// "Deny,Audit" -> {"Deny", "Audit"}; one line naming the value otherwise.
[[nodiscard]] Result<std::vector<std::string>> ParseActions(std::string_view text);

// Errors (one line): requests not enabled, no source the policy can judge,
// --ulimits-field without the "spec" source, a bad name.
[[nodiscard]] Result<std::string> AdmissionPolicyYaml(const Config& cfg, const PolicyOptions& o);

}  // namespace ocirlimit::k8s
