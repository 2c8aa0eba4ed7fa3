// A real containerd with its CRI plugin, driven through CriClient the way
// kubelet drives a node: containerd 1.6 (Debian 12's /usr/bin), 1.7 and 2.x
// (unpacked by scripts/fetch-containerd.sh), all state under a TempDir.
// Facts behind the settings: docs/daemons-testing.md; the fixture
// is described in docs/daemons-testing.md.
//
// Construction never throws or asserts: check ok() (and error()) in SetUp.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cri_client.h"
#include "daemons.h"
#include "harness.h"

namespace ocirlimit::itest::cri {

// One containerd release the tests run against.
struct ContainerdRelease {
  std::string name;     // "1.6", "1.7", "2"
  std::string bin_dir;  // holds containerd, ctr and containerd-shim-runc-v2
  int config_version;   // 2 (1.6, 1.7) or 3 (2.x)
};
ContainerdRelease Containerd16();  // /usr/bin (Debian 12's package)
ContainerdRelease Containerd17();  // OCI_RLIMIT_CONTAINERD_17_DIR/usr/bin (trixie)
ContainerdRelease Containerd2();   // OCI_RLIMIT_CONTAINERD_2_DIR/usr/bin (forky)
std::vector<ContainerdRelease> AllContainerdReleases();
// A gtest-friendly name: "containerd_1_6", "containerd_1_7", "containerd_2".
std::string TestName(const ContainerdRelease& release);
// Why `release` cannot run here (not root, binaries missing, no runc), or nullopt.
std::optional<std::string> MissingRelease(const ContainerdRelease& release);

// Skips (or, under CI, fails) the current test when `release` is missing.
#define OCI_RLIMIT_REQUIRE_CONTAINERD(release)                          \
  do {                                                                  \
    if (auto why_ = ::ocirlimit::itest::cri::MissingRelease(release)) { \
      if (::ocirlimit::itest::RuntimesRequired()) FAIL() << *why_;      \
      GTEST_SKIP() << *why_;                                            \
    }                                                                   \
  } while (0)

// A CRI runtime handler (the name a RuntimeClass names) on the runc shim.
struct RuntimeHandler {
  std::string name;
  std::string binary_name;                   // the shim's BinaryName; empty: runc on PATH
  std::vector<std::string> pod_annotations;  // e.g. {"oci-rlimit.io/*"}
  std::vector<std::string> container_annotations;
  std::vector<std::string>
      options;  // extra TOML lines for the .options table, e.g. "NoPivotRoot = false"
};

// containerd's NRI plugin (containerd 1.7 and 2.x), with its socket, plugin
// and plugin-config directories under the fixture's TempDir.
struct NriSetup {
  // Programs containerd starts itself at start-up, installed into the plugin
  // directory as {"10-name", "/path/to/program"} (NRI wants an index prefix).
  std::vector<std::pair<std::string, std::string>> plugins;
  std::string extra_toml;  // more lines for the nri table, e.g. "plugin_request_timeout = '5s'"
};

// Images every fixture imports into the k8s.io namespace, made from
// busybox-static (one layer; PATH set in the image config).
inline constexpr const char* kCriBusyboxImage = "localhost/oci-rlimit/busybox:1";  // Cmd: sh
inline constexpr const char* kCriPauseImage = "localhost/oci-rlimit/pause:1";      // sleeps

class CriContainerd {
 public:
  struct Options : DaemonOptions {
    ContainerdRelease release = Containerd16();
    std::vector<RuntimeHandler> handlers;  // besides the default "runc"
    std::optional<NriSetup> nri;           // off unless set (also on 2.x)
    std::string extra_toml;                // appended to the config verbatim
    // More lines for the CRI runtime table itself, e.g. "enable_cdi = true"
    // (the fixture's minimal config only).
    std::string cri_toml;
    // Start from this release's own `containerd config default` instead of
    // the fixture's minimal config, with only what this sandbox needs set in
    // place (StockConfigText): temp paths, restrict_oom_score_adj, an empty
    // CNI dir, the pause image. `handlers` and `extra_toml` are appended.
    bool stock_config = false;
    // Runs on config_path() once the config is written and before containerd
    // starts, e.g. the node installer. An error text makes ok() false.
    std::function<std::optional<std::string>(const std::string& config_path)> edit_config;
  };
  explicit CriContainerd(const Options& opts);
  ~CriContainerd();
  CriContainerd(const CriContainerd&) = delete;
  CriContainerd& operator=(const CriContainerd&) = delete;

