// oci-rlimit admission-policy: the nodes' [requests] ceilings as a
// ValidatingAdmissionPolicy (adapters/k8s/admission_policy.h), on stdout or
// in --output FILE (admission_output.h).
#include <iostream>

#include "cli/admission/admission_args.h"
#include "cli/admission/admission_check.h"
#include "cli/admission/admission_output.h"
#include "cli/admission/command.h"
#include "effects/config_loader.h"
#include "formats/text.h"

namespace ocirlimit::cli {
namespace {

constexpr const char* kName = "oci-rlimit admission-policy";

int Fail(const Error& e) {
  std::cerr << kName << ": " << e.Text() << "\n";
  return 1;
}

}  // namespace

int AdmissionPolicyCommand(const std::vector<std::string>& args) {
  auto a = ParseAdmissionArgs(args);
  if (!a) {
    std::cerr << kName << ": " << a.error().Text() << "\n" << kAdmissionUsage;
    return 2;
  }
  if (a->help) {
    std::cout << kAdmissionUsage;
    return 0;
  }
  const ConfigPath where = ResolveConfigPath(a->config, ProcessEnv());
  if (auto found = ConfigFound(where); !found) return Fail(found.error());
  auto cfg = LoadConfigFrom(where, ProcessEnv());
  if (!cfg) return Fail(cfg.error());
  if (a->check) return CheckAdmissionPolicy(*cfg, where.path, STDIN_FILENO, std::cout, std::cerr);
  a->policy.config_origin = where.path;
  auto yaml = k8s::AdmissionPolicyYaml(*cfg, a->policy);
  if (!yaml) return Fail(yaml.error());
  if (auto st = WriteOutput(a->output, *yaml); !st) return Fail(st.error());
  return 0;
}

}  // namespace ocirlimit::cli
