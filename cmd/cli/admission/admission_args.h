// oci-rlimit admission-policy's argv (through core/argv): the flags of the
// command that writes the ValidatingAdmissionPolicy (adapters/k8s).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adapters/k8s/admission_policy.h"
#include "cli/admission/command.h"
#include "core/config.h"
#include "formats/error.h"

namespace ocirlimit::cli {

struct AdmissionArgs {
  bool help = false;
  std::optional<std::string> config;
  std::string output;  // empty: stdout
  bool check = false;  // --check: is the cluster's policy (stdin) made from this config?
  k8s::PolicyOptions policy;
};

inline constexpr const char* kAdmissionUsage =
    "usage: oci-rlimit admission-policy [--config PATH] [--actions Deny|Warn|Audit,...]\n"
    "         [--namespace-selector SEL] [--object-selector SEL] [--ulimits-field]\n"
    "         [--name NAME] [--output FILE]\n"
    "       oci-rlimit admission-policy --check [--config PATH] < CLUSTER.yaml\n"
    "Writes a ValidatingAdmissionPolicy and its binding (Kubernetes 1.30+) that refuse at\n"
    "`kubectl apply` what the nodes' [requests] refuse, with the node's message, and warn\n"
    "where the nodes start a pod with a warning (over-ceiling = \"clamp\", on-error = \"warn\").\n"
    "  --config PATH   the config the nodes run (else $OCI_RLIMIT_CONFIG, else\n"
    "                  /etc/oci-rlimit/config.toml)\n"
    "  --actions A     for what the nodes refuse: Deny (default), Warn, Audit, or Deny,Audit;\n"
    "                  roll out with Warn first\n"
    "  --namespace-selector SEL, --object-selector SEL\n"
    "                  KEY=VALUE, KEY!=VALUE, KEY or !KEY, comma-separated\n"
    "  --ulimits-field also judge securityContext.ulimits (KEP-5758, alpha: only for API\n"
    "                  servers with the ContainerUlimits gate; needs the \"spec\" source)\n"
    "  --name NAME     the policy and binding (default oci-rlimit-requests; NAME-warn too)\n"
    "  --output FILE   write FILE (replaced through a temp file beside it) instead of stdout;\n"
    "                  - is stdout. A write error exits 1 and leaves no partial file.\n"
    "  --check         read the cluster's policy on stdin (kubectl get\n"
    "                  validatingadmissionpolicy -l app.kubernetes.io/managed-by=oci-rlimit\n"
    "                  -o yaml) and say whether it was made from this config: exit 0 current,\n"
    "                  1 stale (or none found)\n";

// argv after "admission-policy". Errors are one line naming the flag:
// core/argv's, `unexpected argument "x"`, and the actions' and selectors'.
[[nodiscard]] Result<AdmissionArgs> ParseAdmissionArgs(const std::vector<std::string>& args);

// An error ("no config found: ...") where the config is the built-in default
// path, absent, with no drop-in: a policy made from no config would judge
// nothing, and the nodes' config is somewhere else.
[[nodiscard]] Status ConfigFound(const ConfigPath& where);

}  // namespace ocirlimit::cli
