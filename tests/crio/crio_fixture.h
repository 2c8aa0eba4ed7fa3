// A real CRI-O (1.31.13, ../shared/cluster) for the integration tests, driven
// through CriClient the way kubelet drives a node. One crio per suite: the
// ctest fixture `crio.setup` starts it (`crio_fixture start`) and
// `crio.cleanup` ends it (`crio_fixture stop`), also after a test timed out;
// a test binary run by hand starts its own for the process
// (docs/daemons-testing.md, "CRI-O").
//
// What runs, every path in the run dir T (a mkdtemp under /tmp):
// - a namespace holder (`unshare -m`, its own session) with overlays on /etc,
//   /usr/local/bin, /usr/share/containers and /var/lib (upper dirs in T) and
//   a tmpfs on /run, so the installer, doctor, audit and crio all see CRI-O's
//   default paths (/etc/crio/crio.conf.d, /usr/local/bin, the hooks dirs,
//   /run/crun) while the machine's own stay as they are;
// - crio (its own session, in that namespace, under
//   `prlimit --memlock=1M:8M`), its config at /etc/crio/crio.conf there,
//   storage (vfs), sockets, NRI socket, logs and pinns in T;
// - pods in the cgroup /oci-rlimit-crio-SUFFIX/UID of every hierarchy.
// Stop kills every process in the holder's mount namespace and every task in
// that cgroup tree, removes the cgroups and T.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cri_client.h"
#include "daemons.h"
#include "harness.h"

namespace ocirlimit::itest::crio {

using cri::ContainerSpec;
using cri::CriClient;
using cri::Pod;
using cri::PodSpec;

// The busybox image crio's storage gets (through skopeo); pods use it as
// their pause image too (CRI-O runs no infra container for them).
inline constexpr const char* kCrioImage = "localhost/oci-rlimit/busybox:1";
// What crio (and so every container it starts) runs with.
inline constexpr Limit kCrioMemlock{1 << 20, 8 << 20};

// The variable naming the directory with crio.xz and pinns.xz.
inline constexpr const char* kClusterDirVar = "OCI_RLIMIT_CLUSTER_DIR";

// Where crio and pinns come from: OCI_RLIMIT_CLUSTER_DIR's crio.xz and
// pinns.xz, unpacked into `cache` and checked against their sha256; without
// the variable, crio and pinns on PATH.
struct Binaries {
  std::string crio;
  std::string pinns;
  std::string skip;   // not empty: the one line a skipped suite prints
  std::string error;  // not empty: the suite fails
};
Binaries FindBinaries(const std::string& cache);

class CriO {
 public:
  // Starts a new crio with all state in `run_dir` (which must exist and be
  // empty); unpacks the binaries into `cache`. An error text, "skip: LINE"
  // when the binaries are not here and not asked for, or nullopt.
  static std::optional<std::string> Start(const std::string& run_dir, const std::string& cache);
  // Kills everything Start started under `run_dir` and removes it; never fails.
  static void Stop(const std::string& run_dir);

  // Attaches to a crio Start left running in `run_dir`.
  explicit CriO(std::string run_dir);
  ~CriO();
  CriO(const CriO&) = delete;
  CriO& operator=(const CriO&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  CriClient& cri() { return *client_; }
  const std::string& dir() const { return dir_; }
  std::string socket() const { return dir_ + "/crio.sock"; }
  std::string nri_socket() const { return dir_ + "/nri.sock"; }
  std::string Log() const;
  // `crio --version`'s version, e.g. "1.31.13".
  std::string version() const;
  // `path` as the namespace sees it, for the test to read and write:
  // /proc/HOLDER/root/PATH.
  std::string Host(const std::string& path) const;
  // Runs `argv` in the namespace (nsenter -m), with crio's environment.
  CmdResult InNs(const std::vector<std::string>& argv, const RunOptions& opts = {}) const;
  // The argv prefix that runs a program in the namespace.
  std::vector<std::string> NsPrefix() const;

  // Stops crio (SIGTERM; conmon and the pods stay) and starts it again on
  // its config as it is now, as `systemctl restart crio` does. An error
  // text, or nullopt once CRI answers RuntimeReady again.
  [[nodiscard]] std::optional<std::string> Restart();
  // Sends crio SIGHUP (what install.sh does without systemd).
  void Sighup() const;
  // crio's pid, or -1.
  pid_t pid() const;

  PodSpec NewPod(const std::string& name, const std::string& handler = "") const;
  static ContainerSpec NewContainer(const std::string& name,
                                    const std::vector<std::string>& command);
  [[nodiscard]] Result<Pod> RunPod(const PodSpec& spec);
  // CreateContainer then StartContainer; returns the container id.
  [[nodiscard]] Result<std::string> RunContainer(const Pod& pod, const ContainerSpec& spec);
  // The container's log lines without the CRI prefixes, polled until they
  // hold `needle`.
  [[nodiscard]] Result<std::string> WaitForLog(
      const Pod& pod, const ContainerSpec& spec, const std::string& needle,
      std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  // Stops and removes every container and pod; for cleanup, never fails.
  void RemoveAll();

 private:
  std::string dir_;
  std::string holder_;  // the namespace holder's pid
  std::unique_ptr<CriClient> client_;
  std::string error_;
};

// The run dir of this process's crio: the ctest fixture's (the file named by
// OCI_RLIMIT_CRIO_RUN holds it), else one this process starts and stops
// (CrioEnvironment). "skip: LINE" or an error text in `why`.
CriO* SharedCrio(std::string* why);

// A gtest Environment that starts a crio for the process when no ctest
// fixture gave one, and stops it at the end.
class CrioEnvironment : public ::testing::Environment {
 public:
  void SetUp() override;
  void TearDown() override;
};

// The base of every CRI-O test: SetUp skips with the one line when the
// binaries are not here (and not asked for), fails when crio could not
// start, and leaves no pod behind at TearDown.
class CrioTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  CriO* crio_ = nullptr;
};

}  // namespace ocirlimit::itest::crio
