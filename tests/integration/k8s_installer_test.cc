// The Kubernetes node installer (packaging/kubernetes/install.sh) against a
// temporary host root, a real containerd reading the config it wrote, and the
// manifests parsed as YAML.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "daemons.h"
#include "harness.h"

namespace ocirlimit::itest {
namespace {
namespace fs = std::filesystem;

const std::string kKubeDir = std::string(OCI_RLIMIT_SOURCE_DIR) + "/packaging/kubernetes";
const std::string kInstaller = kKubeDir + "/install.sh";
constexpr const char* kHandlerTable =
    "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.oci-rlimit.options]";
constexpr const char* kBinaryName = "BinaryName = \"/usr/local/bin/oci-rlimit-runtime\"";

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

// Everything about a tree that an install could change.
struct Entry {
  std::string kind;  // file, dir, link
  std::string content;
  mode_t mode = 0;
  int64_t mtime_ns = 0;
  bool operator==(const Entry&) const = default;
};
using Tree = std::map<std::string, Entry>;

Tree Snapshot(const std::string& root) {
  Tree out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    struct stat st {};
    lstat(e.path().c_str(), &st);
    Entry entry;
    entry.mode = st.st_mode;
    if (S_ISDIR(st.st_mode)) {
      entry.kind = "dir";
    } else if (S_ISLNK(st.st_mode)) {
      entry.kind = "link";
      entry.content = fs::read_symlink(e.path()).string();
    } else {
      entry.kind = "file";
      entry.content = ReadFile(e.path().string());
      entry.mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    }
    out[fs::relative(e.path(), root).string()] = entry;
  }
  return out;
}

std::vector<std::string> Differences(const Tree& a, const Tree& b) {
  std::vector<std::string> out;
  for (const auto& [path, entry] : a) {
    auto it = b.find(path);
    if (it == b.end()) {
      out.push_back("gone: " + path);
    } else if (!(it->second == entry)) {
      out.push_back("changed: " + path);
    }
  }
  for (const auto& [path, entry] : b) {
    if (!a.count(path)) out.push_back("new: " + path);
  }
  return out;
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

  // With an old mtime and mode 0600, so a restore that is not byte-and-
  // metadata exact shows.
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
    return RunCmd({"bash", kInstaller, "--uninstall", "--host-root", host_});
  }
  std::string HostFile(const std::string& rel) const { return ReadFile(host_ + rel); }

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
  for (const char* p : {"oci-rlimit-hook", "oci-rlimit-runtime", "oci-prlimit-helper"}) {
    EXPECT_EQ(HostFile(std::string("/usr/local/bin/") + p), ReadFile(OurBinary(p))) << p;
    EXPECT_EQ(fs::status(host_ + "/usr/local/bin/" + p).permissions() & fs::perms::all,
              fs::perms(0755));
  }
  // The config our hook reads: precreate merges it into a spec.
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
  EXPECT_NE(conf.find(kHandlerTable), std::string::npos) << conf;
  EXPECT_FALSE(fs::exists(host_ + "/etc/containers/oci/hooks.d")) << "not a CRI-O node";
}

TEST_F(K8sInstallerTest, SecondRunChangesNothing) {
  ASSERT_EQ(Install().status, 0);
  Tree once = Snapshot(host_);
  CmdResult again = Install();
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(again.out.find("wrote"), std::string::npos) << again.out;
  EXPECT_EQ(Differences(once, Snapshot(host_)), std::vector<std::string>{});
}

TEST_F(K8sInstallerTest, UninstallRestoresTheNodeByteForByte) {
  // An admin's own oci-rlimit config, to be backed up and put back.
  fs::create_directories(host_ + "/etc/oci-rlimit");
  WriteFile(host_ + "/etc/oci-rlimit/config.toml", "rlimits = [\"core=0\"]\n");
  Tree original = Snapshot(host_);
  ASSERT_EQ(Install().status, 0);
  ASSERT_EQ(Install().status, 0);
  EXPECT_NE(HostFile("/etc/oci-rlimit/config.toml"), "rlimits = [\"core=0\"]\n");
  CmdResult r = Uninstall();
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(Differences(original, Snapshot(host_)), std::vector<std::string>{});
}

