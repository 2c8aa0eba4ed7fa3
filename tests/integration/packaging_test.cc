// The packaged artefacts with real programs: the hooks.d JSON under rootful
// podman (runc and crun), and the .deb installed with dpkg, used by podman
// through its default hooks dirs, then removed and purged.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "daemons.h"
#include "harness.h"

namespace ocirlimit::itest {
namespace {
namespace fs = std::filesystem;

constexpr Limit kHost{8 << 20, 8 << 20};
constexpr Limit kConfigured{1 << 20, 4 << 20};

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

constexpr const char* kPackage = "oci-rlimit";
constexpr const char* kEtcDir = "/etc/oci-rlimit";
constexpr const char* kConffile = "/etc/oci-rlimit/config.toml";

bool PackageInstalled() {
  CmdResult r = RunCmd({"dpkg-query", "-W", "-f=${Status}", kPackage});
  return r.status == 0 && r.out.find("installed") != std::string::npos &&
         r.out.find("not-installed") == std::string::npos;
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// The .deb built by CPack from this build tree, installed on this machine
// with dpkg, used by rootful podman through its default hooks dirs (no
// --hooks-dir), then removed and purged. TearDown purges whatever happens.
class DebPackageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("dpkg", "dpkg-deb", "cpack", "podman", "runc");
    ASSERT_FALSE(PackageInstalled()) << kPackage << " is already installed here; not ours to touch";
    ASSERT_FALSE(Exists(kEtcDir)) << kEtcDir << " exists without the package; not ours to touch";
    armed_ = true;
  }
  void TearDown() override {
    if (armed_ && PackageInstalled()) RunCmd({"dpkg", "--purge", kPackage});
  }

  // `cpack` with the build's config, staging and output in our temp dir.
  std::string BuildDeb() {
    CmdResult r =
        RunCmd({"cpack", "-G", "DEB", "--config",
                std::string(OCI_RLIMIT_BUILD_DIR) + "/CPackConfig.cmake", "-B", dir_ / "cpack"});
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    for (const auto& e : fs::directory_iterator(dir_ / "cpack")) {
      if (e.path().extension() == ".deb") return e.path().string();
    }
    ADD_FAILURE() << "cpack made no .deb: " << r.out;
    return "";
  }

  CmdResult Dpkg(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"dpkg"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunOptions opts;
    opts.env = {"DEBIAN_FRONTEND=noninteractive"};
    return RunCmd(argv, opts);
  }

  std::optional<Limit> PodmanMemlock(Podman& podman) {
    CmdResult r = podman.Run({"--runtime", *Which("runc")}, {}, kCatLimits);
    EXPECT_EQ(r.status, 0) << r.err;
    return LimitRow(r.out, kMemlock);
  }

