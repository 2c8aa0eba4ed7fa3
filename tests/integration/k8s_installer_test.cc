// The Kubernetes node installer (packaging/kubernetes/install.sh) against a
// temporary host root: every containerd here (1.6 from Debian 12, 1.7 and 2.x
// from scripts/fetch-containerd.sh's cache) loading what it wrote from its own
// `containerd config default`, NVIDIA's rewrite of that file, the admin's own
// edits, the installer image run as the DaemonSet runs it, and the manifests
// parsed as YAML.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "daemons.h"
#include "harness.h"
#include "tests/testing/tree_snapshot.h"

namespace ocirlimit::itest {
namespace {
namespace fs = std::filesystem;

const std::string kKubeDir = std::string(OCI_RLIMIT_SOURCE_DIR) + "/packaging/kubernetes";
const std::string kInstaller = kKubeDir + "/install.sh";
constexpr const char* kWrapper = "/usr/local/bin/oci-rlimit-runtime";
constexpr const char* kCriV2 = "io.containerd.grpc.v1.cri";
constexpr const char* kCriV3 = "io.containerd.cri.v1.runtime";

// The containerd releases the tests run: Debian 12's, and the newer ones
// scripts/fetch-containerd.sh unpacks under the cache.
struct Ctd {
  std::string name;
  std::string bin;
  const char* plugin;  // where its `config default` keeps handlers
};
void PrintTo(const Ctd& c, std::ostream* os) { *os << c.name; }
std::string Cache() {
  const char* c = std::getenv("OCI_RLIMIT_CACHE");
  return c != nullptr && *c != '\0' ? c : "/var/cache/oci-rlimit";
}
std::vector<Ctd> Containerds() {
  return {{"v1_6", "/usr/bin/containerd", kCriV2},
          {"v1_7", Cache() + "/containerd-1.7/usr/bin/containerd", kCriV2},
          {"v2_x", Cache() + "/containerd-2/usr/bin/containerd", kCriV3}};
}

toml::table ParseToml(const std::string& text) {
  try {
    return toml::parse(text);
  } catch (const toml::parse_error& e) {
    ADD_FAILURE() << e.description() << "\n" << text;
    return {};
  }
}

// The handler table NAME in `plugin`'s section, or nullptr.
const toml::table* HandlerOf(const toml::table& t, const char* plugin, const std::string& name) {
  return t["plugins"][plugin]["containerd"]["runtimes"][name].as_table();
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A node's containerd config as `containerd config default` plus edits makes
// it: its own CRI settings, which an install must not lose.
constexpr const char* kFullConfig = R"(version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "example/pause:9"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = true
)";
// The smallest valid one: no runtimes table at all.
constexpr const char* kMinimalConfig = "version = 2\n";

// Everything about a tree that an install could change: each entry's kind,
// bytes or link target, mode and (unless `mtimes` is false) its times of
// change; an install may rewrite a file with the same bytes (a new inode,
// a new ctime).
using testsupport::SnapshotTree;
using testsupport::Tree;

std::vector<std::string> Differences(const Tree& a, const Tree& b, bool mtimes = true) {
  return TreeDifferences(
      a, b, {.mode = true, .owner = false, .inode = false, .mtime = mtimes, .ctime = false});
}

class K8sInstallerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("bash", "containerd", "ctr");
    host_ = dir_ / "host";
    fs::create_directories(host_ + "/etc/containerd");
    fs::create_directories(host_ + "/usr/local/bin");
    WriteFile(host_ + "/usr/local/bin/someone-elses-tool", "#!/bin/sh\n", 0755);
    UseContainerdConfig(kFullConfig);
    GiveHostTheLibrariesOf(OurBinary("oci-rlimit-hook"));
    GiveHostTheLibrariesOf(OurBinary("oci-prlimit-helper"));
    GiveHostTheLibrariesOf(OurBinary("oci-rlimit"));
  }

  // install.sh runs each program under the host root before installing it
  // (issue 17), so this node gets the loader and libraries our build needs.
  void GiveHostTheLibrariesOf(const std::string& program) {
    CmdResult r = RunCmd({"sh", "-c",
                          "ldd \"$1\" | grep -o '/[^ ]*' | while read -r l; do "
                          "mkdir -p \"$0${l%/*}\" && cp -L \"$l\" \"$0$l\" || exit 1; done",
                          host_, program});
    ASSERT_EQ(r.status, 0) << r.err;
  }

  // With an old mtime and mode 0600, so a rewrite that loses either shows.
  void UseContainerdConfig(const std::string& text) {
    const std::string path = host_ + "/etc/containerd/config.toml";
    WriteFile(path, text, 0600);
    chmod(path.c_str(), 0600);
    RunCmd({"touch", "-d", "2020-01-02 03:04:05", path});
  }