TEST_F(K8sInstallerTest, RefusedInputChangesNothing) {
  Tree original = Snapshot(host_);
  CmdResult bad = Install({"--rlimits", "memlock=1M;touch /x"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.err, "install.sh: --rlimits: \"memlock=1M;touch/x\" is not NAME=SOFT[:HARD]\n");
  UseContainerdConfig("[plugins.cri]\n");  // version 1
  original = Snapshot(host_);
  CmdResult v1 = Install();
  EXPECT_EQ(v1.status, 1);
  EXPECT_NE(v1.err.find("/etc/containerd/config.toml: not a version = 2 config"), std::string::npos)
      << v1.err;
  EXPECT_EQ(Differences(original, Snapshot(host_)), std::vector<std::string>{});
}

// Issue 17: binaries the node cannot run (another architecture, a newer
// glibc) are refused in one line, before anything changes.
TEST_F(K8sInstallerTest, RefusesBinariesTheNodeCannotRun) {
  const std::string src = dir_ / "foreign";
  fs::create_directories(src);
  WriteFile(src + "/oci-rlimit-hook",
            "\x7f"
            "ELF but not for this machine\n",
            0755);
  Tree original = Snapshot(host_);
  CmdResult r = RunCmd({"bash", kInstaller, "--host-root", host_, "--source", src});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("install.sh: " + src + "/oci-rlimit-hook cannot run on this "),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(Differences(original, Snapshot(host_)), std::vector<std::string>{});
}

// The image carries bin/amd64 and bin/arm64; the node's own one is installed.
TEST_F(K8sInstallerTest, PicksTheNodesArchitecture) {
  const std::string src = dir_ / "multiarch";
  const std::string mine = RunCmd({"uname", "-m"}).out == "aarch64\n" ? "arm64" : "amd64";
  const std::string other = mine == "amd64" ? "arm64" : "amd64";
  fs::create_directories(src + "/" + mine);
  fs::create_directories(src + "/" + other);
  fs::copy_file(OurBinary("oci-rlimit-hook"), src + "/" + mine + "/oci-rlimit-hook");
  WriteFile(src + "/" + other + "/oci-rlimit-hook", "not for this node\n", 0755);
  CmdResult r = RunCmd({"bash", kInstaller, "--host-root", host_, "--source", src});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(HostFile("/usr/local/bin/oci-rlimit-hook"), ReadFile(OurBinary("oci-rlimit-hook")));
}

TEST_F(K8sInstallerTest, CrioNodeGetsTheAnnotationScopedHook) {
  fs::remove_all(host_ + "/etc/containerd");
  fs::create_directories(host_ + "/etc/crio");
  CmdResult r = Install();  // --runtime auto
  ASSERT_EQ(r.status, 0) << r.err;
  Json hook = Json::parse(HostFile("/etc/containers/oci/hooks.d/oci-rlimit.json"));
  EXPECT_EQ(hook["version"], "1.0.0");
  EXPECT_EQ(hook["hook"]["path"], "/usr/local/bin/oci-rlimit-hook");
  EXPECT_EQ(hook["stages"], Json::array({"createRuntime"}));
  EXPECT_EQ(hook["when"]["annotations"]["^oci-rlimit\\.io/enable$"], "^true$");
  EXPECT_FALSE(fs::exists(host_ + "/etc/containerd"));
  ASSERT_EQ(Uninstall().status, 0);
  EXPECT_FALSE(fs::exists(host_ + "/etc/containers"));
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

  CmdResult dump = RunCmd({"containerd", "--config", config, "config", "dump"});
  ASSERT_EQ(dump.status, 0) << dump.err;
  size_t at = dump.out.find(kHandlerTable);
  ASSERT_NE(at, std::string::npos) << dump.out;
  size_t next_table = dump.out.find("\n", dump.out.find("[", at + 1));
  EXPECT_LT(dump.out.find(kBinaryName, at), next_table) << "BinaryName of the oci-rlimit handler";
  EXPECT_NE(dump.out.find("containerd.runtimes.runc]"), std::string::npos) << "runc kept";
  if (full) {
    EXPECT_NE(dump.out.find("sandbox_image = \"example/pause:9\""), std::string::npos);
    EXPECT_NE(dump.out.find("SystemdCgroup = true"), std::string::npos);
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

// Every object in the manifests has apiVersion, kind and metadata.name; the
// RuntimeClass is the handler the installer adds; the DaemonSet runs the
// installer privileged against the host root it mounts.
TEST(K8sManifestsTest, ParseAsYamlWithTheRightShape) {
  OCI_RLIMIT_REQUIRE("python3");
  const std::string script = R"(
import glob, sys, yaml
objs = []
for f in sorted(glob.glob(sys.argv[1] + "/*.yaml")):
    for d in yaml.safe_load_all(open(f)):
        assert d["apiVersion"] and d["kind"] and d["metadata"]["name"], f
        objs.append(d)
        print(f.split("/")[-1], d["kind"], d["metadata"]["name"])
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
print("checked")
)";
  CmdResult r = RunCmd({"python3", "-c", script, kKubeDir});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("runtimeclass.yaml RuntimeClass oci-rlimit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("daemonset.yaml DaemonSet oci-rlimit-installer"), std::string::npos);
  EXPECT_NE(r.out.find("nri-daemonset.yaml DaemonSet oci-rlimit-nri"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("checked"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ocirlimit::itest
