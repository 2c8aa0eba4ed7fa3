// A node's life on a real containerd 2.x (lifecycle_driver.h): containerd
// with NRI and the wrapper's handler, under `prlimit --memlock=1M:8M` (no
// CAP_SYS_RESOURCE here, so every limit the policy gives is within its hard
// limit); oci-rlimit-nri on its NRI socket; one policy file that the plugin
// reads by --config and the wrapper through containerd's OCI_RLIMIT_CONFIG.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "cri_containerd.h"
#include "harness.h"
#include "lifecycle_driver.h"
#include "lifecycle_upgrade.h"

namespace ocirlimit::itest::lifecycle {
namespace {

using cri::CriContainerd;
const std::vector<std::string> kDaemonPrefix = {"prlimit", "--memlock=1048576:8388608"};

class ContainerdNode : public LifecycleNode {
 public:
  explicit ContainerdNode(const TempDir& dir) : dir_(dir) {}
  ~ContainerdNode() override { KillPlugin(); }

  std::optional<std::string> Start() {
    std::filesystem::create_directories(RunDir());
    WritePolicy(0);
    CriContainerd::Options opts;
    opts.release = cri::Containerd2();
    opts.prefix = kDaemonPrefix;
    // The wrapper's decision records in the fixture's run dir, never the host's /run.
    opts.env = {"OCI_RLIMIT_CONFIG=" + PluginConfig(), DecisionsEnv()};
    opts.nri = cri::NriSetup{};
    cri::RuntimeHandler handler;
    handler.name = kHandlerName;
    // A copy the upgrade can replace (lifecycle_upgrade.h).
    std::filesystem::create_directories(dir_ / "bin");
    std::filesystem::copy_file(OurBinary("oci-rlimit-runtime"), WrapperPath());
    handler.binary_name = WrapperPath();
    handler.pod_annotations = {"example.com/*", "oci-rlimit.io/*"};
    opts.handlers = {handler};
    engine_ = std::make_unique<CriContainerd>(opts);
    if (!engine_->ok()) return engine_->error();
    return StartPlugin();
  }

  cri::CriClient& cri() override { return engine_->cri(); }
  cri::PodSpec NewPod(const std::string& name, const std::string& handler) override {
    return engine_->NewPod(name, handler);
  }
  Result<cri::Pod> RunPod(const cri::PodSpec& spec) override { return engine_->RunPod(spec); }
  Result<std::string> RunContainer(const cri::Pod& pod, const cri::ContainerSpec& spec) override {
    cri::ContainerSpec c = CriContainerd::NewContainer(spec.name, spec.command);
    return engine_->RunContainer(pod, c);
  }
  std::optional<std::string> RestartEngine() override { return engine_->Restart(); }
  std::string WrapperPath() const override { return dir_ / "bin/oci-rlimit-runtime"; }
  void RemoveAllPods() override { engine_->RemoveAll(); }
  void WritePolicy(int policy) override {
    WriteFile(PluginConfig(), PolicyText(policy, dir_ / "oci.log"));
  }
  CmdResult Audit() override {
    return RunCmd({OurBinary("oci-rlimit"), "audit", "--config", PluginConfig(), "--json",
                   "--no-default-roots", "--runtime-root", engine_->runc_root() + "/k8s.io"},
                  RunOptions{.stdin_data = "", .env = {DecisionsEnv()}, .cwd = ""});
  }
  void ClearRun() override {
    std::filesystem::remove_all(RunDir());
    std::filesystem::create_directories(RunDir());
  }

 protected:
  std::vector<std::string> PluginEnv() const override { return {DecisionsEnv()}; }
  std::string PluginConfig() const override { return dir_ / "config.toml"; }
  std::string NriSocket() const override { return engine_->nri_socket(); }
  std::string PluginStatusFile() const override { return RunDir() + "/nri.status"; }
  std::string LogDir() const override { return dir_.path(); }

 private:
  std::string RunDir() const { return dir_ / "run"; }
  std::string DecisionsEnv() const { return "OCI_RLIMIT_DECISIONS_DIR=" + RunDir() + "/decisions"; }
  const TempDir& dir_;
  std::unique_ptr<CriContainerd> engine_;
};

class ContainerdLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("prlimit");
    OCI_RLIMIT_REQUIRE_CONTAINERD(cri::Containerd2());
    for (const char* p : {"oci-rlimit-nri", "oci-rlimit-runtime", "oci-rlimit"}) {
      ASSERT_TRUE(Which(OurBinary(p))) << OurBinary(p) << " has not been built";
    }
    node_ = std::make_unique<ContainerdNode>(dir_);
    auto bad = OfferUpgrade(*node_);
    ASSERT_FALSE(bad) << *bad;
    auto err = node_->Start();
    ASSERT_FALSE(err) << *err;
  }

  TempDir dir_;
  std::unique_ptr<ContainerdNode> node_;
};

TEST_F(ContainerdLifecycleTest, RandomSequenceKeepsEveryInvariant) {
  PlaySequence(*node_, {}, LifecycleSeed(), "ContainerdLifecycleTest.Random*");
}

class ContainerdLifecycleFixedTest : public ContainerdLifecycleTest,
                                     public ::testing::WithParamInterface<Fixed> {};

TEST_P(ContainerdLifecycleFixedTest, KeepsEveryInvariant) {
  std::string bad;
  auto ops = ParseOps(GetParam().ops, &bad);
  ASSERT_TRUE(ops) << "an unknown operation: " << bad;
  PlaySequence(*node_, *ops, 0, "*ContainerdLifecycleFixedTest*/" + GetParam().name);
}

// NVIDIA's tools are played on CRI-O (lifecycle_nvidia.h), not here.
std::vector<Fixed> WithoutNvidia(std::vector<Fixed> all) {
  std::erase_if(all, [](const Fixed& f) { return f.ops.find("nvidia-") != std::string::npos; });
  return all;
}

INSTANTIATE_TEST_SUITE_P(Breaks, ContainerdLifecycleFixedTest,
                         ::testing::ValuesIn(WithoutNvidia(FixedSequences())),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ocirlimit::itest::lifecycle