  bool ok() const { return error_.empty(); }
  // Why the daemon is not usable, with the end of its log.
  const std::string& error() const { return error_; }

  CriClient& cri() { return *client_; }
  // `containerd --version`'s version, e.g. "1.7.24~ds1".
  const std::string& version() const { return version_; }
  const ContainerdRelease& release() const { return release_; }
  std::string Log() const;
  const TempDir& dir() const { return dir_; }
  std::string socket() const { return dir_ / "containerd.sock"; }
  std::string config_path() const { return dir_ / "containerd.toml"; }
  std::string nri_socket() const { return dir_ / "nri/nri.sock"; }
  std::string nri_plugin_dir() const { return dir_ / "nri/plugins"; }
  std::string nri_config_dir() const { return dir_ / "nri/conf.d"; }
  // The runc --root every handler's runtime gets (Options.Root).
  std::string runc_root() const { return dir_ / "runc"; }

  // A pod kubelet would send for a hostNetwork pod: host network, own PID
  // namespace per container, logs and cgroup parent in the fixture's space.
  PodSpec NewPod(const std::string& name, const std::string& handler = "") const;
  // A container from kCriBusyboxImage running `command`.
  static ContainerSpec NewContainer(const std::string& name,
                                    const std::vector<std::string>& command);

  // RunPodSandbox; every pod is stopped and removed on teardown.
  [[nodiscard]] Result<Pod> RunPod(const PodSpec& spec);
  // CreateContainer then StartContainer; returns the container id.
  [[nodiscard]] Result<std::string> RunContainer(const Pod& pod, const ContainerSpec& spec);
  // The container's stdout and stderr lines from its CRI log file, without
  // the timestamp/stream/tag prefix.
  std::string ContainerLog(const Pod& pod, const ContainerSpec& spec) const;
  // Polls ContainerLog until it contains `needle`.
  [[nodiscard]] Result<std::string> WaitForLog(
      const Pod& pod, const ContainerSpec& spec, const std::string& needle,
      std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;

  // `ctr -a SOCK -n k8s.io args...` with this release's ctr.
  CmdResult Ctr(const std::vector<std::string>& args, const RunOptions& opts = {});
  // Stops and removes every container and pod; for cleanup, never fails a test.
  void RemoveAll();
  // Stops containerd (SIGTERM: its shims, and so the running pods, stay) and
  // starts it again on config_path() as it is now, with the same root, state
  // and socket, as `systemctl restart containerd` does on a node. An error
  // text, or nullopt once CRI is ready again.
  [[nodiscard]] std::optional<std::string> Restart();

 private:
  std::string ConfigText(const Options& opts) const;
  // `containerd config default` with the sandbox's settings; "" and error_ set on failure.
  std::string StockConfigText(const Options& opts);
  std::string HandlerTables(const std::string& cri,
                            const std::vector<RuntimeHandler>& handlers) const;
  void KillLeftovers();
  // Starts containerd on config_path() and waits for CRI with both images;
  // `import`: load the images first. An error text, or nullopt.
  std::optional<std::string> Launch(bool import);

  HostLeftovers leftovers_;  // first in, last out: cleans after the daemon stops
  TempDir dir_;
  ContainerdRelease release_;
  BackgroundProcess proc_;
  std::unique_ptr<CriClient> client_;
  std::string version_;
  std::string cgroup_parent_;
  DaemonOptions daemon_;
  std::string error_;
};

// Writes an OCI image layout tar at `tar` holding kCriBusyboxImage and
// kCriPauseImage (names in io.containerd.image.name), built from a busybox
// rootfs under `work`. Returns an error text or nullopt.
std::optional<std::string> MakeImageLayoutTar(const std::string& work, const std::string& tar);

}  // namespace ocirlimit::itest::cri
