#include "cli/audit/audit_scope.h"

#include <algorithm>

#include "adapters/engines/constants.h"
#include "adapters/oci/spec.h"
#include "effects/nri_trust.h"
#include "formats/nri_status.h"
#include "node/node_files.h"

namespace ocirlimit {
namespace {

constexpr size_t kMaxSmallFile = 1 << 20;

std::string Base(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool Has(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// A hooks.d file of ours that runs the hook for every container.
bool AlwaysHook(FsOps& fs, const std::string& path) {
  auto text = fs.ReadFile(path, kMaxSmallFile);
  if (!text) return false;
  auto j = ParseJsonObject(*text, path);
  if (!j) return false;
  auto when = j->find("when");
  if (when == j->end() || !when->is_object()) return false;
  auto always = when->find("always");
  return always != when->end() && always->is_boolean() && always->get<bool>();
}

}  // namespace

AuditScope DecideScope(const ScopeFacts& f) {
  AuditScope s;
  if (f.all_flag) {
    s.said = "every container (--all)";
  } else if (!f.record_runtimes) {
    s.said = "every container: no installer record (" + f.record_path +
             "); oci-rlimit may govern only some of them";
  } else if (!f.nri_status.empty()) {
    s.said = "every container: oci-rlimit-nri governs them all (" + f.nri_status + ")";
  } else if (!f.node_wide_hook.empty()) {
    s.said = "every container: the hook runs for them all (" + f.node_wide_hook + ")";
  } else {
    s.all = false;
    s.crio_hook = Has(*f.record_runtimes, "crio");
    s.said = "the containers created through the RuntimeClass handler " +
             std::string(kInstallerHandler) + " (" + std::string(kWrapperName) + ")" +
             (s.crio_hook ? " or annotated " + std::string(kEnableAnnotation) + "=true" : "") +
             ", as the installer's record says (" + f.record_path + "); --all judges every one";
  }
  return s;
}

bool Governed(const AuditScope& scope, const ContainerOrigin& origin) {
  if (scope.all) return true;
  if (Base(origin.binary_name) == kWrapperName) return true;
  if (origin.runtime_handler == kInstallerHandler) return true;
  return scope.crio_hook && origin.enable_annotation;
}

ScopeFacts ReadScopeFacts(FsOps& fs, bool all_flag) {
  ScopeFacts f;
  f.all_flag = all_flag;
  f.record_path = std::string(node::kStateDir) + "/mode.json";
  if (auto text = fs.ReadFile(f.record_path, kMaxSmallFile)) {
    auto mode = node::ParseMode(*text, f.record_path);
    if (mode) {
      f.record_runtimes = mode->runtimes;
    } else {
      f.record_path += ": " + mode.error().Text();
    }
  } else if (text.error().err != ENOENT) {
    f.record_path += ": " + text.error().Text();
  }
  const std::string nri(kNriStatusPath);
  // Believed by doctor's rule (effects/nri_trust.h): a stale file governs nothing.
  if (auto text = fs.ReadFile(nri, kMaxSmallFile)) {
    auto runs = WriterRunsIn([&fs](const std::string& p) { return fs.ReadFile(p, kMaxSmallFile); });
    if (TrustNriStatus(ParseNriStatus(*text), runs) == NriTrust::kBelieved) f.nri_status = nri;
  }
  for (const auto dir : {engines::kStockHooksDir, engines::kAdminHooksDir}) {
    const std::string path = std::string(dir) + "/oci-rlimit.json";
    if (AlwaysHook(fs, path)) {
      f.node_wide_hook = path;
      break;
    }
  }
  return f;
}

}  // namespace ocirlimit
