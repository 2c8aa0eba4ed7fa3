// `oci-rlimit doctor`: what this node runs and which oci-rlimit paths work on
// it (docs/doctor.md), reported from the node model (adapters/engines): each
// handler's real exec chain, and what a pod with it gets. The checks are
// pure; every file read, PATH search and `--version` run goes through
// NodeOps, so a test can point them at a fixture root. One file per engine:
// doctor_programs.cc (runc, crun, our programs and config, units),
// doctor_docker.cc, doctor_containerd.cc, doctor_crio.cc, doctor_hooks.cc,
// doctor_nri.cc, and doctor_handlers.cc (the handler verdicts).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/oci/spec.h"
#include "core/config.h"
#include "effects/files.h"
#include "formats/error.h"
#include "node/node_ops.h"

namespace ocirlimit {

// Why `p`, named like one of our programs (`name`), is not the one the node
// installed; "" when it is: its executable is a root-owned file named
// `name` that only root may write, and it runs as root in the host's PID
// and mount namespaces.
[[nodiscard]] std::string NotInstalled(const RunningProcess& p, std::string_view name);

// Advice names paths on the node as the .deb installs them
// (packaging/CMakeLists.txt), never paths in a source tree.
inline constexpr const char* kDocDir = "/usr/share/doc/oci-rlimit/docs";
inline constexpr const char* kPackagedHooksFile = "/usr/share/oci-rlimit/hooks.d/oci-rlimit.json";

enum class CheckStatus { kOk, kInfo, kWarn, kFail };
// "ok", "info", "warn", "FAIL", in the table and in --json (docs/doctor.md).
const char* StatusName(CheckStatus s);

struct Check {
  std::string area;  // "runc", "docker", "containerd", ...
  CheckStatus status = CheckStatus::kInfo;
  std::string what;    // one line: what was found and what it means
  std::string path;    // the node path it is about, or ""
  std::string advice;  // what to change, or ""
};

struct DoctorReport {
  std::vector<Check> checks;
  bool ok() const;  // no kFail
};

// What doctor reads beyond the node's fixed paths.
struct DoctorOptions {
  // oci-rlimit's config file (a node path); its config.d beside it.
  std::string config_path = std::string(kDefaultConfigPath);
  // True under --root: the node is a copy (or another root), so this
  // process's own capabilities say nothing about it.
  bool rooted = false;
  // The start times (epoch seconds) of `engine`'s processes, to judge the
  // installer's pending restart (node_restart.h); unset: the node's /proc
  // (none under --root: a copy's engine is not running).
  std::function<std::vector<int64_t>(const std::string& engine)> engine_starts = {};
  // Named by --config or $OCI_RLIMIT_CONFIG: a missing file then fails, as it
  // fails every program that reads it.
  bool config_named = false;
  // The running pods (CRI-O) or containers (containerd, through the wrapper)
  // of a handler whose chain fails, as doctor names them; unset: CRI-O's
  // storage and the runtimes' state on the node (none under --root).
  std::function<std::vector<std::string>(const std::string& area, const std::string& handler)>
      handler_pods = {};
};

// --config, else $OCI_RLIMIT_CONFIG, else the default: the rule every program
// follows (ResolveConfigPath), read as a node path (inside --root).
void ResolveDoctorConfig(DoctorOptions& options, const std::optional<std::string>& flag,
                         const EnvLookup& env);

DoctorReport RunDoctor(NodeOps& ops, const DoctorOptions& options = {});
// A table: STATUS AREA WHAT, with the path and advice on indented lines.
std::string DoctorText(const DoctorReport& report);
Json DoctorJson(const DoctorReport& report);

// CapEff from /proc/self/status text has CAP_SYS_RESOURCE.
Result<bool> HasCapSysResource(const std::string& proc_status);

}  // namespace ocirlimit
