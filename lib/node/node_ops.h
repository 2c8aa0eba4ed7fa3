// What doctor and the node installer read of a node: NodeFiles (the node
// model's files, symlinks and PATH lookups) plus the programs, sockets and
// processes on it. The real one, on "/" or a fixture root, is
// rooted_node_ops.h; tests use fakes (tests/testing/fake_node_files.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapters/engines/node_files.h"
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
  // Whether it shares the PID namespace of the node's init (the node's
  // /proc/1): the installer runs in a pod with hostPID but its own mounts.
  bool host_pid_namespace = false;
  // Whether it shares the node's init's mount namespace; true where /proc/1
  // cannot be read (then it cannot be told: NodeMountNamespace).
  bool node_mount_namespace = false;
  // Whether the directory of its executable, seen through /proc/PID/root,
  // is root's and writable by nobody else.
  bool exe_dir_root_owned = false;
};

// The node's PID namespace, from the links' text ("" when unreadable): its
// init's (/proc/1/ns/pid). Where root may not read that link (a sandbox
// hiding pid 1) and `own_root` (the node's own "/", not a fixture root), the
// caller's, which shares the node's /proc; else unknown ("").
[[nodiscard]] std::string NodePidNamespace(const std::string& init, const std::string& self,
                                           bool own_root);
// Whether the link `theirs` is the namespace `node`: never when either is
// unknown.
[[nodiscard]] bool InNamespace(const std::string& theirs, const std::string& node);
// Whether `theirs` is the node's mount namespace, `init` (/proc/1/ns/mnt):
// where that cannot be read it cannot be told, and the other facts decide.
[[nodiscard]] bool NodeMountNamespace(const std::string& theirs, const std::string& init);
// Whether the process is the engine that serves the node, by facts a pod
// cannot fake: root's (every uid), in the node's PID namespace and mount
// namespace, running a root-owned executable no one else may write, in a
// directory root owns and no one else may write.
[[nodiscard]] bool ServesNode(const RunningProcess& p);

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
  // When `path` (a file or a directory: a file removed from it changes it)
  // last changed, in epoch seconds; nullopt when unknown.
  virtual std::optional<int64_t> ModifiedAt(const std::string& /*path*/) { return std::nullopt; }
};

// The first line of `X --version` with the version number, e.g. "1.1.5".
std::string VersionNumber(const std::string& version_output);

}  // namespace ocirlimit
