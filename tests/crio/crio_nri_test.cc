// oci-rlimit-nri on a real CRI-O 1.31.13, connected to crio's NRI socket as
// the NRI DaemonSet connects it, pods on the default runc handler. Every
// assertion is on what the container's processes read from /proc/self/limits
// (or, for the heal, the init's /proc/1/limits read through ExecSync).
//
// crio runs under `prlimit --memlock=1M:8M` (kCrioMemlock); with no
// CAP_SYS_RESOURCE here, raising the soft limit up to the hard one and
// lowering the hard one are the changes this sandbox can prove.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <memory>
#include <thread>

#include "crio_fixture.h"
#include "crio_probe.h"
#include "daemons.h"
#include "harness.h"

namespace ocirlimit::itest::crio {
namespace {

constexpr Limit kConfigured{8 << 20, 8 << 20};  // memlock=8M
constexpr Limit kRequested{4 << 20, 8 << 20};   // memlock=4M:8M
constexpr Limit kHealed{2 << 20, 4 << 20};      // memlock=2M:4M

class CrioNriTest : public CrioTest {
 protected:
  void TearDown() override {
    if (plugin_) plugin_->Stop();
    CrioTest::TearDown();
  }

  std::string ConfigPath() const { return dir_ / "config.toml"; }
  std::string LogPath() const { return dir_ / "oci.log"; }

  // The plugin in the namespace (the heal reads the runtime's state under
  // /run/crun there), on crio's NRI socket; returns once its output holds
  // `needle`.
  void StartPlugin(const std::string& needle = "configured by") {
    ++starts_;
    plugin_ = std::make_unique<BackgroundProcess>();
    std::vector<std::string> argv = crio_->NsPrefix();
    for (const std::string& a : {OurBinary("oci-rlimit-nri"), std::string("--config"), ConfigPath(),
                                 std::string("--socket"), crio_->nri_socket(),
                                 std::string("--status-file"), dir_ / "nri.status"}) {
      argv.push_back(a);
    }
    auto err = plugin_->Start(argv, {}, dir_ / ("plugin-" + std::to_string(starts_) + ".log"));
    ASSERT_FALSE(err) << *err;
    auto said = plugin_->WaitForLog("the plugin", needle,
                                    BackgroundProcess::Clock::now() + std::chrono::seconds(20));
    ASSERT_FALSE(said) << *said << "\n" << Tail(crio_->Log());
  }

  TempDir dir_;
  std::unique_ptr<BackgroundProcess> plugin_;
  int starts_ = 0;
};

TEST_F(CrioNriTest, InitAndExecReadTheConfiguredLimit) {
  WriteFile(ConfigPath(), "rlimits = [\"memlock=8M\"]\nlog-file = \"" + LogPath() + "\"\n");
  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  Probe r = RunProbe(*crio_, crio_->NewPod("nri-plain"));
  ASSERT_FALSE(r.id.empty()) << r.error;
  EXPECT_EQ(r.init, kConfigured) << "init";
  EXPECT_EQ(ExecMemlock(*crio_, r.id), kConfigured) << "ExecSync";
  std::string log = ReadFile(LogPath());
  EXPECT_NE(log.find("id=\"" + r.id + "\" via=\"nri\" set memlock="), std::string::npos) << log;
}

TEST_F(CrioNriTest, WithoutThePluginContainersKeepCriosLimit) {
  // The control: what every other test's limit differs from.
  Probe r = RunProbe(*crio_, crio_->NewPod("nri-none"));
  ASSERT_FALSE(r.id.empty()) << r.error;
  EXPECT_EQ(r.init, kCrioMemlock);
  EXPECT_EQ(ExecMemlock(*crio_, r.id), kCrioMemlock);
}

// A pod's request is an annotation on the sandbox only, as kubelet sends it.
TEST_F(CrioNriTest, APodRequestUnderTheCeilingReachesInitAndExec) {
  WriteFile(ConfigPath(),
            "[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\nover-ceiling = \"reject\"\n");
  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  PodSpec pod = crio_->NewPod("nri-asks");
  pod.annotations = {{kRequestAnnotation, "memlock=4M:8M"}};
  Probe r = RunProbe(*crio_, pod);
  ASSERT_FALSE(r.id.empty()) << r.error;
  EXPECT_EQ(r.init, kRequested) << "init";
  EXPECT_EQ(ExecMemlock(*crio_, r.id), kRequested) << "ExecSync";

  PodSpec greedy = crio_->NewPod("nri-greedy");
  greedy.annotations = {{kRequestAnnotation, "memlock=16M"}};
  Probe refused = RunProbe(*crio_, greedy);
  EXPECT_TRUE(refused.id.empty()) << "over the ceiling, with over-ceiling = reject";
  EXPECT_NE(refused.error.find("memlock"), std::string::npos) << refused.error;
}

// CRI-O gives NRI pid 0 for every container: the heal at Synchronize finds
// the init through the runtime's own state (runc under --root=/run/crun).
TEST_F(CrioNriTest, APodCreatedWhileThePluginWasDownIsHealedAtReconnect) {
  WriteFile(ConfigPath(), "log-file = \"" + LogPath() +
                              "\"\n[[rule]]\nname = \"heal\"\nrlimits = [\"memlock=2M:4M\"]\n"
                              "match = { annotations = { \"example.com/heal\" = \"true\" } }\n");
  ASSERT_NO_FATAL_FAILURE(StartPlugin());
  ASSERT_EQ(kill(plugin_->pid(), SIGKILL), 0);
  plugin_->Stop();

  PodSpec pod = crio_->NewPod("nri-missed");
  pod.annotations = {{"example.com/heal", "true"}};
  auto p = crio_->RunPod(pod);
  ASSERT_TRUE(p) << p.error().Text();
  auto id =
      crio_->RunContainer(*p, CriO::NewContainer("app", {"/bin/sh", "-c", "exec sleep 3600"}));
  ASSERT_TRUE(id) << id.error().Text();
  ASSERT_EQ(InitMemlock(*crio_, *id), kCrioMemlock) << "created while no plugin was connected";

  ASSERT_NO_FATAL_FAILURE(StartPlugin("synchronized:"));
  std::optional<Limit> got;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((got = InitMemlock(*crio_, *id)) != kHealed &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(got, kHealed) << "the init, after the plugin reconnected\n" << ReadFile(LogPath());
}

}  // namespace
}  // namespace ocirlimit::itest::crio
