// `oci-rlimit doctor`: what this node runs and which oci-rlimit paths work on
// it (docs/doctor.md). The checks are pure; every file read, PATH search and
// `--version` run goes through NodeOps, so a test can point them at a
// fixture root.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adapters/engines/node_files.h"
#include "adapters/oci/spec.h"
#include "core/error.h"
#include "effects/files.h"

namespace ocirlimit {

// A process running on the node, from /proc/PID.
struct RunningProcess {
  int pid = 0;
  std::vector<std::string> argv = {};  // /proc/PID/cmdline
  std::string parent = {};             // the parent's comm ("containerd"), or ""
};

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

DoctorReport RunDoctor(NodeOps& ops);
// A table: STATUS AREA WHAT, with the path and advice on indented lines.
std::string DoctorText(const DoctorReport& report);
Json DoctorJson(const DoctorReport& report);

// Pieces RunDoctor uses, tested on their own.

// The first line of `X --version` with the version number, e.g. "1.1.5".
std::string VersionNumber(const std::string& version_output);

// LimitMEMLOCK= of a unit: the unit file, then its drop-ins in order, the
// last assignment winning ("" resets). nullopt when never set.
std::optional<std::string> LimitMemlockFromUnits(const std::vector<std::string>& unit_texts);

// systemd's PATH for services that set none (as on Debian and Ubuntu).
inline constexpr const char* kSystemdDefaultPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// The PATH a service gets from Environment= lines in [Service] of its unit
// and drop-ins (in order, the last assignment winning), or nullopt.
std::optional<std::string> EnvironmentPathFromUnits(const std::vector<std::string>& unit_texts);

// Runtime handlers of a containerd config.toml (version 2 or 3).
struct ContainerdHandler {
  std::string plugin;  // the CRI plugin table it is under
  bool read = true;    // false: containerd ignores it (wrong section for the version)
  std::string name;
  std::string runtime_type;
  std::string binary_name;                   // options.BinaryName, or ""
  std::vector<std::string> pod_annotations;  // pod_annotations
};
// `version` is the file's (1 when missing): 2 reads handlers under
// io.containerd.grpc.v1.cri, 3 under io.containerd.cri.v1.runtime.
Result<std::vector<ContainerdHandler>> ContainerdHandlers(const std::string& toml_text,
                                                          int64_t* version = nullptr);

// containerd's NRI plugin settings ([plugins."io.containerd.nri.v1.nri"]):
// on by default from containerd 2.0, off before (major < 2).
struct ContainerdNri {
  bool enabled = false;
  std::string socket_path = "/var/run/nri/nri.sock";
  std::string plugin_path = "/opt/nri/plugins";
};
Result<ContainerdNri> ContainerdNriSettings(const std::string& toml_text, int containerd_major);

// The hooks directories a container engine reads. CRI-O: `[crio.runtime]
// hooks_dir` in /etc/crio/crio.conf, then every file in /etc/crio/crio.conf.d
// in name order. podman: `[engine] hooks_dir` in
// /usr/share/containers/containers.conf, /etc/containers/containers.conf, then
// /etc/containers/containers.conf.d/*.conf. The last file that sets it wins;
// with none, both read kStockHooksDir only (checked against podman 4.3.1 and
// CRI-O 1.31's `crio config`; /etc/containers/oci/hooks.d is not read).
inline constexpr const char* kStockHooksDir = "/usr/share/containers/oci/hooks.d";
struct EngineConfigFile {
  std::string path;
  std::string text;
};
struct HooksDirSetting {
  std::vector<std::string> dirs = {kStockHooksDir};
  std::string source;  // the file that set hooks_dir, or "" for the default
};
// `table` is where hooks_dir lives: {"crio", "runtime"} or {"engine"}.
Result<HooksDirSetting> HooksDirFromConfigs(const std::vector<EngineConfigFile>& files,
                                            const std::vector<std::string>& table);

// CapEff from /proc/self/status text has CAP_SYS_RESOURCE.
Result<bool> HasCapSysResource(const std::string& proc_status);

}  // namespace ocirlimit