  CmdResult Install(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {
        "bash", kInstaller, "--host-root",
        host_,  "--source", fs::path(OurBinary("oci-rlimit-hook")).parent_path()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCmd(argv);
  }
  CmdResult Uninstall() {
    return RunCmd({"bash", kInstaller, "--uninstall", "--host-root", host_, "--source",
                   fs::path(OurBinary("oci-rlimit-hook")).parent_path()});
  }
  std::string HostFile(const std::string& rel) const { return ReadFile(host_ + rel); }
  // The installer's drop-in's [runtime] runtimes.
  std::vector<std::string> DropinRuntimes() const {
    toml::table t = ParseToml(HostFile("/etc/oci-rlimit/config.d/50-installer.toml"));
    std::vector<std::string> out;
    if (const toml::array* a = t["runtime"]["runtimes"].as_array()) {
      for (const auto& e : *a) out.push_back(e.value_or(std::string()));
    }
    return out;
  }
  std::string HostConfig() const { return host_ + "/etc/containerd/config.toml"; }

  // What `bin` makes of the host's config: `containerd --config F config dump`.
  toml::table Dump(const std::string& bin) {
    CmdResult dump = RunCmd({bin, "--config", HostConfig(), "config", "dump"});
    EXPECT_EQ(dump.status, 0) << dump.err;
    return ParseToml(dump.out);
  }

  // The oci-rlimit handler as `bin` loads it: runc v2 shim, our wrapper,
  // oci-rlimit's pod annotations; and runc still there.
  void ExpectHandler(const Ctd& c, bool systemd_cgroup = false) {
    toml::table t = Dump(c.bin);
    const toml::table* h = HandlerOf(t, c.plugin, "oci-rlimit");
    ASSERT_NE(h, nullptr) << c.name << ": no handler in the config dump\n"
                          << HostFile("/etc/containerd/config.toml");
    EXPECT_EQ((*h)["runtime_type"].value<std::string>(), "io.containerd.runc.v2");
    EXPECT_EQ((*h)["options"]["BinaryName"].value<std::string>(), kWrapper);
    EXPECT_EQ((*h)["options"]["SystemdCgroup"].value_or(false), systemd_cgroup);
    const toml::array* pa = (*h)["pod_annotations"].as_array();
    ASSERT_NE(pa, nullptr);
    ASSERT_EQ(pa->size(), 1u);
    EXPECT_EQ((*pa)[0].value<std::string>(), "oci-rlimit.io/*");
    EXPECT_NE(HandlerOf(t, c.plugin, "runc"), nullptr) << c.name << ": runc lost";
  }

  // The installed containerd config with the node's paths moved into our dir.
  std::string RunnableConfig() {
    std::string text = HostFile("/etc/containerd/config.toml");
    const std::string d = dir_ / "ctd";
    return "root = \"" + d + "/root\"\nstate = \"" + d + "/state\"\n" + text +
           "[grpc]\n  address = \"" + d + "/c.sock\"\n[ttrpc]\n  address = \"" + d +
           "/c.sock.ttrpc\"\n";
  }

  TempDir dir_;
  std::string host_;
};

TEST_F(K8sInstallerTest, InstallPutsFilesWhereTheyBelong) {
  CmdResult r = Install({"--runtime", "containerd", "--rlimits", "memlock=unlimited,nofile=65536"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* p :
       {"oci-rlimit-hook", "oci-rlimit-runtime", "oci-prlimit-helper", "oci-rlimit"}) {
    EXPECT_TRUE(HostFile(std::string("/usr/local/bin/") + p) == ReadFile(OurBinary(p))) << p;
    EXPECT_EQ(fs::status(host_ + "/usr/local/bin/" + p).permissions() & fs::perms::all,
              fs::perms(0755));
  }
  // The installer's drop-in is the config: precreate merges it into a spec.
  EXPECT_FALSE(fs::exists(host_ + "/etc/oci-rlimit/config.toml")) << "the admin's file";
  RunOptions opts;
  opts.stdin_data = "{}";
  opts.env = {"OCI_RLIMIT_CONFIG=" + host_ + "/etc/oci-rlimit/config.toml"};
  CmdResult merged = RunCmd({OurBinary("oci-rlimit-hook"), "precreate"}, opts);
  ASSERT_EQ(merged.status, 0) << merged.err;
  Json spec = Json::parse(merged.out);
  EXPECT_EQ(spec["process"]["rlimits"].size(), 2u) << merged.out;
  EXPECT_NE(merged.out.find("RLIMIT_NOFILE"), std::string::npos) << merged.out;

  std::string conf = HostFile("/etc/containerd/config.toml");
  EXPECT_TRUE(conf.starts_with(kFullConfig)) << "the node's own config comes first, untouched";
  EXPECT_EQ(fs::status(HostConfig()).permissions() & fs::perms::all, fs::perms(0600));
  ExpectHandler(Containerds()[0], /*systemd_cgroup=*/true);
  EXPECT_FALSE(fs::exists(host_ + "/usr/share/containers")) << "not a CRI-O node";
}

TEST_F(K8sInstallerTest, SecondRunChangesNothing) {
  CmdResult first = Install();
  ASSERT_EQ(first.status, 0);
  // issue 38: without --restart, one line says the engine must still restart
  EXPECT_NE(first.out.find("install.sh: containerd must still restart to read the new config"),
            std::string::npos)
      << first.out;
  Tree once = SnapshotTree(host_);
  CmdResult again = Install();
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(again.out.find("wrote"), std::string::npos) << again.out;
  EXPECT_EQ(Differences(once, SnapshotTree(host_)), std::vector<std::string>{});
}

// Uninstall takes out what install put in, by meaning, and leaves the rest:
// here nothing else changed, so the bytes and modes are as before.
TEST_F(K8sInstallerTest, UninstallLeavesTheNodeAsItWas) {
  fs::create_directories(host_ + "/etc/oci-rlimit");
  WriteFile(host_ + "/etc/oci-rlimit/config.toml", "rlimits = [\"core=0\"]\n");
  Tree original = SnapshotTree(host_);
  ASSERT_EQ(Install().status, 0);
  ASSERT_EQ(Install().status, 0);
  EXPECT_EQ(HostFile("/etc/oci-rlimit/config.toml"), "rlimits = [\"core=0\"]\n");
  CmdResult r = Uninstall();
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(Differences(original, SnapshotTree(host_), /*mtimes=*/false),
            std::vector<std::string>{});
}

TEST_F(K8sInstallerTest, RefusedInputChangesNothing) {
  UseContainerdConfig("[plugins.cri]\n");  // version 1
  Tree original = SnapshotTree(host_);
  CmdResult v1 = Install();
  EXPECT_EQ(v1.status, 1);
  EXPECT_NE(v1.err.find("no \"version\" key, so containerd reads it as a version 1 config"),
            std::string::npos)
      << v1.err;
  EXPECT_EQ(std::count(v1.err.begin(), v1.err.end(), '\n'), 1) << v1.err;
  // The refusal comes before anything is written.
  EXPECT_EQ(Differences(original, SnapshotTree(host_)), std::vector<std::string>{});
  CmdResult un = Uninstall();
  EXPECT_EQ(un.status, 0) << un.err;
  EXPECT_EQ(Differences(original, SnapshotTree(host_)), std::vector<std::string>{});
}

// Every input that a program would reject later, or that would write
// something else than it says, is refused in one line before anything is
// written: the host root stays byte-identical (mtimes included).
struct RefusalCase {
  std::string name;
  std::vector<std::string> args;
  std::string want;  // in the one line of stderr
  // Sets up the node (under `host`) before the run, given the wrapper the
  // installer would install (a real path).
  std::function<void(const std::string& host, const std::string& wrapper)> setup;
};

void PrintTo(const RefusalCase& c, std::ostream* os) { *os << c.name; }

class InstallerRefusalTest : public K8sInstallerTest,
                             public ::testing::WithParamInterface<RefusalCase> {};

TEST_P(InstallerRefusalTest, RefusesInOneLineAndWritesNothing) {
  const RefusalCase& c = GetParam();
  ASSERT_EQ(Install({"--runtime", "containerd"}).status, 0) << "a node installed before";
  if (c.setup) c.setup(host_, OurBinary("oci-rlimit-runtime"));
  Tree before = SnapshotTree(host_);
  CmdResult r = Install(c.args);
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(c.want), std::string::npos) << r.err;
  EXPECT_EQ(Differences(before, SnapshotTree(host_)), std::vector<std::string>{});
}

void NvidiaRuntimeOnNode(const std::string& host, const std::string& nvidia_config) {
  fs::create_directories(host + "/usr/bin");
  WriteFile(host + "/usr/bin/nvidia-container-runtime", "#!/bin/sh\nexec runc \"$@\"\n", 0755);
  fs::create_directories(host + "/etc/nvidia-container-runtime");
  WriteFile(host + "/etc/nvidia-container-runtime/config.toml", nvidia_config);
}

std::vector<RefusalCase> RefusalCases() {
  const std::string injected =
      "/usr/bin/nv\"]\n[requests]\nenabled = true\nceilings = [\"memlock=unlimited\"]\n#";
  return {
      {"MisspeltName",
       {"--rlimits", "memlok=unlimited"},
       "\"memlok=unlimited\": unknown name \"memlok\"",
       nullptr},
      {"NotAValue", {"--rlimits", "memlock=lots"}, "--rlimits: rlimit \"memlock=lots\"", nullptr},
      {"SoftAboveHard", {"--rlimits", "nofile=9:3"}, "--rlimits: rlimit \"nofile=9:3\"", nullptr},
      {"ThreeValues",
       {"--rlimits", "memlock=1:2:3"},
       "--rlimits: rlimit \"memlock=1:2:3\"",
       nullptr},
      {"ShellText",
       {"--rlimits", "memlock=1M;touch /x"},
       "--rlimits: rlimit \"memlock=1M;touch /x\"",
       nullptr},
      {"SameTypeTwice", {"--rlimits", "memlock=1M,memlock=2M"}, "--rlimits: ", nullptr},
      {"InjectedNvidiaRuntime",
       {"--nvidia", "--nvidia-runtime", injected},
       "--nvidia-runtime: \"/usr/bin/nv\\\"]\\n[requests]",
       nullptr},
      {"RelativeNvidiaRuntime",
       {"--nvidia-runtime", "nvidia-container-runtime"},
       "--nvidia-runtime: \"nvidia-container-runtime\" must be absolute",
       nullptr},
      {"InjectedPrefix",
       {"--prefix", "/opt/x\n[requests]"},
       "--prefix: \"/opt/x\\n[requests]\"",
       nullptr},
      {"DotDotPrefix", {"--prefix", "/opt/../etc"}, "--prefix: \"/opt/../etc\"", nullptr},
      {"AnotherPrefixThanInstalled",
       {"--prefix", "/opt/oci-rlimit"},
       "this node is installed under \"/usr/local\"; run --uninstall first",
       nullptr},
      {"NvidiaRuntimeIsTheWrapper",
       {"--nvidia-runtime", kWrapper},
       "--nvidia-runtime: \"/usr/local/bin/oci-rlimit-runtime\" is oci-rlimit-runtime itself",
       nullptr},
      {"NvidiaRuntimeLinksToTheWrapper",
       {"--nvidia-runtime", "/usr/bin/nvidia-container-runtime"},
       "is oci-rlimit-runtime itself",
       [](const std::string& host, const std::string&) {
         fs::create_directories(host + "/usr/bin");
         fs::create_symlink("../local/bin/oci-rlimit-runtime",
                            host + "/usr/bin/nvidia-container-runtime");
       }},
      {"NvidiasConfigChainsBack",
       {"--nvidia"},
       "would exec \"/usr/local/bin/oci-rlimit-runtime\" (its runtimes in "
       "/etc/nvidia-container-runtime/config.toml), which is oci-rlimit-runtime: a loop",
       [](const std::string& host, const std::string&) {
         NvidiaRuntimeOnNode(host,
                             "[nvidia-container-runtime]\nruntimes = "
                             "[\"/usr/local/bin/oci-rlimit-runtime\", \"runc\"]\n");
       }},
      {"NvidiasRuncIsTheWrapper",
       {"--nvidia"},
       "would exec \"/usr/sbin/runc\"",
       [](const std::string& host, const std::string& wrapper) {
         NvidiaRuntimeOnNode(host, "[nvidia-container-runtime]\nruntimes = [\"runc\"]\n");
         fs::create_directories(host + "/usr/sbin");
         fs::copy_file(wrapper, host + "/usr/sbin/runc");
         fs::remove(host + "/usr/local/bin/oci-rlimit-runtime");
         fs::create_hard_link(host + "/usr/sbin/runc", host + "/usr/local/bin/oci-rlimit-runtime");
       }},
  };
}

INSTANTIATE_TEST_SUITE_P(Inputs, InstallerRefusalTest, ::testing::ValuesIn(RefusalCases()),
                         [](const auto& info) { return info.param.name; });

// Binaries the node cannot run (another architecture, a newer
// glibc) are refused in one line, before anything changes.
TEST_F(K8sInstallerTest, RefusesBinariesTheNodeCannotRun) {
  const std::string src = dir_ / "foreign";
  fs::create_directories(src);
  for (const char* p : {"oci-rlimit-runtime", "oci-prlimit-helper", "oci-rlimit"}) {
    fs::copy_file(OurBinary(p), src + "/" + p);
  }
  WriteFile(src + "/oci-rlimit-hook",
            "\x7f"
            "ELF but not for this machine\n",
            0755);
  Tree original = SnapshotTree(host_);
  CmdResult r = RunCmd({"bash", kInstaller, "--host-root", host_, "--source", src});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("install.sh: " + src + "/oci-rlimit-hook cannot run on this "),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(Differences(original, SnapshotTree(host_)), std::vector<std::string>{});
}

// The wrapper is probed too: its --version prints its own line before it
// asks runc, so a wrapper the node cannot run is refused like any program,
// while a node root without runc (this fake one) still takes a good one.
TEST_F(K8sInstallerTest, RefusesAWrapperTheNodeCannotRun) {
  const std::string src = dir_ / "foreign";
  fs::create_directories(src);
  for (const char* p : {"oci-rlimit-hook", "oci-prlimit-helper", "oci-rlimit"}) {
    fs::copy_file(OurBinary(p), src + "/" + p);
  }
  WriteFile(src + "/oci-rlimit-runtime", "#!/bin/sh\necho 'exec format error' >&2\nexit 126\n",
            0755);
  Tree original = SnapshotTree(host_);
  CmdResult r = RunCmd({"bash", kInstaller, "--host-root", host_, "--source", src});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("install.sh: " + src + "/oci-rlimit-runtime cannot run on this "),
            std::string::npos)
      << r.err;
  EXPECT_EQ(Differences(original, SnapshotTree(host_)), std::vector<std::string>{});
}

// MEDIUM (issue 39 finding 4): with no systemd unit to restart, install.sh
// signals only the engine that serves the node: root's, in the host's PID
// namespace, with the node's config. Four processes named containerd, in a
// private PID and mount namespace whose /proc the host root links to: the
// node's (root, no --config), a uid 65534 one (a user's rootless
// containerd), a root one in its own PID namespace (kind, dind), a root one
// in its own mount namespace (a hostPID pod's) and a root one with another
// --config (dockerd's). Only the node's is signalled; with
// none, the restart is not counted as done.
struct SignalCase {
  std::string name;
  bool node_engine = false;
};
void PrintTo(const SignalCase& c, std::ostream* os) { *os << c.name; }

class InstallerSignalTest : public K8sInstallerTest,
                            public ::testing::WithParamInterface<SignalCase> {};

