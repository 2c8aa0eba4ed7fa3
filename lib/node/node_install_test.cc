// The node installer's decisions (node_install.cc, node_uninstall.cc,
// node_loop.cc, node_preflight.cc) on a node root in a temporary directory:
// no engine runs; each test is one planted bug that must fail it (issue 30).
#include "node/node_install.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "node/node_loop.h"
#include "node/node_preflight.h"
#include "node/node_restart.h"
#include "tests/testing/temp_dir.h"

namespace ocirlimit::node {
namespace {
namespace fs = std::filesystem;

constexpr const char* kPrograms[] = {"oci-rlimit-hook", "oci-rlimit-runtime", "oci-prlimit-helper",
                                     "oci-rlimit"};

class NodeInstall : public ::testing::Test {
 protected:
  void SetUp() override {
    host_ = dir_ / "host";
    src_ = dir_ / "src";
    fs::create_directories(host_ + "/etc/containerd");
    fs::create_directories(src_);
    for (const char* p : kPrograms) Write(src_ + "/" + p, std::string("#!/bin/sh\n# ") + p + "\n");
    Write(host_ + "/etc/containerd/config.toml", "version = 2\n");
  }
  static void Write(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  int Install(InstallArgs a) {
    a.host = host_;
    a.source = src_;
    out_.str("");
    err_.str("");
    return RunInstall(a, out_, err_);
  }
  int Uninstall(bool force = false) {
    out_.str("");
    err_.str("");
    return RunUninstall({host_, force}, out_, err_);
  }
  // A container created through the wrapper, as containerd's runc shim
  // leaves it (node_live.h).
  void LiveContainer() {
    const std::string b = "/run/containerd/io.containerd.runtime.v2.task/k8s.io/abc123";
    Write(host_ + b + "/runtime", "/usr/local/bin/oci-rlimit-runtime");
    Write(host_ + "/run/containerd/runc/k8s.io/abc123/state.json",
          "{\"id\":\"abc123\",\"init_process_pid\":1,\"config\":{\"labels\":[\"bundle=" + b +
              "\"]}}");
  }

  testsupport::TempDir dir_;
  std::string host_, src_;
  std::ostringstream out_, err_;
};

InstallArgs Containerd() {
  InstallArgs a;
  a.runtime = "containerd";
  return a;
}

// node_install.cc: a rerun with the same --prefix is fine; another is refused.
TEST_F(NodeInstall, SamePrefixReinstallsAnotherIsRefused) {
  InstallArgs a = Containerd();
  a.prefix = "/opt/x";
  ASSERT_EQ(Install(a), 0) << err_.str();
  EXPECT_EQ(Install(a), 0) << err_.str();
  a.prefix = "/opt/y";
  EXPECT_EQ(Install(a), 1);
  EXPECT_NE(err_.str().find("this node is installed under \"/opt/x\""), std::string::npos)
      << err_.str();
}

// node_install.cc: a CRI-O hook a package put there is kept, never overwritten.
TEST_F(NodeInstall, KeepsAPackagesCrioHook) {
  fs::create_directories(host_ + "/etc/crio");
  const std::string hook = host_ + "/usr/share/containers/oci/hooks.d/oci-rlimit.json";
  Write(hook, "{\"package\": true}\n");
  InstallArgs a;
  a.runtime = "crio";
  ASSERT_EQ(Install(a), 0) << err_.str();
  EXPECT_EQ(Read(hook), "{\"package\": true}\n");
  EXPECT_NE(err_.str().find("not ours"), std::string::npos) << err_.str();
}

// node_uninstall.cc: --force removes the wrapper although a container uses it.
TEST_F(NodeInstall, UninstallForceRemovesTheWrapper) {
  ASSERT_EQ(Install(Containerd()), 0) << err_.str();
  LiveContainer();
  EXPECT_EQ(Uninstall(), 3);
  EXPECT_TRUE(fs::exists(host_ + "/usr/local/bin/oci-rlimit-runtime"));
  EXPECT_EQ(Uninstall(/*force=*/true), 0) << err_.str();
  EXPECT_FALSE(fs::exists(host_ + "/usr/local/bin/oci-rlimit-runtime"));
  EXPECT_NE(err_.str().find("--force: removed"), std::string::npos) << err_.str();
}

// node_uninstall.cc: a version 3 handler stays while its pods run.
TEST_F(NodeInstall, UninstallKeepsAVersion3HandlerWhilePodsRun) {
  Write(host_ + "/etc/containerd/config.toml", "version = 3\n");
  ASSERT_EQ(Install(Containerd()), 0) << err_.str();
  LiveContainer();
  EXPECT_EQ(Uninstall(), 3);
  EXPECT_NE(Read(host_ + "/etc/containerd/config.toml").find("oci-rlimit-runtime"),
            std::string::npos);
  fs::remove_all(host_ + "/run");
  EXPECT_EQ(Uninstall(), 0) << err_.str();
  EXPECT_EQ(Read(host_ + "/etc/containerd/config.toml"), "version = 3\n");
}

// node_loop.cc: NVIDIA's runtime whose own config runs the wrapper is a loop.
TEST_F(NodeInstall, RefusesNvidiasConfigLeadingBackToTheWrapper) {
  Write(host_ + "/usr/bin/nvidia-container-runtime", "#!/bin/sh\n");
  fs::permissions(host_ + "/usr/bin/nvidia-container-runtime", fs::perms::owner_all);
  Write(host_ + "/etc/nvidia-container-runtime/config.toml",
        "[nvidia-container-runtime]\nruntimes = [\"/usr/local/bin/oci-rlimit-runtime\"]\n");
  LoopQuery q{host_,
              "/usr/local/bin/oci-rlimit-runtime",
              src_ + "/oci-rlimit-runtime",
              {"/usr/bin/nvidia-container-runtime"},
              true,
              {"containerd"}};
  Status st = CheckNoLoop(q);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().Text().find("a loop"), std::string::npos) << st.error().Text();
}

// issue 30: a symlinked config.toml is refused before anything is written.
TEST_F(NodeInstall, SymlinkedConfigIsRefusedBeforeAnyWrite) {
  Write(host_ + "/etc/containerd/real.toml", "version = 2\n");
  fs::remove(host_ + "/etc/containerd/config.toml");
  fs::create_symlink("real.toml", host_ + "/etc/containerd/config.toml");
  EXPECT_EQ(Install(Containerd()), 1);
  EXPECT_NE(err_.str().find("a symlink"), std::string::npos) << err_.str();
  EXPECT_FALSE(fs::exists(host_ + "/usr/local/bin"));
  EXPECT_FALSE(fs::exists(host_ + "/etc/oci-rlimit"));
}

// issue 30: a version 3 config on containerd 1.7 is refused.
TEST_F(NodeInstall, Version3ConfigOnContainerd17IsRefused) {
  Write(host_ + "/etc/containerd/config.toml", "version = 3\n");
  Write(host_ + "/usr/bin/containerd",
        "#!/bin/sh\necho containerd github.com/containerd/containerd 1.7.24 abc\n");
  fs::permissions(host_ + "/usr/bin/containerd", fs::perms::owner_all);
  EXPECT_EQ(Install(Containerd()), 1);
  EXPECT_NE(err_.str().find("containerd 1.x reads versions 1 and 2 only"), std::string::npos)
      << err_.str();
  EXPECT_FALSE(fs::exists(host_ + "/usr/local/bin"));
}

// issue 29: NVIDIA's v1.20 drop-in defines the CRI table. containerd 1.7
// would hide a handler in config.toml behind it: refused before any write,
// naming the drop-in. containerd 2.x: our own drop-in after NVIDIA's.
void NvidiaNode(const std::string& host, const std::string& version_line) {
  std::ofstream(host + "/etc/containerd/config.toml")
      << "version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n";
  fs::create_directories(host + "/etc/containerd/conf.d");
  std::ofstream(host + "/etc/containerd/conf.d/99-nvidia.toml")
      << "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia]\n"
         "runtime_type = \"io.containerd.runc.v2\"\n";
  fs::create_directories(host + "/usr/bin");
  std::ofstream(host + "/usr/bin/containerd") << "#!/bin/sh\necho " << version_line << "\n";
  fs::permissions(host + "/usr/bin/containerd", fs::perms::owner_all);
}

TEST_F(NodeInstall, Containerd17BehindNvidiasDropinIsRefused) {
  NvidiaNode(host_, "containerd github.com/containerd/containerd 1.7.24 abc");
  EXPECT_EQ(Install(Containerd()), 1);
  EXPECT_NE(err_.str().find("only from /etc/containerd/conf.d/99-nvidia.toml"), std::string::npos)
      << err_.str();
  EXPECT_FALSE(fs::exists(host_ + "/usr/local/bin"));
}

TEST_F(NodeInstall, Containerd2GetsADropinAfterNvidias) {
  NvidiaNode(host_, "containerd github.com/containerd/containerd/v2 2.1.9 abc");
  ASSERT_EQ(Install(Containerd()), 0) << err_.str();
  EXPECT_NE(Read(host_ + "/etc/containerd/conf.d/99-oci-rlimit.toml").find("oci-rlimit-runtime"),
            std::string::npos);
  EXPECT_EQ(Read(host_ + "/etc/containerd/config.toml").find("oci-rlimit"), std::string::npos);
  ASSERT_EQ(Uninstall(), 0) << err_.str();
  EXPECT_FALSE(fs::exists(host_ + "/etc/containerd/conf.d/99-oci-rlimit.toml"));
}

// issue 29: CRI-O beside NVIDIA's 99-nvidia.conf holding a stale copy of our
// handler: ours is read after it. A later file that still overrides it is
// refused before any write, naming it.
TEST_F(NodeInstall, CrioHandlerIsReadAfterNvidiasDropin) {
  fs::create_directories(host_ + "/etc/crio/crio.conf.d");
  const std::string stale =
      "[crio.runtime.runtimes.oci-rlimit]\nruntime_path = \"/old/bin/oci-rlimit-runtime\"\n";
  Write(host_ + "/etc/crio/crio.conf.d/99-nvidia.conf", stale);
  InstallArgs a;
  a.runtime = "crio";
  ASSERT_EQ(Install(a), 0) << err_.str();
  EXPECT_TRUE(fs::exists(host_ + "/etc/crio/crio.conf.d/99-oci-rlimit.conf"));
  Write(host_ + "/etc/crio/crio.conf.d/99-zz-admin.conf", stale);
  EXPECT_EQ(Install(a), 1);
  EXPECT_NE(err_.str().find("set last by /etc/crio/crio.conf.d/99-zz-admin.conf"),
            std::string::npos)
      << err_.str();
  fs::remove(host_ + "/etc/crio/crio.conf.d/99-zz-admin.conf");
  ASSERT_EQ(Uninstall(), 0) << err_.str();
  EXPECT_FALSE(fs::exists(host_ + "/etc/crio/crio.conf.d/99-oci-rlimit.conf"));
}

// issue 29: --nvidia finds NVIDIA's handler in containerd's merged view.
TEST_F(NodeInstall, NvidiaBaseIsFoundInNvidiasDropin) {
  NvidiaNode(host_, "containerd github.com/containerd/containerd/v2 2.1.9 abc");
  std::ofstream(host_ + "/etc/containerd/conf.d/99-nvidia.toml", std::ios::app)
      << "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia.options]\n"
         "BinaryName = \"/usr/local/nvidia/toolkit/nvidia-container-runtime\"\n"
         "SystemdCgroup = true\n";
  InstallArgs a = Containerd();
  a.nvidia = true;
  ASSERT_EQ(Install(a), 0) << err_.str();
  EXPECT_EQ(err_.str().find("no base handler"), std::string::npos) << err_.str();
  const std::string dropin = Read(host_ + "/etc/containerd/conf.d/99-oci-rlimit.toml");
  EXPECT_NE(dropin.find("SystemdCgroup = true"), std::string::npos) << dropin;
}

// issue 30: a killed run's temp files go, by name, in the directories written.
TEST_F(NodeInstall, RemovesLeftoverTempFiles) {
  Write(host_ + "/etc/containerd/.oci-rlimit.Ab12Cd", "half");
  Write(host_ + "/etc/containerd/.oci-rlimit.keepme1", "not ours: 7 letters");
  Write(host_ + "/usr/local/bin/.oci-rlimit.zZ9yY8", "half");
  ASSERT_EQ(Install(Containerd()), 0) << err_.str();
  EXPECT_FALSE(fs::exists(host_ + "/etc/containerd/.oci-rlimit.Ab12Cd"));
  EXPECT_FALSE(fs::exists(host_ + "/usr/local/bin/.oci-rlimit.zZ9yY8"));
  EXPECT_TRUE(fs::exists(host_ + "/etc/containerd/.oci-rlimit.keepme1"));
  Write(host_ + "/var/lib/oci-rlimit/node-install/.oci-rlimit.QQ11qq", "half");
  ASSERT_EQ(Uninstall(), 0) << err_.str();
  EXPECT_FALSE(fs::exists(host_ + "/var/lib/oci-rlimit")) << "the state directory goes too";
}

// issue 29: a restart that did not happen is remembered and asked for again
// by a run that changes nothing, until containerd's process (in the node's
// /proc) started after the config was written. It is the node's engine
// (node_restart.h): root's, in the PID namespace of the node's init, running
// a root-owned executable from a root-owned directory.
void FakeContainerd(const std::string& host, int64_t started) {
  const long tick = sysconf(_SC_CLK_TCK);
  fs::create_directories(host + "/proc/4242/ns");
  fs::create_directories(host + "/proc/1/ns");
  for (const char* pid : {"1", "4242"}) {
    const std::string link = host + "/proc/" + pid + "/ns/pid";
    if (!fs::is_symlink(link)) fs::create_symlink("pid:[4026531836]", link);
  }
  // Its executable, root's in a root-owned directory, seen through its root.
  fs::create_directories(host + "/usr/bin");
  std::ofstream(host + "/usr/bin/containerd") << "#!/bin/sh\n";
  for (const auto& [link, to] : {std::pair{"/proc/4242/exe", host + "/usr/bin/containerd"},
                                 std::pair{"/proc/4242/root", std::string("/")}}) {
    if (!fs::is_symlink(host + link)) fs::create_symlink(to, host + link);
  }
  std::ofstream(host + "/proc/4242/status") << "Name:\tcontainerd\nUid:\t0\t0\t0\t0\n";
  std::ofstream(host + "/proc/stat") << "cpu 1 2 3\nbtime 1000\n";
  std::ofstream(host + "/proc/4242/comm") << "containerd\n";
  std::ofstream(host + "/proc/4242/cmdline") << std::string("/usr/bin/containerd\0", 20);
  std::ofstream(host + "/proc/4242/stat")
      << "4242 (containerd) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 10 0 "
      << (started - 1000) * tick << " 100 200\n";
}

TEST_F(NodeInstall, RestartIsRememberedUntilTheEngineRunsTheNewConfig) {
  FakeContainerd(host_, 1500);  // long before this install
  ASSERT_EQ(Install(Containerd()), 0) << err_.str();
  EXPECT_NE(out_.str().find("plan restart=containerd\n"), std::string::npos) << out_.str();
  ASSERT_EQ(Install(Containerd()), 0) << err_.str();
  EXPECT_EQ(out_.str().find("wrote"), std::string::npos) << "nothing changed: " << out_.str();
  EXPECT_NE(out_.str().find("plan restart=containerd\n"), std::string::npos)
      << "the restart that did not happen is asked for again: " << out_.str();
  InstallArgs check = Containerd();
  check.check = true;
  ASSERT_EQ(Install(check), 0) << err_.str();
  EXPECT_NE(out_.str().find("plan restart=containerd\n"), std::string::npos) << out_.str();
  FakeContainerd(host_, time(nullptr) + 5);  // restarted after the write
  ASSERT_EQ(Install(check), 0) << err_.str();
  EXPECT_NE(out_.str().find("plan restart=\n"), std::string::npos) << out_.str();
  ASSERT_EQ(Install(Containerd()), 0) << err_.str();
  EXPECT_NE(out_.str().find("plan restart=\n"), std::string::npos) << out_.str();
}

// node_install.cc: --policy places the fleet's file as the node's config.toml, whole, and the
// installer's drop-in then sets no rlimits (the fleet file decides); a changed file replaces it,
// and uninstall removes it.
TEST_F(NodeInstall, PolicyBecomesTheNodesConfigAndGoesWithUninstall) {
  const std::string fleet = dir_ / "fleet.toml";
  Write(fleet, "# the fleet\n[requests]\nenabled = true\nceilings = [\"memlock=64M\"]\n");
  InstallArgs a = Containerd();
  a.policy = fleet;
  ASSERT_EQ(Install(a), 0) << err_.str();
  EXPECT_EQ(Read(host_ + "/etc/oci-rlimit/config.toml"), Read(fleet));
  EXPECT_EQ(Read(host_ + "/etc/oci-rlimit/config.d/50-installer.toml").find("rlimits"),
            std::string::npos)
      << Read(host_ + "/etc/oci-rlimit/config.d/50-installer.toml");
  Write(fleet, "[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\n");
  ASSERT_EQ(Install(a), 0) << err_.str();
  EXPECT_NE(out_.str().find("wrote /etc/oci-rlimit/config.toml"), std::string::npos) << out_.str();
  EXPECT_EQ(Read(host_ + "/etc/oci-rlimit/config.toml"), Read(fleet));
  ASSERT_EQ(Uninstall(), 0) << err_.str();
  EXPECT_FALSE(fs::exists(host_ + "/etc/oci-rlimit/config.toml"));
  EXPECT_FALSE(fs::exists(host_ + "/etc/oci-rlimit"));
}

// node_install.cc: an admin's own config.toml is never overwritten by --policy, and a fleet file
// that does not parse is refused before anything is written.
TEST_F(NodeInstall, PolicyRefusesTheNodesOwnConfigAndABadFile) {
  const std::string fleet = dir_ / "fleet.toml";
  Write(fleet, "rlimits = [\"memlock=8M\"]\n");
  Write(host_ + "/etc/oci-rlimit/config.toml", "rlimits = [\"nofile=1024\"]\n");
  InstallArgs a = Containerd();
  a.policy = fleet;
  EXPECT_EQ(Install(a), 1);
  EXPECT_NE(err_.str().find("--policy: \"/etc/oci-rlimit/config.toml\" is the node's own config"),
            std::string::npos)
      << err_.str();
  EXPECT_EQ(Read(host_ + "/etc/oci-rlimit/config.toml"), "rlimits = [\"nofile=1024\"]\n");
  fs::remove(host_ + "/etc/oci-rlimit/config.toml");
  Write(fleet, "rlimits = [\"memlok=8M\"]\n");
  EXPECT_EQ(Install(a), 1);
  EXPECT_NE(err_.str().find("--policy: "), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("memlok"), std::string::npos) << err_.str();
  EXPECT_FALSE(fs::exists(host_ + "/usr/local/bin/oci-rlimit-runtime"));
}

TEST(PendingRestart, ParsesWhatItRenders) {
  std::vector<PendingRestart> p = {{"containerd", 12}, {"crio", 34}};
  EXPECT_EQ(ParsePending(RenderPending(p)), p);
}

TEST(LeftoverTemp, MatchesOnlyAtomicWritesName) {
  EXPECT_TRUE(IsLeftoverTemp(".oci-rlimit.a1B2c3"));
  EXPECT_FALSE(IsLeftoverTemp(".oci-rlimit.a1B2c"));
  EXPECT_FALSE(IsLeftoverTemp(".oci-rlimit.a1B2c34"));
  EXPECT_FALSE(IsLeftoverTemp(".oci-rlimit.a1-2c3"));
  EXPECT_FALSE(IsLeftoverTemp("oci-rlimit.a1B2c3"));
}

}  // namespace
}  // namespace ocirlimit::node
