// Real container daemons for the integration tests: dockerd, containerd and
// (daemon-less) podman, each with all of its state under a TempDir, started by
// the test itself and stopped with SIGTERM on destruction. Facts behind the
// flags: docs/daemons-testing.md.
//
// Construction never throws or asserts: check ok() (and error()) in SetUp, so
// a suite can start one daemon in SetUpTestSuite and fail each test cleanly.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness.h"

namespace ocirlimit::itest {

// How a daemon (and so the runtimes and hooks it starts) is run.
struct DaemonOptions {
  std::vector<std::string> env;        // extra NAME=VALUE entries
  std::vector<std::string> path_dirs;  // put ahead of $PATH, in order
  std::vector<std::string> prefix;  // runs the daemon under this, e.g. {"prlimit", "--memlock=..."}
};

// How long a daemon may take to get ready: generous, since 2-core CI
// machines run these serially, and a daemon that dies is noticed at once.
inline constexpr std::chrono::seconds kReadyTimeout{60};

// A background process with stdout and stderr in a log file. Stop() sends
// SIGTERM and waits for it (SIGKILL only if it is still there after a minute).
class BackgroundProcess {
 public:
  using Clock = std::chrono::steady_clock;
  // Why the process is not ready yet, or nullopt once it is.
  using NotReady = std::function<std::optional<std::string>()>;

  BackgroundProcess() = default;
  ~BackgroundProcess() { Stop(); }
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  // Returns an error text, or nullopt once the process runs.
  std::optional<std::string> Start(const std::vector<std::string>& argv, const DaemonOptions& opts,
                                   const std::string& log_path);
  // Polls `not_ready` every 50 ms until it says ready, the process exits, or
  // `deadline` passes. Returns nullopt once ready, else an error naming
  // `what`, with the last reason and the end of the log.
  std::optional<std::string> WaitReady(const std::string& what, const NotReady& not_ready,
                                       Clock::time_point deadline);
  std::optional<std::string> WaitReady(const std::string& what, const NotReady& not_ready) {
    return WaitReady(what, not_ready, Clock::now() + kReadyTimeout);
  }
  // WaitReady for a unix socket that accepts connections.
  std::optional<std::string> WaitListening(const std::string& what, const std::string& socket,
                                           Clock::time_point deadline);
  // WaitReady for `needle` in the process's log.
  std::optional<std::string> WaitForLog(const std::string& what, const std::string& needle,
                                        Clock::time_point deadline);
  // True while the process has not exited.
  bool Running();
  void Stop();
  pid_t pid() const { return pid_; }
  // What the process wrote so far.
  std::string Log() const;

 private:
  pid_t pid_ = -1;
  std::string log_path_;
  Clock::time_point started_;
};

// The end of `text` (a daemon's log, say), at most `max` bytes.
std::string Tail(const std::string& text, size_t max = 4000);
// "ARGV... exited STATUS: the end of its stderr and stdout".
std::string DescribeExit(const std::vector<std::string>& argv, const CmdResult& r);
// The paths in `dir`; none when it cannot be read.
std::vector<std::string> DirEntries(const std::string& dir);
// Whether something accepts connections on the unix socket `path`; nullopt
// when that cannot be told (a path too long for sockaddr_un, no socket).
std::optional<bool> SocketListens(const std::string& path);
// Live processes whose command line mentions `text` (zombies have none).
std::vector<pid_t> ProcessesMentioning(const std::string& text);
// Waits until no process mentions `text`; false if some still do at `timeout`.
bool WaitNoneMentions(const std::string& text, std::chrono::milliseconds timeout);

// Host paths that dockerd, containerd, runc and podman create outside the
// state dirs we give them. Records what exists at construction; on
// destruction removes what appeared since (files we know, directories and
// parent cgroups only when empty, shim sockets only when nobody listens).
class HostLeftovers {
 public:
  HostLeftovers();
  ~HostLeftovers();
  HostLeftovers(const HostLeftovers&) = delete;
  HostLeftovers& operator=(const HostLeftovers&) = delete;

