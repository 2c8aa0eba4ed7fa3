#include "cli/admission/admission_check.h"

#include <ostream>

#include "adapters/k8s/policy_stale.h"
#include "core/policy_digest.h"
#include "effects/files.h"
#include "formats/text.h"

namespace ocirlimit::cli {
namespace {

constexpr const char* kName = "oci-rlimit admission-policy --check";
constexpr size_t kMaxInputBytes = size_t{64} << 20;
constexpr int kInputTimeoutMs = 60 * 1000;

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

int CheckAdmissionPolicy(const Config& cfg, const std::string& config_path, int in_fd,
                         std::ostream& out, std::ostream& err) {
  auto text = ReadFdBounded(in_fd, kMaxInputBytes, kInputTimeoutMs);
  if (!text) {
    err << kName << ": stdin: " << text.error().Text() << "\n";
    return 2;
  }
  const std::string digest = PolicyDigest(cfg);
  const std::vector<std::string> found = k8s::PolicyDigestsIn(*text);
  switch (k8s::JudgeStaleness(found, digest)) {
    case k8s::Staleness::kCurrent:
      out << "current: the cluster's admission policy was made from " << Quote(config_path)
          << " (policy digest " << digest << ")\n";
      return 0;
    case k8s::Staleness::kStale:
      err << kName << ": stale: the cluster's admission policy was made from policy digest "
          << Joined(found) << ", " << Quote(config_path) << " is " << digest
          << "; regenerate it (oci-rlimit admission-policy --config " << config_path
          << ") and apply it\n";
      return 1;
    case k8s::Staleness::kNoPolicy:
      break;
  }
  err << kName << ": stdin holds no " << k8s::kPolicyDigestAnnotation
      << " annotation: pipe in `kubectl get validatingadmissionpolicy -l "
         "app.kubernetes.io/managed-by=oci-rlimit -o yaml` (a policy made before the digest "
         "counts as stale)\n";
  return 1;
}

}  // namespace ocirlimit::cli
