// The CRI-O node as the installer sees it: packaging/kubernetes/install.sh,
// `oci-rlimit doctor` and `oci-rlimit audit` run in the fixture's mount
// namespace with `--host-root /`, so they meet CRI-O's default paths
// (/etc/crio/crio.conf.d, /usr/local/bin, the hooks dirs, /run/crun) without
// touching the machine's own. CrioNodeTest puts the node back after each
// test: every file the installer or the test wrote is removed, and crio is
// restarted when its config changed.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crio_fixture.h"
#include "harness.h"

namespace ocirlimit::itest::crio {

class CrioNodeTest : public CrioTest {
 protected:
  void SetUp() override;
  void TearDown() override;
  // Removes every file the installer or a test wrote in the namespace, puts
  // /etc/crio/crio.conf back, and restarts crio when any of it changed.
  void ResetNode();

  // `bash packaging/kubernetes/install.sh --host-root / ARGS...` in the
  // namespace, with this build's programs as --source (install only).
  CmdResult InstallSh(const std::vector<std::string>& args);
  CmdResult UninstallSh(const std::vector<std::string>& args = {});
  // `oci-rlimit ARGS...` in the namespace.
  CmdResult Cli(const std::vector<std::string>& args);
  // doctor --json's checks as "STATUS AREA: WHAT" lines.
  std::vector<std::string> DoctorLines();
  // The first doctor line holding every one of `needles`, or "".
  std::string DoctorLine(const std::vector<std::string>& needles);
  // Writes `text` to `path` in the namespace (parents made).
  void WriteInNs(const std::string& path, const std::string& text, mode_t mode = 0644);
  // NVIDIA toolkit 1.19+'s drop-in and a stand-in nvidia-container-runtime
  // (it execs runc), as the GPU Operator leaves a CRI-O node.
  void AddNvidiaDropIn();
  // crio restarted; the test fails when it did not come back.
  void RestartCrio();
  // The init pid of container `id`, from runc's state under /run/crun.
  pid_t InitPid(const std::string& id);

  bool config_changed_ = false;  // TearDown restarts crio
  std::string crio_conf_;        // /etc/crio/crio.conf as the suite's crio reads it
};

// The installer's handler and drop-in, as docs/deployment.md names them.
inline constexpr const char* kHandler = "oci-rlimit";
inline constexpr const char* kDropIn = "/etc/crio/crio.conf.d/99-oci-rlimit.conf";
inline constexpr Limit kInstalled{8 << 20, 8 << 20};  // --rlimits memlock=8M

}  // namespace ocirlimit::itest::crio
