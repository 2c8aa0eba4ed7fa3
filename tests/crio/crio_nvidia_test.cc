// NVIDIA's real toolkit (v1.20.0, from OCI_RLIMIT_NVIDIA_DIR: .ci/run points
// it at ../shared/nvidia) beside oci-rlimit on the real CRI-O 1.31.13:
// `nvidia-ctk runtime configure --runtime=crio` writes 99-nvidia.toml beside
// our handler; the `--nvidia` handler chains the real nvidia-container-runtime,
// and its pods are stopped and removed after NVIDIA's toolkit is gone; a
// refused uninstall is finished by the same command, and doctor is not clean
// until crio restarts after it (issue 44, breaks 3, 4 and 5).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "crio_node.h"
#include "crio_probe.h"
#include "daemons.h"
#include "pinned.h"

namespace ocirlimit::itest::crio {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kInstall = {"--runtime", "crio", "--rlimits", "memlock=8M"};
constexpr const char* kNvidiaRuntime = "/usr/local/bin/nvidia-container-runtime";
constexpr const char* kNvidiaDropIn = "/etc/crio/crio.conf.d/99-nvidia.toml";
constexpr const char* kStale = "before its config last changed";
// Where nvidia-ctk-installer puts the toolkit here: under the namespace's
// overlaid /usr/local/bin (its default /usr/local/nvidia is the machine's).
constexpr const char* kToolkitDir = "/usr/local/bin/nvidia-toolkit";

class CrioNvidiaTest : public CrioNodeTest {
 protected:
  void SetUp() override {
    CrioNodeTest::SetUp();
    if (crio_ == nullptr || HasFatalFailure() || IsSkipped()) return;
    nv_ = FindNvidiaToolkit(OCI_RLIMIT_NVIDIA_CACHE);
    ASSERT_EQ(nv_.error, "");
    if (!nv_.skip.empty()) GTEST_SKIP() << nv_.skip;
  }
  // NVIDIA's runtime on the node's PATH, and its drop-in as nvidia-ctk writes it.
  void ConfigureNvidia() {
    fs::copy_file(nv_.Path("nvidia-container-runtime"), crio_->Host(kNvidiaRuntime),
                  fs::copy_options::overwrite_existing);
    CmdResult r = crio_->InNs({nv_.Path("nvidia-ctk"), "runtime", "configure", "--runtime=crio",
                               "--nvidia-runtime-path", kNvidiaRuntime});
    config_changed_ = true;
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    ASSERT_TRUE(fs::exists(crio_->Host(kNvidiaDropIn))) << r.err;
  }
  void StopAndRemove(const std::string& id, const std::string& pod) {
    EXPECT_TRUE(crio_->cri().StopContainer(id, 0)) << Tail(crio_->Log());
    EXPECT_TRUE(crio_->cri().RemoveContainer(id)) << Tail(crio_->Log());
    EXPECT_TRUE(crio_->cri().StopPodSandbox(pod)) << Tail(crio_->Log());
    EXPECT_TRUE(crio_->cri().RemovePodSandbox(pod)) << Tail(crio_->Log());
  }
  // The toolkit pod's source root (README: usr/bin with NVIDIA's programs
  // and stand-ins for libnvidia-container's).
  std::string SourceRoot() { return NvidiaSourceRoot(nv_, crio_->dir() + "/nvidia-src"); }
  // nvidia-ctk-installer in the namespace, as the operator runs it on CRI-O.
  void StartInstaller(BackgroundProcess& p, const std::vector<std::string>& extra, int n) {
    std::vector<std::string> argv = crio_->NsPrefix();
    argv.insert(argv.end(), {"env", "RUNTIME=crio", "NVIDIA_RUNTIME_SET_AS_DEFAULT=false",
                             nv_.Path("nvidia-ctk-installer"), "--toolkit-source-root",
                             SourceRoot(), "--toolkit-install-dir", kToolkitDir, "--host-root", "/",
                             "--restart-mode", "none"});
    argv.insert(argv.end(), extra.begin(), extra.end());
    config_changed_ = true;
    auto err = p.Start(argv, {}, crio_->dir() + "/nvidia-installer-" + std::to_string(n) + ".log");
    ASSERT_FALSE(err) << *err;
    auto ready = p.WaitReady(
        "nvidia-ctk-installer's drop-in",
        [&]() -> std::optional<std::string> {
          if (fs::exists(crio_->Host(kNvidiaDropIn))) return std::nullopt;
          return "no " + std::string(kNvidiaDropIn);
        },
        BackgroundProcess::Clock::now() + std::chrono::seconds(60));
    ASSERT_FALSE(ready) << *ready;
  }
  // SIGTERM, as kubelet stops the toolkit pod; the installer's cleanup runs.
  static void Terminate(BackgroundProcess& p) {
    kill(p.pid(), SIGTERM);
    for (int i = 0; i < 200 && p.Running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_FALSE(p.Running()) << "nvidia-ctk-installer did not exit on SIGTERM\n" << p.Log();
  }
  NvidiaBinaries nv_;
};

TEST_F(CrioNvidiaTest, NvidiaCtkConfigureBesideOurHandler) {
  ASSERT_NO_FATAL_FAILURE(ConfigureNvidia());
  CmdResult i = InstallSh(kInstall);
  ASSERT_EQ(i.status, 0) << i.out << i.err;
  ASSERT_NO_FATAL_FAILURE(RestartCrio());
  EXPECT_TRUE(fs::exists(crio_->Host(kNvidiaDropIn))) << "NVIDIA's drop-in stays";
  Probe ours = RunProbe(*crio_, crio_->NewPod("ours", kHandler));
  ASSERT_EQ(ours.error, "") << Tail(crio_->Log());
  EXPECT_EQ(ours.init, kInstalled) << "a pod with runtimeClassName oci-rlimit";
  Probe nvidia = RunProbe(*crio_, crio_->NewPod("nvidia", "nvidia"));
  ASSERT_EQ(nvidia.error, "") << Tail(crio_->Log());
  EXPECT_EQ(nvidia.init, kCrioMemlock) << "NVIDIA's own handler, through its real runtime";
  const std::string line = DoctorLine({"CRI-O", "runtime handler \"nvidia\""});
  EXPECT_NE(line, "");
  EXPECT_FALSE(line.starts_with("FAIL")) << line;
  EXPECT_EQ(DoctorLine({kStale}), "");
}

// Break 5: NVIDIA's runtime and drop-in removed, crio restarted: a new pod
// of the --nvidia handler fails, doctor's FAIL names the running one, and
// that one is still stopped and removed (the wrapper's lifecycle commands
// reach runc).
TEST_F(CrioNvidiaTest, NvidiaHandlerPodsAreRemovedAfterTheToolkitIsGone) {
  ASSERT_NO_FATAL_FAILURE(ConfigureNvidia());
  std::vector<std::string> args = kInstall;
  args.insert(args.end(), {"--nvidia", "--nvidia-runtime", kNvidiaRuntime});
  CmdResult i = InstallSh(args);
  ASSERT_EQ(i.status, 0) << i.out << i.err;
  ASSERT_NO_FATAL_FAILURE(RestartCrio());
  Probe gpu = RunProbe(*crio_, crio_->NewPod("gpu", kHandler));
  ASSERT_EQ(gpu.error, "") << Tail(crio_->Log());
  EXPECT_EQ(gpu.init, kInstalled) << "through oci-rlimit-runtime and NVIDIA's runtime";

  fs::remove(crio_->Host(kNvidiaRuntime));
  fs::remove(crio_->Host(kNvidiaDropIn));
  ASSERT_NO_FATAL_FAILURE(RestartCrio());
  const std::string fail = DoctorLine({"runtimeClassName oci-rlimit fail to start"});
  EXPECT_NE(fail.find("1 still run (default/gpu ("), std::string::npos) << fail;
  Probe fresh = RunProbe(*crio_, crio_->NewPod("fresh", kHandler));
  EXPECT_NE(fresh.error, "") << "a GPU pod must not start without its GPU";
  StopAndRemove(gpu.id, gpu.pod);
  if (!fresh.pod.empty()) {
    EXPECT_TRUE(crio_->cri().StopPodSandbox(fresh.pod));
    EXPECT_TRUE(crio_->cri().RemovePodSandbox(fresh.pod));
  }
}

// Breaks 3 and 4: a refused uninstall keeps the CLI and the record, so the
// same command (from a copy of the script, with no --source) finishes it;
// after that, until crio restarts, doctor from the build is not clean.
TEST_F(CrioNvidiaTest, ARefusedUninstallIsFinishedLaterAndDoctorWaitsForTheRestart) {
  CmdResult i = InstallSh(kInstall);
  ASSERT_EQ(i.status, 0) << i.out << i.err;
  ASSERT_NO_FATAL_FAILURE(RestartCrio());
  Probe p = RunProbe(*crio_, crio_->NewPod("kept", kHandler));
  ASSERT_EQ(p.error, "");
  CmdResult refused = UninstallSh();
  EXPECT_EQ(refused.status, 3) << refused.out << refused.err;
  EXPECT_TRUE(fs::exists(crio_->Host("/usr/local/bin/oci-rlimit")));
  EXPECT_TRUE(fs::exists(crio_->Host("/var/lib/oci-rlimit/node-install/manifest")));
  StopAndRemove(p.id, p.pod);

  const std::string copy = crio_->dir() + "/install-copy.sh";
  fs::copy_file(std::string(OCI_RLIMIT_SOURCE_DIR) + "/packaging/kubernetes/install.sh", copy,
                fs::copy_options::overwrite_existing);
  CmdResult done = crio_->InNs({"bash", copy, "--uninstall", "--host-root", "/"});
  ASSERT_EQ(done.status, 0) << done.out << done.err;
  EXPECT_NE(done.out.find("crio must restart"), std::string::npos) << done.out;
  EXPECT_FALSE(fs::exists(crio_->Host("/var/lib/oci-rlimit")));
  EXPECT_TRUE(DoctorLine({kStale}).starts_with("FAIL")) << DoctorLine({kStale});
  Probe stale = RunProbe(*crio_, crio_->NewPod("stale", kHandler));
  EXPECT_NE(stale.error, "") << "crio still serves the removed handler";
  ASSERT_NO_FATAL_FAILURE(RestartCrio());
  EXPECT_EQ(DoctorLine({kStale}), "");
}

// nvidia-ctk-installer as the GPU Operator's toolkit pod runs it on CRI-O:
// it writes 99-nvidia.toml and waits; our handler beside it; SIGTERM leaves
// CRI-O's config alone and a rerun writes the same bytes. With
// --enable-nri-plugin on CRI-O's NRI socket, beside oci-rlimit-nri, doctor
// says NVIDIA's plugin is connected while crio has it, and not after.
TEST_F(CrioNvidiaTest, NvidiaInstallerAsTheOperatorRunsIt) {
  BackgroundProcess first;
  ASSERT_NO_FATAL_FAILURE(StartInstaller(first, {}, 1));
  const std::string written = ReadFile(crio_->Host(kNvidiaDropIn));
  EXPECT_NE(written.find("[crio.runtime.runtimes.nvidia]"), std::string::npos) << written;
  CmdResult i = InstallSh(kInstall);
  ASSERT_EQ(i.status, 0) << i.out << i.err;
  ASSERT_NO_FATAL_FAILURE(RestartCrio());
  Probe ours = RunProbe(*crio_, crio_->NewPod("ours", kHandler));
  ASSERT_EQ(ours.error, "") << Tail(crio_->Log());
  EXPECT_EQ(ours.init, kInstalled);
  Probe nvidia = RunProbe(*crio_, crio_->NewPod("nvidia", "nvidia"));
  EXPECT_EQ(nvidia.error, "") << "NVIDIA's handler, through the runtime its installer placed";
  ASSERT_NO_FATAL_FAILURE(Terminate(first));
  EXPECT_EQ(ReadFile(crio_->Host(kNvidiaDropIn)), written)
      << "SIGTERM removes nothing from CRI-O's";

  // Its NRI plugin on CRI-O's socket, beside ours.
  BackgroundProcess ours_nri;
  WriteFile(crio_->dir() + "/nri-config.toml", "rlimits = [\"memlock=8M\"]\n");
  std::vector<std::string> argv = crio_->NsPrefix();
  argv.insert(argv.end(),
              {OurBinary("oci-rlimit-nri"), "--config", crio_->dir() + "/nri-config.toml",
               "--socket", crio_->nri_socket(), "--status-file", crio_->dir() + "/nri.status"});
  ASSERT_FALSE(ours_nri.Start(argv, {}, crio_->dir() + "/oci-rlimit-nri.log"));
  BackgroundProcess plugin;
  ASSERT_NO_FATAL_FAILURE(StartInstaller(plugin,
                                         {"--enable-nri-plugin", "--nri-namespace", "gpu-operator",
                                          "--nri-socket", crio_->nri_socket()},
                                         2));
  EXPECT_EQ(ReadFile(crio_->Host(kNvidiaDropIn)), written) << "the rerun writes the same bytes";
  std::string connected;
  for (int i = 0; i < 100 && connected.empty(); ++i) {
    connected = DoctorLine({"NVIDIA's NRI plugin", "is connected to CRI-O"});
    if (connected.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_TRUE(connected.starts_with("ok")) << connected << "\n" << plugin.Log();
  EXPECT_TRUE(plugin.Running()) << "NVIDIA's plugin stays up only while it is connected\n"
                                << plugin.Log();
  ASSERT_NO_FATAL_FAILURE(Terminate(plugin));
  EXPECT_EQ(DoctorLine({"NVIDIA's NRI plugin", "is connected"}), "");
  ours_nri.Stop();
  crio_->RemoveAll();  // NVIDIA's handler stops its pod through the toolkit it placed
  std::error_code ec;
  fs::remove_all(crio_->Host(kToolkitDir), ec);
}

}  // namespace
}  // namespace ocirlimit::itest::crio
