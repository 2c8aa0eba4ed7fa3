// `oci-rlimit doctor`: what this node runs and which oci-rlimit paths work on
// it (docs/doctor.md), reported from the node model (adapters/engines): each
// handler's real exec chain, and what a pod with it gets. The checks are
// pure; every file read, PATH search and `--version` run goes through
// NodeOps, so a test can point them at a fixture root. One file per engine:
// doctor_programs.cc (runc, crun, our programs and config, units),
// doctor_docker.cc, doctor_containerd.cc, doctor_crio.cc, doctor_hooks.cc,
// doctor_nri.cc, and doctor_handlers.cc (the handler verdicts).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/engines/node_files.h"
#include "adapters/oci/spec.h"
#include "core/config.h"
#include "effects/files.h"
#include "formats/error.h"

namespace ocirlimit {

// A process running on the node, from /proc/PID.
struct RunningProcess {
  int pid = 0;
  std::vector<std::string> argv = {};  // /proc/PID/cmdline
  std::string parent = {};             // the parent's comm ("containerd"), or ""
  // What it is, not what it calls itself (docs/doctor.md): its executable
  // (/proc/PID/exe; "" when unreadable), whether root owns that file and
  // only root may write it, whether the process is root's (every uid), and
  // whether it shares this node's PID and mount namespaces.
  std::string exe = {};
  bool exe_root_owned = false;
  bool root_uid = false;
  bool host_namespaces = false;
};

// Why `p`, named like one of our programs (`name`), is not the one the node
// installed; "" when it is: its executable is a root-owned file named
// `name` that only root may write, and it runs as root in the host's PID
// and mount namespaces.
[[nodiscard]] std::string NotInstalled(const RunningProcess& p, std::string_view name);

// NodeFiles (the node model's view of files, symlinks and PATH lookups)
// plus what only doctor asks.
class NodeOps : public NodeFiles {
 public:
  // The first executable `name` in the node's PATH directories.
  virtual std::optional<std::string> Which(const std::string& name) = 0;
  // Output of `path --version` (stdout and stderr), or an error.
  virtual Result<std::string> Version(const std::string& path) = 0;
  // The socket at `path` (stat(2) following symlinks), or nullopt when there
  // is none or it is not a socket. Two paths name one socket when the ids agree.
  virtual std::optional<FileId> Socket(const std::string& path) = 0;
  // The processes whose /proc/PID/comm is `comm` (at most 15 bytes), by pid;
  // the node's /proc, or the fixture root's. A socket a process sees is
  // Socket("/proc/PID/root" + path).
  virtual std::vector<RunningProcess> ProcessesNamed(const std::string& comm) = 0;
};

// Advice names paths on the node as the .deb installs them
// (packaging/CMakeLists.txt), never paths in a source tree.
inline constexpr const char* kDocDir = "/usr/share/doc/oci-rlimit";
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
};

DoctorReport RunDoctor(NodeOps& ops, const DoctorOptions& options = {});
// A table: STATUS AREA WHAT, with the path and advice on indented lines.
std::string DoctorText(const DoctorReport& report);
Json DoctorJson(const DoctorReport& report);

// The first line of `X --version` with the version number, e.g. "1.1.5".
std::string VersionNumber(const std::string& version_output);

// CapEff from /proc/self/status text has CAP_SYS_RESOURCE.
Result<bool> HasCapSysResource(const std::string& proc_status);

}  // namespace ocirlimit
