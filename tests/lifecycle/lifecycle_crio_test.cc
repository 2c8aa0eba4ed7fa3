// A node's life on a real CRI-O 1.31 (lifecycle_driver.h), in tests/crio's
// suite: the suite's crio (under `prlimit --memlock=1M:8M`, in its own mount
// namespace), the wrapper's handler as install.sh writes it (crio restarted
// to serve it), oci-rlimit-nri in that namespace on crio's NRI socket. The
// plugin reads its own file (so the installer's top-level drop-in does not
// reach plain pods); the wrapper reads /etc/oci-rlimit/config.toml, where
// the same policy is written.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>

#include "crio_node.h"
#include "harness.h"
#include "lifecycle_driver.h"
#include "lifecycle_nvidia.h"
#include "lifecycle_upgrade.h"

namespace ocirlimit::itest::lifecycle {
namespace {

using crio::CriO;

const std::vector<std::string> kInstallArgs = {"--runtime", "crio", "--rlimits", "memlock=8M"};

class CrioNode : public LifecycleNode, public NodeInstaller {
 public:
  CrioNode(CriO& crio, const TempDir& dir) : crio_(crio), dir_(dir) {}
  ~CrioNode() override {
    KillPlugin();
    nvidia_.reset();
  }

  // install.sh as CrioNodeTest::InstallSh runs it (lifecycle_installer.h).
  NodeInstaller* installer() override { return this; }
  CmdResult Install() override { return crio_.InNs(InstallArgv()); }
  CmdResult Uninstall() override {
    return crio_.InNs({"bash", Script(), "--uninstall", "--host-root", "/"});
  }
  bool InstallKilledAfter(std::chrono::milliseconds delay) override {
    std::vector<std::string> argv = crio_.NsPrefix();
    for (const auto& a : InstallArgv()) argv.push_back(a);
    return RunKilledAfter(argv, delay);
  }
  std::vector<std::string> Doctor() override {
    return DoctorChecks(crio_.InNs({OurBinary("oci-rlimit"), "doctor", "--json"}));
  }
  std::string Host(const std::string& path) const override { return crio_.Host(path); }
  std::string Engine() const override { return "crio"; }

  cri::CriClient& cri() override { return crio_.cri(); }
  cri::PodSpec NewPod(const std::string& name, const std::string& handler) override {
    return crio_.NewPod(name, handler);
  }
  Result<cri::Pod> RunPod(const cri::PodSpec& spec) override { return crio_.RunPod(spec); }
  Result<std::string> RunContainer(const cri::Pod& pod, const cri::ContainerSpec& spec) override {
    return crio_.RunContainer(pod, CriO::NewContainer(spec.name, spec.command));
  }
  std::optional<std::string> RestartEngine() override { return crio_.Restart(); }
  void RemoveAllPods() override {
    if (nvidia_) nvidia_->Kill();  // the toolkit's pod too
    crio_.RemoveAll();
  }
  std::string WrapperPath() const override {
    return crio_.Host("/usr/local/bin/oci-rlimit-runtime");
  }
  std::optional<std::string> RunExtra(const Op& op) override {
    if (NeedsExtra(op) != "nvidia" || !nvidia_) return LifecycleNode::RunExtra(op);
    const size_t before = plugin_running() ? Synchronizations() : 0;
    if (auto err = nvidia_->Run(op)) return err;
    if (!CrioNvidia::RestartsEngine(op) || !plugin_running()) return std::nullopt;
    return WaitSynchronized(before + 1);
  }
  // NVIDIA's toolkit from OCI_RLIMIT_NVIDIA_DIR; unset, the one line once.
  std::optional<std::string> OfferNvidia() {
    NvidiaBinaries nv = FindNvidiaToolkit(OCI_RLIMIT_NVIDIA_CACHE);
    if (!nv.error.empty()) return nv.error;
    if (!nv.skip.empty()) {
      static bool said = false;
      if (!said) std::cout << "lifecycle: NVIDIA's tools left out: " << nv.skip << std::endl;
      said = true;
      return std::nullopt;
    }
    nvidia_ = std::make_unique<CrioNvidia>(crio_, std::move(nv));
    extras.nvidia = true;
    return std::nullopt;
  }
  void WritePolicy(int policy) override {
    const std::string text = PolicyText(policy, dir_ / "oci.log");
    WriteFile(PluginConfig(), text);
    std::filesystem::create_directories(crio_.Host("/etc/oci-rlimit"));
    WriteFile(crio_.Host("/etc/oci-rlimit/config.toml"), text);
  }
  CmdResult Audit() override {
    return crio_.InNs({OurBinary("oci-rlimit"), "audit", "--config", PluginConfig(), "--json"});
  }
  void ClearRun() override {
    std::error_code ec;
    std::filesystem::remove_all(crio_.Host("/run/oci-rlimit"), ec);
  }