TEST_P(InstallerSignalTest, SignalsOnlyTheNodesEngine) {
  OCI_RLIMIT_REQUIRE("unshare", "setpriv");
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  TempDir eng;
  ASSERT_EQ(chmod(eng.path().c_str(), 0755), 0);
  // A shell script: its comm is its file name, and SIGHUP ends it.
  WriteFile(eng / "containerd", "#!/bin/sh\nwhile :; do sleep 1; done\n", 0755);
  fs::create_directory_symlink("/proc", host_ + "/proc");
  const std::string script = R"(
e=$1/containerd
if [ "$5" = yes ]; then "$e" & node=$!; fi
setpriv --reuid=65534 --regid=65534 --clear-groups "$e" & user=$!
unshare -p -f "$e" & pod=$!
unshare -m "$e" & mounts=$!
"$e" --config /var/run/docker/containerd/containerd.toml & other=$!
sleep 0.3
OCI_RLIMIT_RESTART_WAIT=2 bash "$2" --host-root "$3" --source "$4" --restart
echo "rc=$?"
sleep 0.3
for n in node user pod mounts other; do
  eval "p=\${$n:-}"
  [ -n "$p" ] || continue
  if kill -0 "$p" 2>/dev/null; then echo "$n alive"; else echo "$n gone"; fi
done
)";
  CmdResult r =
      RunCmd({"unshare", "-p", "-f", "--mount-proc", "bash", "-c", script, "sh", eng.path(),
              kInstaller, host_, fs::path(OurBinary("oci-rlimit-hook")).parent_path(),
              GetParam().node_engine ? "yes" : "no"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("rc=0\n"), std::string::npos) << r.out << r.err;
  for (const char* alive : {"user alive\n", "pod alive\n", "mounts alive\n", "other alive\n"}) {
    EXPECT_NE(r.out.find(alive), std::string::npos) << alive << r.out << r.err;
  }
  if (GetParam().node_engine) {
    EXPECT_NE(r.out.find("node gone\n"), std::string::npos) << r.out << r.err;
    EXPECT_EQ(r.err.find("could not restart"), std::string::npos) << r.err;
  } else {
    EXPECT_NE(r.err.find("install.sh: could not restart containerd"), std::string::npos)
        << r.out << r.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Installer, InstallerSignalTest,
                         ::testing::Values(SignalCase{"WithTheNodesContainerd", true},
                                           SignalCase{"WithOnlyOthers", false}),
                         [](const auto& info) { return info.param.name; });

// Under a fixture root whose /proc has no init (pid 1's link cannot be read
// there), the caller's PID namespace is not the node's: nothing is
// signalled, even a root containerd in the caller's own namespace.
TEST_F(K8sInstallerTest, UnderAFixtureRootWithoutInitNothingIsSignalled) {
  OCI_RLIMIT_REQUIRE("unshare");
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  TempDir eng;
  ASSERT_EQ(chmod(eng.path().c_str(), 0755), 0);
  WriteFile(eng / "containerd", "#!/bin/sh\nwhile :; do sleep 1; done\n", 0755);
  const std::string script = R"(
"$1/containerd" & node=$!
mkdir -p "$3/proc" && ln -s "/proc/$node" "$3/proc/$node"
sleep 0.3
OCI_RLIMIT_RESTART_WAIT=2 bash "$2" --host-root "$3" --source "$4" --restart
echo "rc=$?"
sleep 0.3
if kill -0 "$node" 2>/dev/null; then echo "node alive"; kill "$node"; else echo "node gone"; fi
)";
  CmdResult r =
      RunCmd({"unshare", "-p", "-f", "--mount-proc", "bash", "-c", script, "sh", eng.path(),
              kInstaller, host_, fs::path(OurBinary("oci-rlimit-hook")).parent_path()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("node alive\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.err.find("install.sh: could not restart containerd"), std::string::npos)
      << r.out << r.err;
}

// A root containerd in the node's namespaces whose executable anyone may
// replace (its file, or its directory, writable by others) is not the
// node's engine: it is never signalled.
class ReplaceableEngineTest : public K8sInstallerTest,
                              public ::testing::WithParamInterface<std::pair<mode_t, mode_t>> {};

TEST_P(ReplaceableEngineTest, IsNotSignalled) {
  OCI_RLIMIT_REQUIRE("unshare", "sleep");
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  const auto [dir_mode, file_mode] = GetParam();
  fs::create_directory_symlink("/proc", host_ + "/proc");
  std::string sleep_bin = RunCmd({"sh", "-c", "command -v sleep"}).out;
  sleep_bin.erase(sleep_bin.find('\n'));
  TempDir eng;
  fs::copy_file(sleep_bin, eng / "containerd");
  ASSERT_EQ(chmod((eng / "containerd").c_str(), file_mode), 0);
  ASSERT_EQ(chmod(eng.path().c_str(), dir_mode), 0);
  const std::string script = R"(
"$1/containerd" 1000 & node=$!
sleep 0.3
OCI_RLIMIT_RESTART_WAIT=2 bash "$2" --host-root "$3" --source "$4" --restart
echo "rc=$?"
sleep 0.3
if kill -0 "$node" 2>/dev/null; then echo "node alive"; kill "$node"; else echo "node gone"; fi
)";
  CmdResult r =
      RunCmd({"unshare", "-p", "-f", "--mount-proc", "bash", "-c", script, "sh", eng.path(),
              kInstaller, host_, fs::path(OurBinary("oci-rlimit-hook")).parent_path()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("node alive\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.err.find("install.sh: could not restart containerd"), std::string::npos)
      << r.out << r.err;
}

INSTANTIATE_TEST_SUITE_P(Installer, ReplaceableEngineTest,
                         ::testing::Values(std::pair<mode_t, mode_t>{0777, 0755},
                                           std::pair<mode_t, mode_t>{0755, 0757}),
                         [](const auto& info) {
                           return info.param.first == 0777 ? std::string("WritableDirectory")
                                                           : std::string("WritableFile");
                         });

// The image carries bin/amd64 and bin/arm64; the node's own one is installed.
TEST_F(K8sInstallerTest, PicksTheNodesArchitecture) {
  const std::string src = dir_ / "multiarch";
  const std::string mine = RunCmd({"uname", "-m"}).out == "aarch64\n" ? "arm64" : "amd64";
  const std::string other = mine == "amd64" ? "arm64" : "amd64";
  fs::create_directories(src + "/" + mine);
  fs::create_directories(src + "/" + other);
  for (const char* p :
       {"oci-rlimit-hook", "oci-rlimit-runtime", "oci-prlimit-helper", "oci-rlimit"}) {
    fs::copy_file(OurBinary(p), src + "/" + mine + "/" + p);
    WriteFile(src + "/" + other + "/" + p, "not for this node\n", 0755);
  }
  CmdResult r = RunCmd({"bash", kInstaller, "--host-root", host_, "--source", src});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(HostFile("/usr/local/bin/oci-rlimit-hook") == ReadFile(OurBinary("oci-rlimit-hook")));
}

// CRI-O (not packaged for Debian, so no crio runs here): the hook goes to
// the one directory stock CRI-O reads, the handler to a crio.conf.d drop-in.
TEST_F(K8sInstallerTest, CrioNodeGetsTheHookAndTheHandler) {
  fs::remove_all(host_ + "/etc/containerd");
  fs::create_directories(host_ + "/etc/crio");
  Tree original = SnapshotTree(host_);
  CmdResult r = Install();  // --runtime auto
  ASSERT_EQ(r.status, 0) << r.err;
  Json hook = Json::parse(HostFile("/usr/share/containers/oci/hooks.d/oci-rlimit.json"));
  EXPECT_EQ(hook["version"], "1.0.0");
  EXPECT_EQ(hook["hook"]["path"], "/usr/local/bin/oci-rlimit-hook");
  EXPECT_EQ(hook["stages"], Json::array({"createRuntime"}));
  EXPECT_EQ(hook["when"]["annotations"]["^oci-rlimit\\.io/enable$"], "^true$");
  toml::table crio = ParseToml(HostFile("/etc/crio/crio.conf.d/99-oci-rlimit.conf"));
  EXPECT_EQ(crio["crio"]["runtime"]["runtimes"]["oci-rlimit"]["runtime_path"].value<std::string>(),
            kWrapper);
  EXPECT_FALSE(crio["crio"]["runtime"]["runtimes"]["oci-rlimit"]["monitor_env"]);
  EXPECT_FALSE(fs::exists(host_ + "/etc/containerd"));
  ASSERT_EQ(Uninstall().status, 0);
  EXPECT_EQ(Differences(original, SnapshotTree(host_)), std::vector<std::string>{});
}

// The admin's config.toml and drop-ins are never written, and win over the
// installer's drop-in key by key.
TEST_F(K8sInstallerTest, AdminEditsSurviveReruns) {
  ASSERT_EQ(Install().status, 0);
  const std::string admin =
      "[requests]\nenabled = true\nceilings = [\"memlock=64G\"]\n"
      "[runtime]\nruntimes = [\"runc\"]\n";
  WriteFile(host_ + "/etc/oci-rlimit/config.toml", admin);
  WriteFile(host_ + "/etc/oci-rlimit/config.d/90-local.toml", "rlimits = [\"nofile=4096\"]\n");
  for (const char* rl : {"memlock=unlimited", "memlock=1G", "memlock=unlimited"}) {
    ASSERT_EQ(Install({"--rlimits", rl}).status, 0);
    EXPECT_EQ(HostFile("/etc/oci-rlimit/config.toml"), admin);
    EXPECT_EQ(HostFile("/etc/oci-rlimit/config.d/90-local.toml"), "rlimits = [\"nofile=4096\"]\n");
  }
  CmdResult v = RunCmd({OurBinary("oci-rlimit"), "validate", "--json", "--config",
                        host_ + "/etc/oci-rlimit/config.toml"});
  ASSERT_EQ(v.status, 0) << v.err;
  Json j = Json::parse(v.out);
  // 90-local.toml's rlimits replace the installer's; config.toml's requests stay.
  EXPECT_EQ(j["rlimits"], Json::array({"nofile=4096:4096"})) << v.out;
  EXPECT_EQ(j["requests"]["enabled"], true) << v.out;
  ASSERT_EQ(Uninstall().status, 0);
  EXPECT_EQ(HostFile("/etc/oci-rlimit/config.toml"), admin);
  EXPECT_TRUE(fs::exists(host_ + "/etc/oci-rlimit/config.d/90-local.toml"));
  EXPECT_FALSE(fs::exists(host_ + "/etc/oci-rlimit/config.d/50-installer.toml"));
}

// Each containerd's own stock config, as `containerd config default` writes
// it: 20 fresh installs and 10 reruns all succeed (the old script failed
// about half of these at random: pipefail + grep -q), and that containerd
// loads the handler from the right section (version 2 or 3).
class StockConfigTest : public K8sInstallerTest, public ::testing::WithParamInterface<Ctd> {};

TEST_P(StockConfigTest, FreshInstallsAndRerunsAllSucceed) {
  const Ctd& c = GetParam();
  OCI_RLIMIT_REQUIRE(c.bin);
  CmdResult def = RunCmd({c.bin, "config", "default"});
  ASSERT_EQ(def.status, 0) << def.err;
  std::cout << c.name << ": " << RunCmd({c.bin, "--version"}).out;
  for (int i = 0; i < 20; ++i) {
    fs::remove_all(host_ + "/var");
    fs::remove_all(host_ + "/etc/oci-rlimit");
    UseContainerdConfig(def.out);
    CmdResult r = Install({"--runtime", "containerd"});
    ASSERT_EQ(r.status, 0) << "fresh install " << i << ": " << r.err;
  }
  const std::string once = HostFile("/etc/containerd/config.toml");
  EXPECT_TRUE(once.starts_with(def.out));
  for (int i = 0; i < 10; ++i) {
    CmdResult r = Install({"--runtime", "containerd"});
    ASSERT_EQ(r.status, 0) << "rerun " << i << ": " << r.err;
  }
  EXPECT_EQ(HostFile("/etc/containerd/config.toml"), once);
  ExpectHandler(c);
  ASSERT_EQ(Uninstall().status, 0);
  EXPECT_EQ(HostFile("/etc/containerd/config.toml"), def.out);
}

// NVIDIA's `nvidia-ctk runtime configure --set-as-default` rewrites the whole
// file without comments (tests/integration/toml_rewrite.cc plays it). A rerun
// keeps one oci-rlimit handler; uninstall keeps NVIDIA's handler and default.
TEST_P(StockConfigTest, CoexistsWithNvidiasRewrite) {
  const Ctd& c = GetParam();
  OCI_RLIMIT_REQUIRE(c.bin);
  CmdResult def = RunCmd({c.bin, "config", "default"});
  ASSERT_EQ(def.status, 0) << def.err;
  UseContainerdConfig(def.out);
  ASSERT_EQ(Install({"--runtime", "containerd"}).status, 0);
  CmdResult rw = RunCmd({OurBinary("toml_rewrite"), HostConfig()});
  ASSERT_EQ(rw.status, 0) << rw.err;
  ASSERT_EQ(HostFile("/etc/containerd/config.toml").find("# oci-rlimit"), std::string::npos);
  for (int i = 0; i < 3; ++i) {
    CmdResult again = Install({"--runtime", "containerd"});
    ASSERT_EQ(again.status, 0) << again.err;
  }
  const std::string text = HostFile("/etc/containerd/config.toml");
  EXPECT_EQ(Count(text, "runtimes.oci-rlimit]"), 1u) << text;
  ExpectHandler(c);

  // --nvidia: the handler copies NVIDIA's, and the wrapper execs NVIDIA's
  // runtime: the first that exists of the operator's path, the packages'
  // paths and the nvidia handler's BinaryName; never a bare name.
  ASSERT_EQ(Install({"--runtime", "containerd", "--nvidia"}).status, 0);
  ExpectHandler(c);
  const std::vector<std::string> nvidia_chain = {
      "/usr/local/nvidia/toolkit/nvidia-container-runtime", "/usr/bin/nvidia-container-runtime",
      "/usr/local/bin/nvidia-container-runtime"};
  EXPECT_EQ(DropinRuntimes(), nvidia_chain);
  // The GPU Operator rewrites again; the rerun finds everything in place.
  ASSERT_EQ(RunCmd({OurBinary("toml_rewrite"), HostConfig()}).status, 0);
  const std::string after_operator = HostFile("/etc/containerd/config.toml");
  CmdResult rerun = Install({"--runtime", "containerd", "--nvidia"});
  ASSERT_EQ(rerun.status, 0) << rerun.err;
  EXPECT_EQ(HostFile("/etc/containerd/config.toml"), after_operator) << "nothing left to change";
  // A rerun without --nvidia (the DaemonSet's command) keeps NVIDIA and says so.
  CmdResult plain = Install({"--runtime", "containerd"});
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_NE(plain.err.find("kept NVIDIA's runtime in the oci-rlimit handler's chain"),
            std::string::npos)
      << plain.err;
  EXPECT_EQ(DropinRuntimes(), nvidia_chain);
  EXPECT_EQ(HostFile("/etc/containerd/config.toml"), after_operator);

  // Uninstall: every table but ours stays equal, as TOML, to what the
  // operator left.
  toml::table want = ParseToml(after_operator);
  want["plugins"][c.plugin]["containerd"]["runtimes"].as_table()->erase("oci-rlimit");
  ASSERT_EQ(Uninstall().status, 0);
  EXPECT_EQ(ParseToml(HostFile("/etc/containerd/config.toml")), want)
      << HostFile("/etc/containerd/config.toml");
  toml::table t = Dump(c.bin);
  EXPECT_EQ(HandlerOf(t, c.plugin, "oci-rlimit"), nullptr);
  const toml::table* nv = HandlerOf(t, c.plugin, "nvidia");
  ASSERT_NE(nv, nullptr) << "NVIDIA's handler stays";
  EXPECT_EQ((*nv)["options"]["BinaryName"].value<std::string>(),
            "/usr/bin/nvidia-container-runtime");
  EXPECT_EQ(t["plugins"][c.plugin]["containerd"]["default_runtime_name"].value<std::string>(),
            "nvidia");
}

INSTANTIATE_TEST_SUITE_P(Containerd, StockConfigTest, ::testing::ValuesIn(Containerds()),
                         [](const auto& info) { return info.param.name; });

// Install, rerun and uninstall through install.sh on configs shaped like the
// ones that once let a one-line bug in the TOML editing through: after
// uninstall every table is equal, as TOML, to the original, and containerd
// 1.6 loads every step.
struct RoundTripCase {
  std::string name;
  std::string config;
  std::vector<std::string> args;
};
void PrintTo(const RoundTripCase& c, std::ostream* os) { *os << c.name; }

class RoundTripTest : public K8sInstallerTest,
                      public ::testing::WithParamInterface<RoundTripCase> {};

TEST_P(RoundTripTest, UninstallGivesBackEveryOtherTable) {
  const RoundTripCase& c = GetParam();
  UseContainerdConfig(c.config);
  const toml::table original = ParseToml(c.config);
  std::vector<std::string> args = {"--runtime", "containerd"};
  args.insert(args.end(), c.args.begin(), c.args.end());
  for (int i = 0; i < 2; ++i) {
    CmdResult r = Install(args);
    ASSERT_EQ(r.status, 0) << r.err;
    toml::table t = ParseToml(HostFile("/etc/containerd/config.toml"));
    toml::table others = t;
    const int64_t version = t["version"].value_or(int64_t{2});
    const char* plugin = version == 3 ? kCriV3 : kCriV2;
    ASSERT_NE(HandlerOf(t, plugin, "oci-rlimit"), nullptr)
        << HostFile("/etc/containerd/config.toml");
    const toml::array* pa = (*HandlerOf(t, plugin, "oci-rlimit"))["pod_annotations"].as_array();
    ASSERT_NE(pa, nullptr);
    EXPECT_EQ(std::count_if(
                  pa->begin(), pa->end(),
                  [](const toml::node& n) { return n.value<std::string>() == "oci-rlimit.io/*"; }),
              1)
        << "oci-rlimit.io/* once";
    others["plugins"][plugin]["containerd"]["runtimes"].as_table()->erase("oci-rlimit");
    // Everything else is the original's (a bare default may be added).
    toml::table expected = original;
    if (!HandlerOf(original, plugin, "runc") && HandlerOf(others, plugin, "runc")) {
      others["plugins"][plugin]["containerd"]["runtimes"].as_table()->erase("runc");
    }
    if (auto* rt = others["plugins"][plugin]["containerd"]["runtimes"].as_table();
        rt != nullptr && rt->empty() && !HandlerOf(original, plugin, "runc")) {
      others["plugins"][plugin]["containerd"].as_table()->erase("runtimes");
      if (others["plugins"][plugin]["containerd"].as_table()->empty()) {
        others["plugins"][plugin].as_table()->erase("containerd");
      }
      if (others["plugins"][plugin].as_table()->empty()) {
        others["plugins"].as_table()->erase(plugin);
      }
      if (others["plugins"].as_table()->empty()) others.erase("plugins");
    }
    EXPECT_EQ(others, expected) << HostFile("/etc/containerd/config.toml");
  }
  ASSERT_EQ(Uninstall().status, 0);
  EXPECT_EQ(ParseToml(HostFile("/etc/containerd/config.toml")), original)
      << HostFile("/etc/containerd/config.toml");
}

std::vector<RoundTripCase> RoundTripCases() {
  const std::string v3 =
      "version = 3\n"
      "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]\n"
      "runtime_type = 'io.containerd.runc.v2'\n";
  const std::string nvidia_v2 =
      "version = 2\n"
      "[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
      "default_runtime_name = \"nvidia\"\n"
      "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia]\n"
      "runtime_type = \"io.containerd.runc.v2\"\n"
      "pod_annotations = [\"oci-rlimit.io/*\"]\n"
      "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia.options]\n"
      "BinaryName = \"/usr/bin/nvidia-container-runtime\"\n";
  return {
      {"Stock", kFullConfig, {}},
      {"StaleVersion2TableThatIsNotOurs",
       v3 + "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.oci-rlimit]\n"
            "runtime_type = \"io.containerd.kata.v2\"\n",
       {}},
      {"BareRuncBesideOtherHandlers",
       "version = 2\n"
       "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
       "runtime_type = \"io.containerd.runc.v2\"\n"
       "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.kata]\n"
       "runtime_type = \"io.containerd.kata.v2\"\n",
       {}},
      {"OnlyABareRunc",
       "version = 2\n"
       "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
       "runtime_type = \"io.containerd.runc.v2\"\n",
       {}},
      {"NoRuntimesTable", kMinimalConfig, {}},
      {"NvidiaBaseAlreadyPassesOurAnnotations", nvidia_v2, {"--nvidia"}},
  };
}

INSTANTIATE_TEST_SUITE_P(Configs, RoundTripTest, ::testing::ValuesIn(RoundTripCases()),
                         [](const auto& info) { return info.param.name; });

// Handler added, then another one beside it after the install: uninstall
// keeps the bare runc install declared, or containerd 1.x loses its default.
TEST_F(K8sInstallerTest, UninstallKeepsTheDefaultBesideANewHandler) {
  UseContainerdConfig(kMinimalConfig);
  ASSERT_EQ(Install({"--runtime", "containerd"}).status, 0);
  WriteFile(HostConfig(), HostFile("/etc/containerd/config.toml") +
                              "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.kata]\n"
                              "runtime_type = \"io.containerd.kata.v2\"\n");
  ASSERT_EQ(Uninstall().status, 0);
  toml::table t = ParseToml(HostFile("/etc/containerd/config.toml"));
  EXPECT_NE(HandlerOf(t, kCriV2, "runc"), nullptr) << HostFile("/etc/containerd/config.toml");
  EXPECT_NE(HandlerOf(t, kCriV2, "kata"), nullptr);
  EXPECT_EQ(HandlerOf(t, kCriV2, "oci-rlimit"), nullptr);
}

// Values that need quoting come out as valid TOML and JSON, and say what
// they were given: a prefix with a space and a quote, on a CRI-O node.
TEST_F(K8sInstallerTest, OddPrefixRendersValidFiles) {
  fs::create_directories(host_ + "/etc/crio");
  Tree original = SnapshotTree(host_);
  const std::string prefix = "/opt/a b\"c";
  CmdResult r = Install({"--prefix", prefix, "--nvidia-runtime", "/opt/nv \"x\"/runtime"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json hook = Json::parse(HostFile("/usr/share/containers/oci/hooks.d/oci-rlimit.json"));
  EXPECT_EQ(hook["hook"]["path"], prefix + "/bin/oci-rlimit-hook");
  toml::table crio = ParseToml(HostFile("/etc/crio/crio.conf.d/99-oci-rlimit.conf"));
  EXPECT_EQ(crio["crio"]["runtime"]["runtimes"]["oci-rlimit"]["runtime_path"].value<std::string>(),
            prefix + "/bin/oci-rlimit-runtime");
  EXPECT_EQ(DropinRuntimes(), std::vector<std::string>{"/opt/nv \"x\"/runtime"});
  toml::table dropin = ParseToml(HostFile("/etc/oci-rlimit/config.d/50-installer.toml"));
  EXPECT_FALSE(dropin.contains("requests"));
  toml::table handler = ParseToml(HostFile("/etc/containerd/config.toml"));
  EXPECT_EQ(
      HandlerOf(handler, kCriV2, "oci-rlimit")->at_path("options.BinaryName").value<std::string>(),
      prefix + "/bin/oci-rlimit-runtime");
  EXPECT_TRUE(fs::exists(host_ + prefix + "/bin/oci-rlimit-runtime"));
  ASSERT_EQ(Uninstall().status, 0);
  EXPECT_EQ(Differences(original, SnapshotTree(host_), /*mtimes=*/false),
            std::vector<std::string>{});
}

// A container created through the wrapper, as containerd's runc shim leaves
// it: runc's state under ROOT/NAMESPACE/ID naming its bundle, whose `runtime`
// file names the shim's BinaryName. Uninstall removes the handler, keeps the
// wrapper and says which container; once it is gone a rerun finishes.
TEST_F(K8sInstallerTest, UninstallKeepsTheWrapperForItsContainers) {
  Tree original = SnapshotTree(host_);
  ASSERT_EQ(Install({"--runtime", "containerd"}).status, 0);
  auto container = [&](const std::string& id, const std::string& runtime) {
    const std::string b = "/run/containerd/io.containerd.runtime.v2.task/k8s.io/" + id;
    fs::create_directories(host_ + b);
    WriteFile(host_ + b + "/runtime", runtime);
    fs::create_directories(host_ + "/run/containerd/runc/k8s.io/" + id);
    WriteFile(host_ + "/run/containerd/runc/k8s.io/" + id + "/state.json",
              "{\"id\":\"" + id +
                  "\",\"init_process_pid\":1,\"config\":{\"labels\":[\"bundle=" + b + "\"]}}");
  };
  container("abc123", kWrapper);
  container("plainrunc", "runc");
  CmdResult kept = Uninstall();
  EXPECT_EQ(kept.status, 3) << kept.out << kept.err;
  EXPECT_NE(kept.err.find("kept /usr/local/bin/oci-rlimit-runtime and "
                          "/etc/oci-rlimit/config.d/50-installer.toml: 1 container(s) created "
                          "through it still exist (abc123)"),
            std::string::npos)
      << kept.err;
  EXPECT_EQ(HandlerOf(ParseToml(HostFile("/etc/containerd/config.toml")), kCriV2, "oci-rlimit"),
            nullptr)
      << "the handler goes first";
  EXPECT_TRUE(fs::exists(host_ + kWrapper));
  // Refused: no file goes, so the same command finishes it (issue 44).
  EXPECT_TRUE(fs::exists(host_ + "/usr/local/bin/oci-rlimit-hook"));
  EXPECT_TRUE(fs::exists(host_ + "/usr/local/bin/oci-rlimit"));
  fs::remove_all(host_ + "/run");
  CmdResult done = Uninstall();
  ASSERT_EQ(done.status, 0) << done.err;
  EXPECT_EQ(Differences(original, SnapshotTree(host_), /*mtimes=*/false),
            std::vector<std::string>{});
}

// Issue 30: a refused run leaves the node byte for byte as it was, the
// programs and the installer's drop-in included: every check comes first.
// containerd on PATH here is Debian 12's 1.6, which refuses version 3.
TEST_F(K8sInstallerTest, RefusalsComeBeforeAnyWrite) {
  struct Case {
    std::string name;
    std::function<void()> set_up;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"symlinked config.toml",
       [&] {
         WriteFile(host_ + "/etc/containerd/real.toml", kFullConfig, 0600);
         fs::remove(HostConfig());
         fs::create_symlink("real.toml", HostConfig());
       },
       "symlink"},
      {"version 3 on containerd 1.x",
       [&] {
         // The node's own containerd, as the installer asks it for its version.
         const std::string bin = Which("containerd").value_or("/usr/bin/containerd");
         fs::create_directories(host_ + "/usr/bin");
         fs::copy_file(bin, host_ + "/usr/bin/containerd", fs::copy_options::overwrite_existing);
         GiveHostTheLibrariesOf(bin);
         UseContainerdConfig("version = 3\n");
       },
       "version"},
  };
  for (const auto& c : cases) {
    fs::remove_all(host_ + "/etc/containerd");
    fs::create_directories(host_ + "/etc/containerd");
    UseContainerdConfig(kFullConfig);
    c.set_up();
    const Tree before = SnapshotTree(host_);
    CmdResult r = Install({"--runtime", "containerd"});
    EXPECT_NE(r.status, 0) << c.name << ": " << r.out;
    EXPECT_NE(r.err.find(c.error), std::string::npos) << c.name << ": " << r.err;
    EXPECT_EQ(Differences(before, SnapshotTree(host_)), std::vector<std::string>{}) << c.name;
    EXPECT_FALSE(fs::exists(host_ + kWrapper)) << c.name << ": a program was written";
  }
}

// Issue 30: a container id is a directory name; one with a newline is
// escaped in uninstall's message, never a line of its own.
TEST_F(K8sInstallerTest, UninstallEscapesTheIdsItNames) {
  ASSERT_EQ(Install({"--runtime", "containerd"}).status, 0);
  const std::string id = "abc\noci-rlimit node: uninstalled";
  const std::string b = "/run/containerd/io.containerd.runtime.v2.task/k8s.io/" + id;
  fs::create_directories(host_ + b);
  WriteFile(host_ + b + "/runtime", kWrapper);
  fs::create_directories(host_ + "/run/containerd/runc/k8s.io/" + id);
  WriteFile(
      host_ + "/run/containerd/runc/k8s.io/" + id + "/state.json",
      Json{{"id", id}, {"init_process_pid", 1}, {"config", {{"labels", {"bundle=" + b}}}}}.dump());
  CmdResult kept = Uninstall();
  EXPECT_EQ(kept.status, 3) << kept.out << kept.err;
  EXPECT_NE(kept.err.find(R"(("abc\noci-rlimit node: uninstalled"))"), std::string::npos)
      << kept.err;
  EXPECT_EQ(kept.err.find("\noci-rlimit node: uninstalled"), std::string::npos) << kept.err;
}

// Issue 30: a user's own rootless state root (/run/user/UID/runc, theirs to
// write) naming a bundle the wrapper ran and root's PID 1 keeps nothing: only
// root's state, or a live process of that user in a cgroup naming the
// container, counts as a container created through the wrapper.
TEST_F(K8sInstallerTest, AUsersFakeRootlessStateDoesNotBlockUninstall) {
  ASSERT_EQ(Install({"--runtime", "containerd"}).status, 0);
  const std::string id = "fake1";
  const std::string b = "/run/containerd/io.containerd.runtime.v2.task/k8s.io/" + id;
  fs::create_directories(host_ + b);
  WriteFile(host_ + b + "/runtime", kWrapper);
  const std::string user_root = "/run/user/1000/runc";
  fs::create_directories(host_ + user_root + "/" + id);
  WriteFile(host_ + user_root + "/" + id + "/state.json",
            "{\"id\":\"" + id + "\",\"init_process_pid\":1,\"config\":{\"labels\":[\"bundle=" + b +
                "\"]}}");
  for (const std::string& p : {std::string("/run/user/1000"), user_root, user_root + "/" + id,
                               user_root + "/" + id + "/state.json"}) {
    ASSERT_EQ(chown((host_ + p).c_str(), 1000, 1000), 0) << p;
  }
  CmdResult r = Uninstall();
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("still exist"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(host_ + kWrapper)) << "a user's state kept the wrapper";
}

// The review's forgery against a live process: the test user's own sleep,
// a state of theirs under /run/user/UID/runc named after a component of the
// sleep's own cgroup, its bundle's `runtime` naming the wrapper (and a
// second state whose bundle's config.json is a FIFO the user's writer waits
// on). Uninstall is neither blocked nor steered, and the FIFO never opened.
TEST_F(K8sInstallerTest, AUsersLiveForgedStateNeitherBlocksUninstallNorIsOpened) {
  OCI_RLIMIT_REQUIRE("setpriv");
  const passwd* pw = getpwnam("oci-rlimit-test");
  if (pw == nullptr || geteuid() != 0) GTEST_SKIP() << "needs root and the user oci-rlimit-test";
  ASSERT_EQ(Install({"--runtime", "containerd"}).status, 0);
  fs::create_directory_symlink("/proc", host_ + "/proc");
  const std::string uid = std::to_string(pw->pw_uid);
  const std::string run = "/run/user/" + uid;
  fs::create_directories(host_ + run);
  ASSERT_EQ(chown((host_ + run).c_str(), pw->pw_uid, pw->pw_gid), 0);
  ASSERT_EQ(chmod((host_ + run).c_str(), 0700), 0);
  const std::string script = R"(
sleep 1000 >/dev/null 2>&1 & s=$!
cg=$(sed -n 's/^[0-9]*:[^:]*memory[^:]*://p' /proc/$s/cgroup)
[ -n "$cg" ] || cg=$(sed -n 's/^0:://p' /proc/$s/cgroup)
last=${cg##*/}; first=${cg#/}; first=${first%%/*}
start=$(cut -d' ' -f22 /proc/$s/stat)
state() {
  mkdir -p "$H$R/runc/$1" "$H$R/$2"
  printf '{"id":"%s","init_process_pid":%s,"init_process_start":%s,"config":{"labels":["bundle=%s"]}}' \
    "$1" "$s" "$start" "$R/$2" > "$H$R/runc/$1/state.json"
}
state "${last:-sleeper}" b1
printf '%s' "$W" > "$H$R/b1/runtime"
if [ -n "$first" ] && [ "$first" != "$last" ]; then
  state "$first" b2
  mkfifo "$H$R/b2/config.json"
  { (echo '{}' > "$H$R/b2/config.json"; touch "$H$R/opened") >/dev/null 2>&1 & }
fi
echo "$s"
)";
  ASSERT_EQ(chmod(dir_.path().c_str(), 0711), 0);
  const std::string env = "export H='" + host_ + "' R='" + run + "' W='" + kWrapper + "'\n";
  CmdResult forged = RunCmd(
      {"setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups", "sh", "-c", env + script});
  ASSERT_EQ(forged.status, 0) << forged.err;
  const pid_t sleeper = std::stoi(forged.out);
  CmdResult r = Uninstall();
  kill(sleeper, SIGKILL);
  const std::string fifo = host_ + run + "/b2/config.json";
  const bool opened = fs::exists(host_ + run + "/opened");
  if (fs::exists(fifo)) {
    const int release = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    if (release >= 0) close(release);
  }
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("still exist"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(host_ + kWrapper)) << "a user's state kept the wrapper";
  EXPECT_FALSE(opened) << "root opened the user's FIFO";
}

// On a version 3 config (containerd 2.x, which looks a pod's handler up by
// name for every exec) the handler stays too while its containers exist; the
// rerun after the drain removes it.
TEST_F(K8sInstallerTest, UninstallKeepsAVersion3HandlerForItsContainers) {
  UseContainerdConfig("version = 3\n");
  Tree original = SnapshotTree(host_);
  ASSERT_EQ(Install({"--runtime", "containerd"}).status, 0);
  const std::string b = "/run/containerd/io.containerd.runtime.v2.task/k8s.io/abc123";
  fs::create_directories(host_ + b);
  WriteFile(host_ + b + "/runtime", kWrapper);
  fs::create_directories(host_ + "/run/containerd/runc/k8s.io/abc123");
  WriteFile(
      host_ + "/run/containerd/runc/k8s.io/abc123/state.json",
      "{\"id\":\"abc123\",\"init_process_pid\":1,\"config\":{\"labels\":[\"bundle=" + b + "\"]}}");
  CmdResult kept = Uninstall();
  EXPECT_EQ(kept.status, 3) << kept.out << kept.err;
  EXPECT_NE(kept.err.find("and containerd's handler oci-rlimit: 1 container(s) created through it "
                          "still exist (abc123)"),
            std::string::npos)
      << kept.err;
  EXPECT_NE(HandlerOf(ParseToml(HostFile("/etc/containerd/config.toml")), kCriV3, "oci-rlimit"),
            nullptr)
      << "the handler stays while its pods run";
  EXPECT_TRUE(fs::exists(host_ + kWrapper));
  fs::remove_all(host_ + "/run");
  CmdResult done = Uninstall();
  ASSERT_EQ(done.status, 0) << done.err;
  EXPECT_EQ(Differences(original, SnapshotTree(host_), /*mtimes=*/false),
            std::vector<std::string>{});
}

// --force removes the wrapper anyway, and says which containers it strands.
TEST_F(K8sInstallerTest, UninstallForceRemovesTheWrapper) {
  Tree original = SnapshotTree(host_);
  ASSERT_EQ(Install({"--runtime", "containerd"}).status, 0);
  fs::create_directories(host_ + "/run/b1");
  WriteFile(host_ + "/run/b1/runtime", kWrapper);
  fs::create_directories(host_ + "/run/runc/c1");
  WriteFile(host_ + "/run/runc/c1/state.json", R"({"config":{"labels":["bundle=/run/b1"]}})");
  CmdResult r = RunCmd({"bash", kInstaller, "--uninstall", "--force", "--host-root", host_});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("--force: removed /usr/local/bin/oci-rlimit-runtime while 1 container(s) "
                       "created through it still exist (c1)"),
            std::string::npos)
      << r.err;
  fs::remove_all(host_ + "/run");
  EXPECT_EQ(Differences(original, SnapshotTree(host_), /*mtimes=*/false),
            std::vector<std::string>{});
}

// CRI-O's containers, as crun and runc leave them under CRI-O's default
// roots (/run/crun/ID/status, /run/runc/ID/state.json) naming a bundle whose
// config.json carries CRI-O's io.kubernetes.cri-o.RuntimeHandler annotation:
// uninstall removes the handler's drop-in, keeps the wrapper for the
// oci-rlimit ones and names them (exit 3); --force proceeds.
TEST_F(K8sInstallerTest, UninstallFindsCrioContainersByTheirHandler) {
  fs::remove_all(host_ + "/etc/containerd");
  fs::create_directories(host_ + "/etc/crio");
  Tree original = SnapshotTree(host_);
  ASSERT_EQ(Install({"--runtime", "crio"}).status, 0);
  auto container = [&](const std::string& root, const std::string& id, const std::string& handler) {
    const std::string b = "/run/containers/storage/overlay-containers/" + id + "/userdata";
    fs::create_directories(host_ + b);
    WriteFile(host_ + b + "/config.json",
              Json{{"ociVersion", "1.0.2"},
                   {"annotations", {{"io.kubernetes.cri-o.RuntimeHandler", handler}}}}
                  .dump());
    fs::create_directories(host_ + root + "/" + id);
    if (root == "/run/crun") {
      WriteFile(host_ + root + "/" + id + "/status",
                Json{{"pid", 1}, {"process-start-time", 1}, {"bundle", b}}.dump());
    } else {
      WriteFile(host_ + root + "/" + id + "/state.json",
                Json{{"id", id},
                     {"init_process_pid", 1},
                     {"config", {{"labels", Json::array({"bundle=" + b})}}}}
                    .dump());
    }
  };
  container("/run/crun", "crun0ours", "oci-rlimit");
  container("/run/runc", "runc0ours", "oci-rlimit");
  container("/run/crun", "crun0plain", "crun");
  container("/run/runc", "runc0plain", "runc");

  CmdResult kept = Uninstall();
  EXPECT_EQ(kept.status, 3) << kept.out << kept.err;
  EXPECT_NE(kept.err.find("2 container(s) created through it still exist (crun0ours, "
                          "runc0ours)"),
            std::string::npos)
      << kept.err;
  EXPECT_FALSE(fs::exists(host_ + "/etc/crio/crio.conf.d/99-oci-rlimit.conf"))
      << "the handler goes first";
  EXPECT_TRUE(fs::exists(host_ + kWrapper));

  CmdResult forced = RunCmd({"bash", kInstaller, "--uninstall", "--force", "--host-root", host_,
                             "--source", fs::path(OurBinary("oci-rlimit-hook")).parent_path()});
  ASSERT_EQ(forced.status, 0) << forced.out << forced.err;
  EXPECT_NE(forced.err.find("--force: removed /usr/local/bin/oci-rlimit-runtime while 2 "
                            "container(s) created through it still exist (crun0ours, runc0ours)"),
            std::string::npos)
      << forced.err;
  EXPECT_FALSE(fs::exists(host_ + kWrapper));
  fs::remove_all(host_ + "/run");
  EXPECT_EQ(Differences(original, SnapshotTree(host_), /*mtimes=*/false),
            std::vector<std::string>{});
}

// A real containerd reads the installed config: `config dump` shows the
// handler, and the CRI plugin (which validates its runtimes) loads.
class ContainerdConfigTest : public K8sInstallerTest,
                             public ::testing::WithParamInterface<std::string> {};

TEST_P(ContainerdConfigTest, RealContainerdLoadsTheHandler) {
  const bool full = GetParam() == "full";
  UseContainerdConfig(full ? kFullConfig : kMinimalConfig);
  ASSERT_EQ(Install({"--runtime", "containerd"}).status, 0);
  const std::string config = dir_ / "containerd.toml";
  WriteFile(config, RunnableConfig());
  ExpectHandler(Containerds()[0], full);
  if (full) {
    EXPECT_EQ(Dump("containerd")["plugins"][kCriV2]["sandbox_image"].value<std::string>(),
              "example/pause:9");
  }

  HostLeftovers leftovers;
  BackgroundProcess daemon;
  ASSERT_EQ(daemon.Start({"containerd", "--config", config}, {}, dir_ / "containerd.log"),
            std::nullopt);
  CmdResult plugins;
  for (int i = 0; i < 600 && daemon.Running(); ++i) {
    plugins = RunCmd({"ctr", "-a", dir_ / "ctd/c.sock", "plugins", "ls"});
    if (plugins.status == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  daemon.Stop();
  ASSERT_EQ(plugins.status, 0) << ReadFile(dir_ / "containerd.log");
  size_t cri = plugins.out.find("io.containerd.grpc.v1           cri");
  ASSERT_NE(cri, std::string::npos) << plugins.out;
  std::string line = plugins.out.substr(cri, plugins.out.find('\n', cri) - cri);
  line.erase(line.find_last_not_of(' ') + 1);
  EXPECT_TRUE(line.ends_with(" ok")) << line << "\n" << ReadFile(dir_ / "containerd.log");
}

INSTANTIATE_TEST_SUITE_P(Configs, ContainerdConfigTest, ::testing::Values("full", "minimal"),
                         [](const auto& info) { return info.param; });

// doctor on the installed node: ok; then FAIL for a handler containerd 2.x
// ignores (a version 2 table in a version 3 file) and for a [runtime]
// runtimes nothing resolves.
TEST_F(K8sInstallerTest, DoctorFailsWhatContainerdWouldIgnore) {
  UseContainerdConfig("version = 3\n");
  fs::create_directories(host_ + "/usr/bin");
  fs::create_directories(host_ + "/usr/sbin");
  WriteFile(host_ + "/usr/bin/containerd",
            "#!/bin/sh\necho containerd github.com/containerd/containerd/v2 2.1.9\n", 0755);
  WriteFile(host_ + "/usr/sbin/runc", "#!/bin/sh\necho runc version 1.1.5\n", 0755);
  ASSERT_EQ(Install({"--runtime", "containerd"}).status, 0);
  CmdResult ok = RunCmd({OurBinary("oci-rlimit"), "doctor", "--root", host_});
  EXPECT_NE(ok.out.find("config version 3"), std::string::npos) << ok.out;
  EXPECT_EQ(ok.out.find("FAIL"), std::string::npos) << ok.out;

  WriteFile(host_ + "/etc/oci-rlimit/config.toml",
            "[runtime]\nruntimes = [\"/usr/bin/nvidia-container-runtime\"]\n");
  CmdResult noruntime = RunCmd({OurBinary("oci-rlimit"), "doctor", "--root", host_});
  EXPECT_EQ(noruntime.status, 1) << noruntime.out;
  EXPECT_NE(noruntime.out.find("FAIL  containerd   runtime handler \"oci-rlimit\": "
                               "/usr/local/bin/oci-rlimit-runtime: [runtime] runtimes "
                               "[\"/usr/bin/nvidia-container-runtime\"] in "
                               "/etc/oci-rlimit/config.toml: none resolves on the PATH"),
            std::string::npos)
      << noruntime.out;
  fs::remove(host_ + "/etc/oci-rlimit/config.toml");

  std::string text = HostFile("/etc/containerd/config.toml");
  // Our handler's tables (not runc's) moved to the version 2 path.
  const std::string v3 = "'io.containerd.cri.v1.runtime'.containerd.runtimes.oci-rlimit";
  for (size_t at = text.find(v3); at != std::string::npos; at = text.find(v3)) {
    text.replace(at, v3.size(), "\"io.containerd.grpc.v1.cri\".containerd.runtimes.oci-rlimit");
  }
  UseContainerdConfig(text);
  CmdResult wrong = RunCmd({OurBinary("oci-rlimit"), "doctor", "--root", host_});
  EXPECT_EQ(wrong.status, 1) << wrong.out;
  EXPECT_NE(wrong.out.find("a version 3 config does not read: containerd ignores it"),
            std::string::npos)
      << wrong.out;
  // The installer moves it where it belongs.
  ASSERT_EQ(Install({"--runtime", "containerd"}).status, 0);
  CmdResult fixed = RunCmd({OurBinary("oci-rlimit"), "doctor", "--root", host_});
  EXPECT_EQ(fixed.out.find("FAIL"), std::string::npos) << fixed.out;
}

// A base image with what install.sh needs and nothing else: busybox, bash and
// the shared libraries of bash and our programs (no registry here, so the
// Dockerfile's BASE is this, imported with `docker import`).
std::string MakeBaseRootfs(const std::string& dir) {
  const std::string root = dir + "/base";
  for (const char* d : {"/bin", "/tmp", "/proc", "/sys", "/dev", "/host"}) {
    fs::create_directories(root + d);
  }
  fs::copy_file("/bin/busybox", root + "/bin/busybox");
  for (const char* applet :
       {"sh", "cat", "cmp", "stat", "mktemp", "chmod", "mv", "rm", "mkdir", "rmdir", "dirname",
        "readlink", "sed", "chroot", "tac", "ls", "cp", "uname", "head"}) {
    fs::create_symlink("busybox", root + "/bin/" + applet);
  }
  fs::copy_file("/bin/bash", root + "/bin/bash");
  fs::create_directories(root + "/usr/bin");
  fs::create_symlink("../../bin/busybox", root + "/usr/bin/env");  // install.sh's #!
  CmdResult libs =
      Sh("ldd /bin/bash " + OurBinary("oci-prlimit-helper") + " " + OurBinary("oci-rlimit") +
         " | sed -n 's/.*=> \\(\\/[^ ]*\\).*/\\1/p; s/^\\t\\(\\/[^ ]*\\) .*/\\1/p' | sort -u");
  EXPECT_EQ(libs.status, 0) << libs.err;
  std::istringstream lines(libs.out);
  for (std::string lib; std::getline(lines, lib);) {
    fs::create_directories(root + fs::path(lib).parent_path().string());
    fs::copy_file(lib, root + lib, fs::copy_options::overwrite_existing);
  }
  return root;
}

// The DaemonSet's init container, as handler/daemonset.yaml (or `file`) says:
// image and command.
std::vector<std::string> DaemonSetCommand(std::string* image,
                                          const std::string& file = "handler/daemonset.yaml") {
  CmdResult r = RunCmd({"python3", "-c", R"(
import json, sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d["kind"] == "DaemonSet":
        init = d["spec"]["template"]["spec"]["initContainers"][0]
        print(json.dumps({"image": init["image"], "command": init["command"],
                          "privileged": init["securityContext"]["privileged"],
                          "mount": init["volumeMounts"][0]["mountPath"]}))
)",
                        kKubeDir + "/" + file});
  EXPECT_EQ(r.status, 0) << r.err;
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["privileged"], true);
  EXPECT_EQ(j["mount"], "/host");
  *image = j["image"].get<std::string>();
  return j["command"].get<std::vector<std::string>>();
}

// A DaemonSet command's argv run here: the node's root is `host`, the fleet's ConfigMap mount
// holds the shipped base/config.toml.
std::string HereArg(const std::string& arg, const std::string& host) {
  if (arg == "/host") return host;
  if (arg == "/etc/oci-rlimit-fleet/config.toml") return kKubeDir + "/base/config.toml";
  return arg;
}

// The DaemonSet's own command (daemonset.yaml, no --nvidia), rerun as every
// restart of its pod does on a GPU node installed with --nvidia: NVIDIA stays
// in the oci-rlimit handler's chain, and the run says so.
TEST_F(K8sInstallerTest, DaemonSetCommandKeepsAGpuNodesChain) {
  OCI_RLIMIT_REQUIRE("python3", "/bin/busybox");
  ASSERT_EQ(RunCmd({OurBinary("toml_rewrite"), HostConfig()}).status, 0);  // NVIDIA's handler
  ASSERT_EQ(Install({"--nvidia"}).status, 0);
  const std::vector<std::string> chain = DropinRuntimes();
  ASSERT_EQ(chain.front(), "/usr/local/nvidia/toolkit/nvidia-container-runtime");
  const std::string config = HostFile("/etc/containerd/config.toml");
  fs::create_directories(host_ + "/bin");
  fs::copy_file("/bin/busybox", host_ + "/bin/busybox");
  fs::create_symlink("busybox", host_ + "/bin/sh");
  fs::create_directories(host_ + "/usr/bin");
  WriteFile(host_ + "/usr/bin/systemctl", "#!/bin/sh\necho \"$@\" >>/systemctl.log\n", 0755);

  std::string image;
  std::vector<std::string> command = DaemonSetCommand(&image);
  ASSERT_EQ(command[0], "/opt/oci-rlimit/install.sh");
  std::vector<std::string> argv = {"bash", kInstaller};
  for (size_t i = 1; i < command.size(); ++i) argv.push_back(HereArg(command[i], host_));
  argv.insert(argv.end(), {"--source", fs::path(OurBinary("oci-rlimit-hook")).parent_path()});
  for (int restart = 0; restart < 3; ++restart) {
    CmdResult r = RunCmd(argv);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("kept NVIDIA's runtime in the oci-rlimit handler's chain, as the "
                         "earlier install (--nvidia) set it up; --no-nvidia removes it"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(DropinRuntimes(), chain);
    EXPECT_EQ(HostFile("/etc/containerd/config.toml"), config);
    EXPECT_FALSE(fs::exists(host_ + "/systemctl.log")) << "nothing changed, nothing restarted";
  }
  // Only an explicit --no-nvidia takes NVIDIA out.
  CmdResult off = Install({"--no-nvidia"});
  ASSERT_EQ(off.status, 0) << off.err;
  EXPECT_EQ(DropinRuntimes(), std::vector<std::string>{});
  const toml::table after = ParseToml(HostFile("/etc/containerd/config.toml"));
  const toml::table* h = HandlerOf(after, kCriV2, "oci-rlimit");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ((*h)["options"]["BinaryName"].value<std::string>(), kWrapper);
}

// The GPU variant (daemonset-nvidia.yaml) on a fresh GPU node: its command
// sets up NVIDIA's chain from the start; the two DaemonSets never pick the
// same node (daemonset.yaml skips oci-rlimit.io/nvidia=true).
TEST_F(K8sInstallerTest, GpuDaemonSetSetsUpNvidiasChain) {
  OCI_RLIMIT_REQUIRE("python3");
  ASSERT_EQ(RunCmd({OurBinary("toml_rewrite"), HostConfig()}).status, 0);  // NVIDIA's handler
  std::string image;
  std::vector<std::string> command =
      DaemonSetCommand(&image, "handler-nvidia/daemonset-nvidia.yaml");
  std::vector<std::string> argv = {"bash", kInstaller};
  for (size_t i = 1; i < command.size(); ++i) {
    if (command[i] != "--restart") argv.push_back(HereArg(command[i], host_));
  }
  argv.insert(argv.end(), {"--source", fs::path(OurBinary("oci-rlimit-hook")).parent_path()});
  CmdResult r = RunCmd(argv);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(DropinRuntimes().front(), "/usr/local/nvidia/toolkit/nvidia-container-runtime");
  EXPECT_NE(std::find(DropinRuntimes().begin(), DropinRuntimes().end(),
                      "/usr/bin/nvidia-container-runtime"),
            DropinRuntimes().end());

  CmdResult sel = RunCmd({"python3", "-c", R"(
import sys, yaml
def pick(f):
    for d in yaml.safe_load_all(open(sys.argv[1] + "/" + f)):
        if d["kind"] == "DaemonSet":
            return d["spec"]["template"]["spec"]
plain, gpu = pick("handler/daemonset.yaml"), pick("handler-nvidia/daemonset-nvidia.yaml")
terms = plain["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
assert all({"key": "oci-rlimit.io/nvidia", "operator": "NotIn", "values": ["true"]} in t["matchExpressions"] for t in terms), terms
assert gpu["nodeSelector"] == dict(plain["nodeSelector"], **{"oci-rlimit.io/nvidia": "true"}), gpu["nodeSelector"]
ci, gi = plain["initContainers"][0], gpu["initContainers"][0]
assert gi["image"] == ci["image"], gi
want = list(ci["command"]); want.insert(want.index("--restart"), "--nvidia")
assert gi["command"] == want, gi["command"]
print("disjoint")
)",
                          kKubeDir});
  EXPECT_EQ(sel.status, 0) << sel.err;
  EXPECT_EQ(sel.out, "disjoint\n");
}

// packaging/kubernetes/Dockerfile built with docker build, then run as the
// DaemonSet runs it: privileged, the host root at /host, its command (with
// --restart: a stand-in systemctl in the fake host root records the call).
TEST(InstallerImageTest, RunsAsTheDaemonSetRunsIt) {
  // The image is built from the portable (static) build, which scripts/test.sh
  // makes before ctest runs (scripts/build-node.sh amd64 build-portable-amd64).
  const std::string portable = std::string(OCI_RLIMIT_SOURCE_DIR) + "/build-portable-amd64/bin";
  OCI_RLIMIT_REQUIRE("dockerd", "/usr/bin/docker", "python3", "containerd",
                     portable + "/oci-rlimit-hook");
  Dockerd docker;
  ASSERT_TRUE(docker.ok()) << docker.error();
  TempDir t;
  const std::string base = MakeBaseRootfs(t.path());
  ASSERT_EQ(RunCmd({"tar", "-C", base, "-cf", t / "base.tar", "."}).status, 0);
  CmdResult imp = docker.Docker({"import", t / "base.tar", "oci-rlimit-test-base:local"});
  ASSERT_EQ(imp.status, 0) << imp.err;

  // The build context: the repository's layout, with the portable programs.
  const std::string ctx = t / "ctx";
  fs::create_directories(ctx + "/build-portable-amd64/bin");
  fs::create_directories(ctx + "/packaging/kubernetes");
  for (const char* p :
       {"oci-rlimit-hook", "oci-rlimit-runtime", "oci-prlimit-helper", "oci-rlimit"}) {
    fs::copy_file(portable + "/" + p, ctx + "/build-portable-amd64/bin/" + p);
  }
  for (const char* f : {"Dockerfile", "install.sh"}) {
    fs::copy_file(kKubeDir + "/" + f, ctx + "/packaging/kubernetes/" + f);
  }
  std::string image;
  std::vector<std::string> command = DaemonSetCommand(&image);
  RunOptions legacy;
  legacy.env = {"DOCKER_BUILDKIT=0"};
  CmdResult build =
      docker.Docker({"build", "-q", "--build-arg", "BASE=oci-rlimit-test-base:local", "-f",
                     ctx + "/packaging/kubernetes/Dockerfile", "-t", image, ctx},
                    legacy);
  ASSERT_EQ(build.status, 0) << build.err << build.out;

  // The fake host: containerd's stock config, and a systemctl that logs.
  const std::string host = t / "host";
  fs::create_directories(host + "/etc/containerd");
  fs::create_directories(host + "/bin");
  fs::create_directories(host + "/usr/bin");
  CmdResult def = RunCmd({"containerd", "config", "default"});
  WriteFile(host + "/etc/containerd/config.toml", def.out);
  fs::copy_file("/bin/busybox", host + "/bin/busybox");
  fs::create_symlink("busybox", host + "/bin/sh");
  WriteFile(host + "/usr/bin/systemctl", "#!/bin/sh\necho \"$@\" >>/systemctl.log\n", 0755);

  // As privileged as this sandbox allows: every capability but
  // CAP_SYS_RESOURCE, which the machine lacks (runc refuses --privileged's
  // full set, and --privileged ignores --cap-drop), no seccomp or AppArmor
  // profile. A real node runs it with securityContext.privileged.
  std::vector<std::string> run = {"run",
                                  "--rm",
                                  "--cap-add",
                                  "ALL",
                                  "--cap-drop",
                                  "SYS_RESOURCE",
                                  "--security-opt",
                                  "seccomp=unconfined",
                                  "--security-opt",
                                  "apparmor=unconfined",
                                  "--network",
                                  "none",
                                  "-v",
                                  host + ":/host",
                                  "-v",
                                  kKubeDir + "/base:/etc/oci-rlimit-fleet:ro",
                                  "--entrypoint",
                                  command[0],
                                  image};
  run.insert(run.end(), command.begin() + 1, command.end());
  CmdResult first = docker.Docker(run);
  ASSERT_EQ(first.status, 0) << first.err << first.out;
  EXPECT_EQ(ReadFile(host + "/systemctl.log"), "restart containerd\n");
  // The image's (portable) wrapper was installed. Compared as a bool: gtest's
  // diff of two multi-MiB binaries would take gigabytes.
  EXPECT_TRUE(ReadFile(host + "/usr/local/bin/oci-rlimit-runtime") ==
              ReadFile(portable + "/oci-rlimit-runtime"));
  CmdResult dump =
      RunCmd({"containerd", "--config", host + "/etc/containerd/config.toml", "config", "dump"});
  ASSERT_EQ(dump.status, 0) << dump.err;
  const toml::table dumped = ParseToml(dump.out);
  const toml::table* h = HandlerOf(dumped, kCriV2, "oci-rlimit");
  ASSERT_NE(h, nullptr) << dump.out;
  EXPECT_EQ((*h)["options"]["BinaryName"].value<std::string>(), kWrapper);
  // A pod restart reruns it: nothing to do, no restart.
  CmdResult second = docker.Docker(run);
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_EQ(second.out.find("wrote"), std::string::npos) << second.out;
  EXPECT_EQ(ReadFile(host + "/systemctl.log"), "restart containerd\n");
  docker.Docker({"rmi", "-f", image, "oci-rlimit-test-base:local"});
}

// Every object in the manifests has apiVersion, kind and metadata.name; the
// RuntimeClass is the handler the installer adds; the DaemonSet runs the
// installer privileged against the host root it mounts; the NRI DaemonSet
// dials the host's socket, sees the host's PIDs, keeps only SYS_RESOURCE and
// writes its status file onto a hostPath.
TEST(K8sManifestsTest, ParseAsYamlWithTheRightShape) {
  OCI_RLIMIT_REQUIRE("python3");
  const std::string script = R"(
import glob, sys, yaml
objs = []
for f in sorted(glob.glob(sys.argv[1] + "/**/*.yaml", recursive=True)):
    name = f[len(sys.argv[1]) + 1:]
    if name.split("/")[-1].startswith("prometheus-rules") or name.endswith("kustomization.yaml"):
        continue  # rule files (promtool checks them) and kustomize's own (kustomize.overlays)
    for d in yaml.safe_load_all(open(f)):
        assert d["apiVersion"] and d["kind"] and d["metadata"]["name"], f
        objs.append(d)
        print(name, d["kind"], d["metadata"]["name"])
rc = [d for d in objs if d["kind"] == "RuntimeClass"][0]
assert rc["handler"] == "oci-rlimit", rc
ds = [d for d in objs if d["kind"] == "DaemonSet" and d["metadata"]["name"] == "oci-rlimit-installer"][0]["spec"]["template"]["spec"]
init = ds["initContainers"][0]
assert init["securityContext"]["privileged"] is True
args = init["command"]
root = args[args.index("--host-root") + 1]
mount = [m for m in init["volumeMounts"] if m["mountPath"] == root][0]
vol = [v for v in ds["volumes"] if v["name"] == mount["name"]][0]
assert vol["hostPath"]["path"] == "/", vol
nri = [d for d in objs if d["kind"] == "DaemonSet" and d["metadata"]["name"] == "oci-rlimit-nri"][0]["spec"]["template"]["spec"]
plugin = nri["containers"][0]
sock = plugin["args"][plugin["args"].index("--socket") + 1]
mount = [m for m in plugin["volumeMounts"] if sock.startswith(m["mountPath"] + "/")][0]
vol = [v for v in nri["volumes"] if v["name"] == mount["name"]][0]
assert vol["hostPath"]["path"] + sock[len(mount["mountPath"]):] == "/var/run/nri/nri.sock", vol
# The Synchronize heal: the host's PIDs, and CAP_SYS_RESOURCE as its only capability.
assert nri.get("hostPID") is True, nri
caps = plugin["securityContext"]["capabilities"]
assert caps == {"drop": ["ALL"], "add": ["SYS_RESOURCE"]}, caps
# Its status file (doctor reads it) lands on the host, in the directory a hostPath mounts.
status = plugin["args"][plugin["args"].index("--status-file") + 1]
status_dir = status.rsplit("/", 1)[0]
mount = [m for m in plugin["volumeMounts"] if m["mountPath"] == status_dir][0]
assert not mount.get("readOnly", False), mount
vol = [v for v in nri["volumes"] if v["name"] == mount["name"]][0]
assert vol["hostPath"]["path"] == status_dir, vol
print("checked nri")
print("checked")
)";
  CmdResult r = RunCmd({"python3", "-c", script, kKubeDir});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("handler/runtimeclass.yaml RuntimeClass oci-rlimit"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("handler/daemonset.yaml DaemonSet oci-rlimit-installer"), std::string::npos);
  EXPECT_NE(r.out.find("nri/nri-daemonset.yaml DaemonSet oci-rlimit-nri"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("checked nri"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("checked\n"), std::string::npos) << r.out;
}

// README's Kubernetes quick start names what the manifests and the tests use:
// the image tag and Dockerfile it builds, the node label, the DaemonSet's
// install command, and the RuntimeClass names pods use. (InstallerImageTest
// builds and runs that image; CriInstallerTest runs the by-hand step.)
TEST(K8sManifestsTest, ReadmeQuickStartMatchesTheManifests) {
  OCI_RLIMIT_REQUIRE("python3");
  const std::string readme = ReadFile(std::string(OCI_RLIMIT_SOURCE_DIR) + "/README.md");
  const size_t begin = readme.find("### Kubernetes quick start");
  ASSERT_NE(begin, std::string::npos);
  const std::string qs = readme.substr(begin, readme.find("\n## ", begin) - begin);
  auto squeeze = [](const std::string& text) {
    std::istringstream ws(text);
    std::string out;
    for (std::string w; ws >> w;) out += (out.empty() ? "" : " ") + w;
    return out;
  };
  // The text between `lead` and the next backtick, whitespace squeezed.
  auto quoted_after = [&](const std::string& lead) {
    size_t at = qs.find(lead);
    if (at == std::string::npos) return std::string();
    at += lead.size();
    return squeeze(qs.substr(at, qs.find('`', at) - at));
  };
  CmdResult r = RunCmd({"python3", "-c", R"(
import json, sys, yaml
out = {"classes": {}}
for f in ("handler/daemonset.yaml", "handler/runtimeclass.yaml",
          "handler-nvidia/runtimeclass-nvidia.yaml", "example-pod.yaml"):
    for d in yaml.safe_load_all(open(sys.argv[1] + "/" + f)):
        if d["kind"] == "DaemonSet":
            spec = d["spec"]["template"]["spec"]
            out["selector"] = spec["nodeSelector"]
            out["image"] = spec["initContainers"][0]["image"]
            out["command"] = spec["initContainers"][0]["command"]
        if d["kind"] == "RuntimeClass":
            out["classes"][d["metadata"]["name"]] = d["handler"]
        if d["kind"] == "Pod":
            out["pod_class"] = d["spec"]["runtimeClassName"]
print(json.dumps(out))
)",
                        kKubeDir});
  ASSERT_EQ(r.status, 0) << r.err;
  Json m = Json::parse(r.out);

  EXPECT_EQ(quoted_after("docker build "),
            "-f packaging/kubernetes/Dockerfile -t " + m["image"].get<std::string>() + " .")
      << "README's image is the DaemonSet's";
  EXPECT_NE(qs.find("scripts/build-node.sh amd64 build-portable-amd64"), std::string::npos)
      << "the image is built from the portable build (the Dockerfile's COPY)";
  EXPECT_NE(ReadFile(kKubeDir + "/Dockerfile").find("COPY build-portable-${TARGETARCH}/bin/"),
            std::string::npos);
  ASSERT_EQ(m["selector"].size(), 1u);
  const std::string label =
      m["selector"].begin().key() + "=" + m["selector"].begin().value().get<std::string>();
  EXPECT_NE(qs.find("kubectl label node NODE " + label + "\n"), std::string::npos) << label;
  // The apply line names the overlay of the DaemonSet and the RuntimeClass files parsed above.
  const std::string apply = "kubectl apply -k packaging/kubernetes/handler\n";
  EXPECT_NE(qs.find(apply), std::string::npos) << apply;
  const std::string overlay = ReadFile(kKubeDir + "/handler/kustomization.yaml");
  for (const char* f : {"- ../base\n", "- daemonset.yaml\n", "- runtimeclass.yaml\n"})
    EXPECT_NE(overlay.find(f), std::string::npos) << f << overlay;
  std::string command = "install.sh";
  for (size_t i = 1; i < m["command"].size(); ++i)
    command += " " + m["command"][i].get<std::string>();
  EXPECT_EQ(m["command"][0], "/opt/oci-rlimit/install.sh");
  EXPECT_EQ(quoted_after("The DaemonSet runs `"), command);
  EXPECT_EQ(m["classes"]["oci-rlimit"], "oci-rlimit");
  EXPECT_EQ(m["classes"]["oci-rlimit-nvidia"], "oci-rlimit");
  EXPECT_EQ(m["pod_class"], "oci-rlimit");
  EXPECT_NE(qs.find("`runtimeClassName: oci-rlimit`"), std::string::npos);
  EXPECT_NE(qs.find("`runtimeClassName: oci-rlimit-nvidia`"), std::string::npos);
}

// README's NRI quick start on Kubernetes: the label it sets is the DaemonSet's node selector, and
// the overlay it applies from the .deb's copy (/usr/share/oci-rlimit/kubernetes/nri, installed
// from packaging/kubernetes/nri with the base beside it) holds the DaemonSet and the base, whose
// ConfigMap the plugin reads (kustomize.overlays builds it).
TEST(K8sManifestsTest, ReadmeNriQuickStartMatchesTheManifests) {
  OCI_RLIMIT_REQUIRE("python3");
  const std::string readme = ReadFile(std::string(OCI_RLIMIT_SOURCE_DIR) + "/README.md");
  const std::string label = "kubectl label node NODE oci-rlimit.io/nri=true\n";
  const std::string apply = "kubectl apply -k /usr/share/oci-rlimit/kubernetes/nri\n";
  EXPECT_NE(readme.find(label + apply), std::string::npos);
  CmdResult r = RunCmd({"python3", "-c", R"(
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1] + "/nri/nri-daemonset.yaml")):
    if d["kind"] == "DaemonSet":
        spec = d["spec"]["template"]["spec"]
        print(spec["nodeSelector"])
        print([v["configMap"]["name"] for v in spec["volumes"] if "configMap" in v])
)",
                        kKubeDir});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "{'oci-rlimit.io/nri': 'true'}\n['oci-rlimit-config']\n");
  const std::string overlay = ReadFile(kKubeDir + "/nri/kustomization.yaml");
  EXPECT_NE(overlay.find("- ../base\n"), std::string::npos) << overlay;
  EXPECT_NE(overlay.find("- nri-daemonset.yaml\n"), std::string::npos) << overlay;
  EXPECT_NE(ReadFile(std::string(OCI_RLIMIT_SOURCE_DIR) + "/packaging/CMakeLists.txt")
                .find("install(DIRECTORY kubernetes/ DESTINATION "
                      "${CMAKE_INSTALL_DATADIR}/oci-rlimit/kubernetes"),
            std::string::npos);
}

// Issue 30: SIGKILL at a random point of install and uninstall, 50 times
// (the installer script and every program it runs, one process group). After
// each kill containerd's config is the old one or the new one, whole, and
// parses; the next complete run succeeds and leaves no temp file of ours
// (AtomicWriteFile's ".oci-rlimit.XXXXXX", install.sh's probe) anywhere on the node.
std::vector<std::string> OurTempFiles(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(".oci-rlimit.") || name.starts_with(".oci-rlimit-probe.")) {
      out.push_back(e.path().string());
    }
  }
  return out;
}