  TempDir dir_;
  bool armed_ = false;
};

TEST_F(DebPackageTest, InstallUseRemovePurge) {
  const std::string deb = BuildDeb();
  ASSERT_FALSE(deb.empty());
  CmdResult conffiles = RunCmd({"dpkg-deb", "-I", deb, "conffiles"});
  EXPECT_EQ(conffiles.out, std::string(kConffile) + "\n");

  Podman podman;  // imported before install, so the package's hook sees only `run`
  ASSERT_TRUE(podman.ok()) << podman.error();

  CmdResult installed = Dpkg({"-i", deb});
  ASSERT_EQ(installed.status, 0) << installed.out << installed.err;
  EXPECT_EQ(installed.err, "");
  std::vector<std::string> files = Lines(Dpkg({"-L", kPackage}).out);
  for (const std::string want :
       {"/usr/bin/oci-rlimit-hook", kConffile, "/usr/share/containers/oci/hooks.d/oci-rlimit.json",
        "/usr/lib/oci-rlimit/shim/nvidia-container-runtime-hook",
        "/usr/share/oci-rlimit/docker/oci-rlimit.conf", "/usr/share/man/man8/oci-rlimit.8.gz",
        "/usr/share/man/man8/oci-rlimit-hook.8.gz", "/usr/share/man/man8/oci-rlimit-runtime.8.gz",
        "/usr/share/man/man8/oci-prlimit-helper.8.gz", "/usr/share/man/man8/oci-rlimit-nri.8.gz",
        // where `oci-rlimit doctor` tells admins to copy the hooks.d file from
        "/usr/share/oci-rlimit/hooks.d/oci-rlimit.json", "/usr/share/doc/oci-rlimit/docs/policy.md",
        "/usr/share/doc/oci-rlimit/docs/deployment.md", "/usr/share/doc/oci-rlimit/README.md",
        "/usr/bin/oci-rlimit-nri", "/usr/lib/systemd/system/oci-rlimit-nri.service",
        "/usr/share/oci-rlimit/nri/10-oci-rlimit", "/usr/share/doc/oci-rlimit/docs/nri.md",
        // what README's quick starts name (tests/readme/shell_blocks_test.sh)
        "/usr/bin/oci-rlimit-runtime", "/usr/bin/oci-prlimit-helper", "/usr/bin/oci-rlimit",
        "/usr/share/oci-rlimit/kubernetes/nri",
        "/usr/share/oci-rlimit/kubernetes/nri/nri-daemonset.yaml",
        "/usr/share/oci-rlimit/kubernetes/nri/kustomization.yaml",
        "/usr/share/oci-rlimit/kubernetes/base/config.toml",
        "/usr/share/oci-rlimit/kubernetes/install.sh"}) {
    EXPECT_NE(std::find(files.begin(), files.end(), want), files.end()) << want;
    EXPECT_TRUE(Exists(want)) << want;
  }
  EXPECT_EQ(fs::canonical("/usr/lib/oci-rlimit/shim/nvidia-container-runtime-hook"),
            "/usr/bin/oci-rlimit-hook");
  EXPECT_FALSE(Exists("/etc/systemd/system/docker.service.d/oci-rlimit.conf"))
      << "the docker drop-in must not be enabled by installing";
  EXPECT_FALSE(Exists("/etc/systemd/system/multi-user.target.wants/oci-rlimit-nri.service"))
      << "the NRI plugin's unit must not be enabled by installing";
  EXPECT_EQ(fs::read_symlink("/usr/share/oci-rlimit/nri/10-oci-rlimit"), "/usr/bin/oci-rlimit-nri")
      << "the pre-registered example";

  EXPECT_EQ(PodmanMemlock(podman), kHost) << "the packaged config must change nothing";
  const std::string shipped = ReadFile(kConffile);
  WriteFile(kConffile, "rlimits = [\"memlock=1M:4M\"]\n");
  EXPECT_EQ(PodmanMemlock(podman), kConfigured) << "podman's default hooks dir, our config";
  WriteFile(kConffile, shipped);

  // Directories may be shared (/usr/bin, ...); every file is ours.
  std::vector<std::string> ours;
  for (const auto& f : files) {
    if (!fs::is_directory(fs::symlink_status(f))) ours.push_back(f);
  }
  CmdResult removed = Dpkg({"-r", kPackage});
  ASSERT_EQ(removed.status, 0) << removed.err;
  EXPECT_EQ(removed.err, "");
  EXPECT_FALSE(Exists("/usr/bin/oci-rlimit-hook"));
  EXPECT_TRUE(Exists(kConffile)) << "remove keeps conffiles";
  EXPECT_EQ(PodmanMemlock(podman), kHost);

  CmdResult purged = Dpkg({"-P", kPackage});
  ASSERT_EQ(purged.status, 0) << purged.err;
  EXPECT_EQ(purged.err, "");
  EXPECT_FALSE(PackageInstalled());
  for (const auto& f : ours) EXPECT_FALSE(Exists(f)) << f << " left after purge";
  for (const char* dir :
       {kEtcDir, "/usr/lib/oci-rlimit", "/usr/share/oci-rlimit", "/usr/share/doc/oci-rlimit"}) {
    EXPECT_FALSE(Exists(dir)) << dir << " left after purge";
  }
}

}  // namespace
}  // namespace ocirlimit::itest
