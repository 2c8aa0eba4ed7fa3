// The packaged artefacts with real programs: the hooks.d JSON under rootful
// podman (runc and crun), and the .deb installed with dpkg, used by podman
// through its default hooks dirs, then removed and purged.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "daemons.h"
#include "harness.h"

namespace ocirlimit::itest {
namespace {
namespace fs = std::filesystem;

constexpr const char* kMemlock = "Max locked memory";
constexpr Limit kHost{8 << 20, 8 << 20};
constexpr Limit kConfigured{1 << 20, 4 << 20};
const std::vector<std::string> kCatLimits = {"cat", "/proc/self/limits"};

std::string Packaging(const std::string& rel) {
  return std::string(OCI_RLIMIT_SOURCE_DIR) + "/packaging/" + rel;
}

// A packaged hooks.d file in `dir`, pointed at the build's hook and config:
// the stage, args and `when` are the packaged ones.
void InstallHookFile(const std::string& packaged, const std::string& dir,
                     const std::string& config) {
  Json hook = Json::parse(ReadFile(Packaging(packaged)));
  ASSERT_EQ(hook["hook"]["path"], "/usr/bin/oci-rlimit-hook") << packaged;
  hook["hook"]["path"] = OurBinary("oci-rlimit-hook");
  hook["hook"]["env"] = Json::array({"OCI_RLIMIT_CONFIG=" + config});
  fs::create_directories(dir);
  WriteFile(dir + "/" + fs::path(packaged).filename().string(), hook.dump(2));
}

class PodmanHooksDirTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("podman", GetParam(), "unshare");
    podman_ = std::make_unique<Podman>();
    ASSERT_TRUE(podman_->ok()) << podman_->error();
    WriteFile(config(), "rlimits = [\"memlock=1M:4M\"]\n");
    // Name the runtime every time: podman's default is crun when installed.
    runtime_ = {"--runtime", GetParam() == "crun" ? CrunCommand(dir_.path()) : *Which("runc")};
  }
  std::string config() const { return dir_ / "config.toml"; }
  std::string hooks_dir() const { return dir_ / "hooks.d"; }

  std::optional<Limit> Memlock(const std::vector<std::string>& flags = {}) {
    std::vector<std::string> global = runtime_;
    global.insert(global.end(), {"--hooks-dir", hooks_dir()});
    CmdResult r = podman_->Run(global, flags, kCatLimits);
    EXPECT_EQ(r.status, 0) << r.err;
    return LimitRow(r.out, kMemlock);
  }

  TempDir dir_;
  std::unique_ptr<Podman> podman_;
  std::vector<std::string> runtime_;
};

TEST_P(PodmanHooksDirTest, PackagedCreateRuntimeFileAppliesTheLimit) {
  fs::create_directories(hooks_dir());
  ASSERT_EQ(Memlock(), kHost) << "empty hooks dir";
  InstallHookFile("hooks.d/oci-rlimit.json", hooks_dir(), config());
  EXPECT_EQ(Memlock(), kConfigured);
}

TEST_P(PodmanHooksDirTest, PrecreateExampleAppliesTheLimit) {
  InstallHookFile("hooks.d/examples/oci-rlimit-precreate.json", hooks_dir(), config());
  EXPECT_EQ(Memlock(), kConfigured);
}

TEST_P(PodmanHooksDirTest, AnnotationExampleScopesToAnnotatedContainers) {
  InstallHookFile("hooks.d/examples/oci-rlimit-annotation.json", hooks_dir(), config());
  EXPECT_EQ(Memlock(), kHost) << "no annotation";
  EXPECT_EQ(Memlock({"--annotation", "oci-rlimit.io/enable=false"}), kHost);
  EXPECT_EQ(Memlock({"--annotation", "oci-rlimit.io/enable=true"}), kConfigured);
}

// The default config is a no-op: the hook runs and changes nothing.
TEST_P(PodmanHooksDirTest, PackagedDefaultConfigChangesNothing) {
  InstallHookFile("hooks.d/oci-rlimit.json", hooks_dir(), Packaging("config.toml"));
  EXPECT_EQ(Memlock(), kHost);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, PodmanHooksDirTest, ::testing::Values("runc", "crun"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ocirlimit::itest