TEST_F(K8sInstallerTest, KilledAnywhereTheConfigIsOldOrNewAndTheNextRunCleansUp) {
  const std::string before = HostFile("/etc/containerd/config.toml");
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(Install().status, 0);
  const auto run_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  const std::string after = HostFile("/etc/containerd/config.toml");
  ASSERT_NE(after, before);
  ASSERT_EQ(Uninstall().status, 0);
  const std::string source = fs::path(OurBinary("oci-rlimit-hook")).parent_path();
  std::mt19937 rng(20261205);  // fixed: a failure reruns the same kills
  std::uniform_int_distribution<long> when(0, std::max<long>(run_ms, 10));
  for (int i = 0; i < 50; ++i) {
    const bool install = i % 2 == 0;
    std::vector<std::string> argv = {"bash", kInstaller};
    if (!install) argv.push_back("--uninstall");
    for (const std::string& a :
         {std::string("--host-root"), host_, std::string("--source"), source})
      argv.push_back(a);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      setpgid(0, 0);
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      dup2(devnull, 2);
      execvp("bash", args.data());
      _exit(127);
    }
    setpgid(pid, pid);
    const long ms = when(rng);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    kill(-pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    const std::string now = HostFile("/etc/containerd/config.toml");
    EXPECT_TRUE(now == before || now == after)
        << "run " << i << (install ? " (install)" : " (uninstall)") << " killed after " << ms
        << " ms: containerd's config is neither old nor new:\n"
        << now;
    EXPECT_NO_THROW(ParseToml(now)) << "run " << i;
    CmdResult r = install ? Install() : Uninstall();
    ASSERT_EQ(r.status, 0) << "run " << i << " after a kill at " << ms << " ms: " << r.err;
    EXPECT_EQ(OurTempFiles(host_), std::vector<std::string>{})
        << "run " << i << (install ? " (install)" : " (uninstall)") << " after a kill at " << ms
        << " ms";
    EXPECT_EQ(HostFile("/etc/containerd/config.toml"), install ? after : before) << "run " << i;
  }
}

}  // namespace
}  // namespace ocirlimit::itest