 protected:
  std::vector<std::string> PluginPrefix() const override { return crio_.NsPrefix(); }
  std::string PluginConfig() const override { return dir_ / "plugin.toml"; }
  std::string NriSocket() const override { return crio_.nri_socket(); }
  std::string PluginStatusFile() const override { return dir_ / "nri.status"; }
  std::string LogDir() const override { return dir_.path(); }

 private:
  static std::string Script() {
    return std::string(OCI_RLIMIT_SOURCE_DIR) + "/packaging/kubernetes/install.sh";
  }
  static std::vector<std::string> InstallArgv() {
    std::vector<std::string> argv = {
        "bash", Script(),   "--host-root",
        "/",    "--source", std::filesystem::path(OurBinary("oci-rlimit")).parent_path().string()};
    argv.insert(argv.end(), kInstallArgs.begin(), kInstallArgs.end());
    return argv;
  }

  CriO& crio_;
  const TempDir& dir_;
  std::unique_ptr<CrioNvidia> nvidia_;
};

class CrioLifecycleTest : public crio::CrioNodeTest {
 protected:
  void SetUp() override {
    crio::CrioNodeTest::SetUp();
    if (crio_ == nullptr || HasFatalFailure() || IsSkipped()) return;
    node_ = std::make_unique<CrioNode>(*crio_, dir_);
    for (auto bad : {OfferUpgrade(*node_), node_->OfferNvidia()}) ASSERT_FALSE(bad) << *bad;
    node_->WritePolicy(0);
    CmdResult r = InstallSh(kInstallArgs);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    ASSERT_NO_FATAL_FAILURE(RestartCrio());
    auto err = node_->StartPlugin();
    ASSERT_FALSE(err) << *err;
  }
  void TearDown() override {
    node_.reset();
    crio::CrioNodeTest::TearDown();
  }

  TempDir dir_;
  std::unique_ptr<CrioNode> node_;
};

TEST_F(CrioLifecycleTest, RandomSequenceKeepsEveryInvariant) {
  PlaySequence(*node_, {}, LifecycleSeed(), "CrioLifecycleTest.Random*");
}

class CrioLifecycleFixedTest : public CrioLifecycleTest,
                               public ::testing::WithParamInterface<Fixed> {};

TEST_P(CrioLifecycleFixedTest, KeepsEveryInvariant) {
  std::string bad;
  auto ops = ParseOps(GetParam().ops, &bad);
  ASSERT_TRUE(ops) << "an unknown operation: " << bad;
  PlaySequence(*node_, *ops, 0, "*CrioLifecycleFixedTest*/" + GetParam().name);
}

INSTANTIATE_TEST_SUITE_P(Breaks, CrioLifecycleFixedTest, ::testing::ValuesIn(FixedSequences()),
                         [](const auto& info) { return info.param.name; });
INSTANTIATE_TEST_SUITE_P(Installer, CrioLifecycleFixedTest,
                         ::testing::ValuesIn(InstallerSequences()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ocirlimit::itest::lifecycle
