// The NRI sample ulimit-adjuster itself (containerd/nri v0.12.2, unchanged,
// ../shared/peers/ulimit-adjuster) and oci-rlimit-nri, each alone on a real
// containerd 2.x's NRI socket, given the same pods: a handful of values of
// its annotation from tests/peers/ulimit_corpus.txt. Each container reads the
// same memlock from /proc/self/limits under both, or both refuse it, or ours
// refuses it as docs/policy.md lists (where the sample reads another number
// than the one written). OCI_RLIMIT_PEERS_DIR unset: skipped in one line.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cri_containerd.h"
#include "cri_probe.h"
#include "harness.h"
#include "peers.h"

namespace ocirlimit::itest::cri {
namespace {

const std::vector<std::string> kDaemonPrefix = {"prlimit", "--memlock=1048576:8388608"};
constexpr const char* kKey = "ulimits.noderesource.dev/container.limits";

struct Value {
  const char* yaml;
  std::optional<Limit> sample;  // what the sample's container reads; nullopt: refused
  const char* ours;             // "" when ours reads the same, else a part of our refusal
};

// Under containerd's own 1M:8M, as this sandbox can prove: nothing asks a
// hard limit over 8M.
const std::vector<Value> kValues = {
    {"- type: memlock\n  soft: 0x200000\n  hard: 0x800000\n", Limit{2 << 20, 8 << 20}, ""},
    {"[{type: RLIMIT_MEMLOCK, soft: 3e6, hard: 8_388_608}]", Limit{3000000, 8 << 20}, ""},
    {"- Type: Memlock\n  SOFT: 4194304\n  hard: 8388608\n  path: x\n", Limit{4 << 20, 8 << 20}, ""},
    {"[{type: memlock, soft:4194304, hard: 8388608}]", Limit{0, 8 << 20}, "is one key"},
    {"[{type: memlock, soft: 010000000, hard: 8388608}]", Limit{2 << 20, 8 << 20}, "octal"},
    {"- type: memlock\n  soft: \"4194304\"\n  hard: 8388608\n", std::nullopt, "is not a number"},
};

class UlimitSampleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("prlimit");
    OCI_RLIMIT_REQUIRE_CONTAINERD(Containerd2());
    adjuster_ = FindPeer("ulimit-adjuster", kUlimitAdjusterSha256, dir_);
    if (!adjuster_.error.empty()) FAIL() << adjuster_.error;
    if (!adjuster_.skip.empty()) GTEST_SKIP() << "the NRI sample plugin: " << adjuster_.skip;
    WriteFile(dir_ / "config.toml",
              "[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\n"
              "sources = [\"ulimit-adjuster\"]\n");
    CriContainerd::Options opts;
    opts.release = Containerd2();
    opts.prefix = kDaemonPrefix;
    opts.nri = NriSetup{};
    containerd_ = std::make_unique<CriContainerd>(opts);
    ASSERT_TRUE(containerd_->ok()) << containerd_->error();
  }

  // One plugin alone on the socket; returns once it has registered.
  void StartPlugin(const std::vector<std::string>& argv, const std::string& ready) {
    plugin_ = std::make_unique<BackgroundProcess>();
    auto err = plugin_->Start(argv, {}, dir_ / (std::to_string(++starts_) + ".log"));
    ASSERT_FALSE(err) << *err;
    auto up = plugin_->WaitForLog(argv[0], ready,
                                  BackgroundProcess::Clock::now() + std::chrono::seconds(20));
    ASSERT_FALSE(up) << *up << "\n" << containerd_->Log();
  }

  std::vector<Probe> RunAll(const std::string& prefix) {
    std::vector<Probe> out;
    for (size_t i = 0; i < kValues.size(); ++i) {
      PodSpec spec = containerd_->NewPod(prefix + std::to_string(i));
      spec.annotations = {{kKey, kValues[i].yaml}};
      out.push_back(
          RunProbe(*containerd_, spec, CriContainerd::NewContainer("limits", kInitPrintsLimits)));
    }
    plugin_.reset();
    return out;
  }

  TempDir dir_;
  PeerBinary adjuster_;
  std::unique_ptr<CriContainerd> containerd_;
  std::unique_ptr<BackgroundProcess> plugin_;
  int starts_ = 0;
};

TEST_F(UlimitSampleTest, ContainersReadTheSamplesLimitsOrOursRefusesAsListed) {
  ASSERT_NO_FATAL_FAILURE(StartPlugin({adjuster_.path, "-socket", containerd_->nri_socket(),
                                       "-name", "ulimit-adjuster", "-idx", "10", "-verbose"},
                                      "Started plugin"));
  // The sample logs before the runtime has synchronized it.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const std::vector<Probe> sample = RunAll("sample-");
  ASSERT_NO_FATAL_FAILURE(
      StartPlugin({OurBinary("oci-rlimit-nri"), "--config", dir_ / "config.toml", "--socket",
                   containerd_->nri_socket(), "--status-file", dir_ / "nri.status"},
                  "configured by"));
  const std::vector<Probe> ours = RunAll("ours-");
  for (size_t i = 0; i < kValues.size(); ++i) {
    const Value& v = kValues[i];
    SCOPED_TRACE(v.yaml);
    if (v.sample) {
      EXPECT_EQ(sample[i].init, v.sample) << "the sample: " << sample[i].error;
    } else {
      EXPECT_TRUE(sample[i].id.empty()) << "the sample started it";
    }
    if (*v.ours == '\0') {
      EXPECT_EQ(ours[i].init, sample[i].init) << ours[i].error;
    } else {
      EXPECT_TRUE(ours[i].id.empty()) << "ours started it";
      EXPECT_NE(ours[i].error.find(v.ours), std::string::npos) << ours[i].error;
    }
  }
}

}  // namespace
}  // namespace ocirlimit::itest::cri
