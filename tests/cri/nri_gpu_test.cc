// GPU pods by CDI device (docs/policy.md, "GPU pods by CDI device") through
// CRI on containerd 2.x with CDI on, oci-rlimit-nri beside a stand-in for
// NVIDIA's NRI plugin (fake_nvidia_nri.cc), and a fake vendor CDI spec
// `nvidia.com/gpu=0` in the test's own spec dir (a device node /dev/nvidia0
// backed by the host's /dev/null, and an env). Two ways a GPU arrives:
// - the device plugin's (cdi-cri, cdi-annotations): kubelet puts the name on
//   the CONTAINER, as CRI CDI_devices and a cdi.k8s.io/... container
//   annotation; containerd resolves it before NRI, so oci-rlimit-nri sees the
//   device node and a `devices` rule matches;
// - NVIDIA's NRI plugin's: the pod annotation nvidia.cdi.k8s.io/container.NAME,
//   answered as CDI_devices and resolved after every plugin has answered, so
//   oci-rlimit-nri sees no device, and the `cdi` rule (with [cdi] injectors =
//   ["nvidia-nri"]) matches on the name.
// Each rule gives its own limit, and the cdi rule comes last, so a pod that
// matched both would read the cdi rule's. Asserted from /proc/self/limits in
// init and in ExecSync; the container also shows that it got the GPU.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cri_containerd.h"
#include "cri_probe.h"
#include "fake_cdi_spec.h"
#include "harness.h"

namespace ocirlimit::itest::cri {
namespace {

constexpr Limit kDaemon{1 << 20, 8 << 20};  // what containerd starts with
constexpr Limit kCdiRule{8 << 20, 8 << 20};
constexpr Limit kDevicesRule{4 << 20, 8 << 20};
constexpr const char* kGpu = "nvidia.com/gpu=0";

constexpr const char* kCdiSpec = kFakeCdiSpec;

constexpr const char* kConfig =
    "[cdi]\ninjectors = [\"nvidia-nri\"]\n"
    "[[rule]]\nname = \"gpu-devices\"\nrlimits = [\"memlock=4M:8M\"]\n"
    "match = { devices = [\"/dev/nvidia*\"] }\n"
    "[[rule]]\nname = \"gpu\"\nrlimits = [\"memlock=8M\"]\n"
    "match = { cdi = [\"nvidia.com/gpu=*\"] }\n";

// Says whether it got the GPU, then prints its limits and stays up.
const std::vector<std::string> kInitShowsGpu = {
    "/bin/sh", "-c",
    "echo \"gpu-env=$FAKE_GPU\"; [ -c /dev/nvidia0 ] && echo gpu-node=yes; "
    "while read -r l; do echo \"$l\"; done < /proc/self/limits; exec sleep 3600"};

class NriGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("prlimit");
    OCI_RLIMIT_REQUIRE_CONTAINERD(Containerd2());
    for (const char* p : {"oci-rlimit-nri", "fake-nvidia-nri"}) {
      ASSERT_TRUE(Which(OurBinary(p))) << p << " has not been built";
    }
    ASSERT_EQ(mkdir((dir_ / "cdi").c_str(), 0755), 0);
    WriteFile(dir_ / "cdi/nvidia.json", kCdiSpec);
    WriteFile(dir_ / "config.toml", kConfig);
    CriContainerd::Options opts;
    opts.release = Containerd2();
    opts.prefix = {"prlimit", "--memlock=1048576:8388608"};
    opts.nri = NriSetup{};
    opts.cri_toml = "  enable_cdi = true\n  cdi_spec_dirs = ['" + (dir_ / "cdi") + "']\n";
    containerd_ = std::make_unique<CriContainerd>(opts);
    ASSERT_TRUE(containerd_->ok()) << containerd_->error();
    ASSERT_NO_FATAL_FAILURE(StartOurs("ours.log", "configured by"));
    ASSERT_NO_FATAL_FAILURE(Start(nvidia_,
                                  {OurBinary("fake-nvidia-nri"), containerd_->nri_socket()},
                                  "nvidia.log", "configured"));
  }

  // oci-rlimit-nri, its decision records in the test's own directory.
  void StartOurs(const std::string& log, const std::string& ready) {
    ours_.reset();
    Start(ours_,
          {OurBinary("oci-rlimit-nri"), "--config", dir_ / "config.toml", "--socket",
           containerd_->nri_socket(), "--status-file", dir_ / "nri.status"},
          log, ready, {"OCI_RLIMIT_DECISIONS_DIR=" + (dir_ / "decisions")});
  }

  void Start(std::unique_ptr<BackgroundProcess>& p, const std::vector<std::string>& argv,
             const std::string& log, const std::string& ready, std::vector<std::string> env = {}) {
    p = std::make_unique<BackgroundProcess>();
    auto err = p->Start(argv, {.env = std::move(env), .path_dirs = {}, .prefix = {}}, dir_ / log);
    ASSERT_FALSE(err) << *err;
    auto up =
        p->WaitForLog(argv[0], ready, BackgroundProcess::Clock::now() + std::chrono::seconds(20));
    ASSERT_FALSE(up) << *up << "\n" << containerd_->Log();
  }