 private:
  std::vector<std::string> absent_;        // watched paths that did not exist
  std::vector<std::string> shim_sockets_;  // /run/containerd/s entries that did
};

// The busybox image name every daemon fixture imports.
inline constexpr const char* kBusyboxImage = "bb:latest";

// dockerd with --data-root, --exec-root, --pidfile and the socket under its
// own TempDir, and no iptables, masquerading, ip_forward or bridge.
class Dockerd {
 public:
  struct Options : DaemonOptions {
    std::string daemon_json;  // contents of --config-file; empty: none
  };
  explicit Dockerd(const Options& opts);
  Dockerd() : Dockerd(Options{}) {}
  ~Dockerd();
  Dockerd(const Dockerd&) = delete;
  Dockerd& operator=(const Dockerd&) = delete;

  bool ok() const { return error_.empty(); }
  // Why the daemon is not usable, with the end of its log.
  const std::string& error() const { return error_; }

  // `docker -H unix://SOCK args...` (the docker.io client next to dockerd).
  CmdResult Docker(const std::vector<std::string>& args, const RunOptions& opts = {});
  // `docker run --rm --network none [flags...] bb:latest cmd...`.
  CmdResult Run(const std::vector<std::string>& flags, const std::vector<std::string>& cmd);
  std::string Log() const;
  const TempDir& dir() const { return dir_; }

 private:
  HostLeftovers leftovers_;  // first in, last out: cleans after the daemon stops
  TempDir dir_;
  BackgroundProcess proc_;
  std::string client_;
  std::string error_;
};

// containerd with a version=2 config whose root, state and sockets live under
// its own TempDir, without the CRI plugin. ctr's fifos and the runc shim's
// runc root go under that TempDir too.
class Containerd {
 public:
  explicit Containerd(const DaemonOptions& opts);
  Containerd() : Containerd(DaemonOptions{}) {}
  ~Containerd();
  Containerd(const Containerd&) = delete;
  Containerd& operator=(const Containerd&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  // `ctr -a SOCK args...`.
  CmdResult Ctr(const std::vector<std::string>& args, const RunOptions& opts = {});
  // `ctr run [--rm unless -d] --rootfs --fifo-dir F --runc-root R [flags...] ROOTFS ID cmd...`.
  // `cmd` needs absolute paths (no image config to give a PATH).
  CmdResult Run(const std::string& id, const std::vector<std::string>& flags,
                const std::vector<std::string>& cmd);
  // `ctr task exec --fifo-dir F --exec-id EXEC_ID ID cmd...`.
  CmdResult Exec(const std::string& id, const std::string& exec_id,
                 const std::vector<std::string>& cmd);
  // Kills and deletes a task and its container; for cleanup, never fails a test.
  void Remove(const std::string& id);
  std::string Log() const;
  const std::string& rootfs() const { return rootfs_; }
  const TempDir& dir() const { return dir_; }

 private:
  HostLeftovers leftovers_;
  TempDir dir_;
  BackgroundProcess proc_;
  std::string rootfs_;
  std::string error_;
};

// Rootful podman with every piece of state in its own TempDir and the busybox
// image imported as localhost/bb:latest. Podman runs the OCI runtime with
// a curated environment: conmon's `create` and `exec` get only containers.conf
// conmon_env_vars, and podman's own `start` and `delete` get neither
// podman's environment nor those. `conmon_env` goes into conmon_env_vars
// (through $CONTAINERS_CONF).
class Podman {
 public:
  struct Options {
    std::vector<std::string> conmon_env;  // NAME=VALUE entries for conmon's runtime calls
  };
  explicit Podman(const Options& opts);
  Podman() : Podman(Options{}) {}
  ~Podman();
  Podman(const Podman&) = delete;
  Podman& operator=(const Podman&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  // `podman <state flags> args...`.
  CmdResult Cmd(const std::vector<std::string>& args, const RunOptions& opts = {});
  // `podman <state flags> global... run --rm --network none --ulimit nofile=20000:20000
  //  --ulimit nproc=32768:32768 flags... localhost/bb:latest cmd...`.
  CmdResult Run(const std::vector<std::string>& global, const std::vector<std::string>& flags,
                const std::vector<std::string>& cmd);
  const TempDir& dir() const { return dir_; }

 private:
  HostLeftovers leftovers_;
  TempDir dir_;
  std::vector<std::string> base_;
  std::vector<std::string> env_;
  std::string error_;
};

}  // namespace ocirlimit::itest
