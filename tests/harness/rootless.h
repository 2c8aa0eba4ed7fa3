// Podman as a rootless user, and rootful podman beside it, for the rootless
// tests (rootless_test.cc; recipe: docs/deployment.md, "Rootless podman"). Both
// run inside a private mount namespace in which a test directory is bind-
// mounted on /usr/share/containers, so a hooks.d file can sit in the default
// directory podman reads without touching the host's. All podman state, the
// user's HOME and XDG_RUNTIME_DIR live in a TempDir; the user's pause process
// is killed on destruction.
#pragma once

#include <string>
#include <vector>

#include "harness.h"

namespace ocirlimit::itest {

// The test user: created (useradd -m, which writes /etc/subuid and
// /etc/subgid ranges) when missing; scripts/install-deps.sh creates it too.
inline constexpr const char* kRootlessUser = "oci-rlimit-test";
// Why the rootless user cannot be used, or empty.
std::string EnsureRootlessUser();

class PodmanAs {
 public:
  struct Options {
    bool rootless = true;
    // Becomes /usr/share/containers in podman's mount namespace (it holds
    // containers.conf, seccomp.json and oci/hooks.d). Empty: the host's.
    std::string share_dir;
    // Likewise for /etc/containers (MakeEtcDir). Empty: the host's.
    std::string etc_dir;
    std::vector<std::string> conmon_env;  // containers.conf conmon_env_vars
    // prlimit(1) around podman: the rootless user's limits.
    std::string prlimit = "--memlock=1048576:8388608";
  };
  explicit PodmanAs(const Options& opts);
  ~PodmanAs();
  PodmanAs(const PodmanAs&) = delete;
  PodmanAs& operator=(const PodmanAs&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  CmdResult Cmd(const std::vector<std::string>& args);
  // `run --rm --network none [rootful: --ulimit nofile/nproc] flags... bb cmd...`.
  CmdResult Run(const std::vector<std::string>& global, const std::vector<std::string>& flags,
                const std::vector<std::string>& cmd);
  // `run -d ... sleep 60`: the container's name.
  std::string StartDetached(const std::vector<std::string>& global,
                            const std::vector<std::string>& flags);
  const TempDir& dir() const { return dir_; }

 private:
  Options opts_;
  TempDir dir_;
  std::string home_, xdg_, state_;
  std::vector<std::string> base_;
  std::string error_;
};

// crun for a rootless engine here, as a --runtime path in `dir`: in the user
// namespace the hybrid layout's cgroup2 mount is locked and cannot be
// unmounted (CrunCommand's way), so a tmpfs covers it.
std::string RootlessCrunCommand(const std::string& dir);

// A copy of the host's /usr/share/containers files (containers.conf,
// seccomp.json) in `dir`, plus an empty oci/hooks.d: a share_dir.
std::string MakeShareDir(const std::string& dir);
// A copy of the host's /etc/containers in `dir`, plus an empty oci/hooks.d.
std::string MakeEtcDir(const std::string& dir);

}  // namespace ocirlimit::itest