  // Runs pod `name` with `pod_ann` and container `c`; the container's log
  // once init printed its limits, and init's memlock.
  struct Ran {
    std::string id;
    std::string log;
    std::optional<Limit> init;
  };
  Ran Run(const std::string& name, const std::map<std::string, std::string>& pod_ann,
          const ContainerSpec& c) {
    PodSpec spec = containerd_->NewPod(name);
    spec.annotations = pod_ann;
    Ran r;
    auto pod = containerd_->RunPod(spec);
    EXPECT_TRUE(pod) << pod.error().Text();
    if (!pod) return r;
    auto id = containerd_->RunContainer(*pod, c);
    EXPECT_TRUE(id) << id.error().Text() << "\n" << containerd_->Log();
    if (!id) return r;
    auto log = containerd_->WaitForLog(*pod, c, kMemlock);
    EXPECT_TRUE(log) << log.error().Text();
    if (!log) return r;
    r.id = *id;
    r.log = *log;
    r.init = LimitRow(*log, kMemlock);
    return r;
  }

  TempDir dir_;
  std::unique_ptr<CriContainerd> containerd_;
  std::unique_ptr<BackgroundProcess> ours_;
  std::unique_ptr<BackgroundProcess> nvidia_;
};

TEST_F(NriGpuTest, BothGpuPathsReadTheirRulesLimitInInitAndExec) {
  ContainerSpec plugin_way = CriContainerd::NewContainer("limits", kInitShowsGpu);
  plugin_way.cdi_devices = {kGpu};
  plugin_way.annotations = {{"cdi.k8s.io/nvidia-device-plugin_GPU-0", kGpu}};
  Ran dp = Run("device-plugin", {}, plugin_way);
  ASSERT_FALSE(dp.id.empty());
  EXPECT_NE(dp.log.find("gpu-env=gpu0\ngpu-node=yes\n"), std::string::npos)
      << "containerd resolved the CRI CDI device: " << dp.log;
  EXPECT_EQ(dp.init, kDevicesRule) << "init: the devices rule, the cdi rule did not match";
  EXPECT_EQ(ExecMemlock(*containerd_, dp.id), kDevicesRule) << "ExecSync";

  ContainerSpec nri_way = CriContainerd::NewContainer("limits", kInitShowsGpu);
  Ran nri = Run("nri-plugin", {{"nvidia.cdi.k8s.io/container.limits", kGpu}}, nri_way);
  ASSERT_FALSE(nri.id.empty());
  EXPECT_NE(nri.log.find("gpu-env=gpu0\ngpu-node=yes\n"), std::string::npos)
      << "NVIDIA's plugin's CDI_devices reached the container: " << nri.log << "\n"
      << ReadFile(dir_ / "nvidia.log");
  EXPECT_EQ(nri.init, kCdiRule) << "init: the cdi rule";
  EXPECT_EQ(ExecMemlock(*containerd_, nri.id), kCdiRule) << "ExecSync";

  ContainerSpec plain = CriContainerd::NewContainer("limits", kInitShowsGpu);
  Ran none = Run("no-gpu", {}, plain);
  ASSERT_FALSE(none.id.empty());
  EXPECT_EQ(none.log.find("gpu-node=yes"), std::string::npos) << none.log;
  EXPECT_EQ(none.init, kDaemon) << "no GPU: no rule";
}

// Issue 44, break 1: the cdi rule first (6M:8M), the devices rule second
// (5M:8M). At CreateContainer only the cdi rule matches (the GPU's device
// node is added after every plugin answered); at Synchronize the container
// has it and both match, the later rule winning. The plugin's heal at its
// restart applies the decision recorded at CreateContainer, never a new one:
// init and a new exec still read 6M.
TEST_F(NriGpuTest, ARestartedPluginKeepsTheDecisionMadeAtCreate) {
  constexpr Limit kCdiFirst{6 << 20, 8 << 20};
  WriteFile(dir_ / "config.toml",
            "[cdi]\ninjectors = [\"nvidia-nri\"]\n"
            "[[rule]]\nname = \"gpu\"\nrlimits = [\"memlock=6M:8M\"]\n"
            "match = { cdi = [\"nvidia.com/gpu=*\"] }\n"
            "[[rule]]\nname = \"gpu-devices\"\nrlimits = [\"memlock=5M:8M\"]\n"
            "match = { devices = [\"/dev/nvidia*\"] }\n");
  ASSERT_NO_FATAL_FAILURE(StartOurs("ours-2.log", "configured by"));
  Ran nri = Run("nri-plugin", {{"nvidia.cdi.k8s.io/container.limits", kGpu}},
                CriContainerd::NewContainer("limits", kInitShowsGpu));
  ASSERT_FALSE(nri.id.empty());
  ASSERT_NE(nri.log.find("gpu-node=yes\n"), std::string::npos) << nri.log;
  EXPECT_EQ(nri.init, kCdiFirst) << "init at create: the cdi rule";

  ASSERT_NO_FATAL_FAILURE(StartOurs("ours-3.log", "synchronized:"));
  auto init = containerd_->cri().ExecSync(nri.id, {"cat", "/proc/1/limits"});
  ASSERT_TRUE(init) << init.error().Text();
  EXPECT_EQ(LimitRow(init->out, kMemlock), kCdiFirst) << "init after the heal";
  EXPECT_EQ(ExecMemlock(*containerd_, nri.id), kCdiFirst) << "a new exec";
  const std::string log = ReadFile(dir_ / "ours-3.log");
  EXPECT_EQ(log.find("via=\"nri-sync\""), std::string::npos) << "nothing changed: " << log;
  EXPECT_NE(log.find("synchronized: 1 containers, 1 ok"), std::string::npos) << log;
}

}  // namespace
}  // namespace ocirlimit::itest::cri
