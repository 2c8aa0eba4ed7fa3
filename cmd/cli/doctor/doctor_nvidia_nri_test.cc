// doctor and NVIDIA's NRI plugin (doctor_nvidia_nri.cc): which running
// nvidia-ctk-installer it believes, and what it says each GPU path gives.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <string>
#include <vector>

#include "cli/doctor/doctor.h"
#include "tests/testing/case_name.h"
#include "tests/testing/fake_node_files.h"

namespace ocirlimit {
namespace {

// A containerd 2.x node with NRI's socket, oci-rlimit-nri running, and the
// processes a case adds (comm -> process).
class GpuNode : public testing::FakeFilesT<NodeOps> {
 public:
  std::multimap<std::string, RunningProcess> processes;
  std::optional<std::string> Which(const std::string& name) override {
    if (name == "containerd") return "/usr/bin/containerd";
    return std::nullopt;
  }
  Result<std::string> Version(const std::string& path) override {
    if (path == "/usr/bin/containerd") {
      return std::string("containerd github.com/containerd/containerd/v2 v2.1.9 abc\n");
    }
    return MakeError("no version");
  }
  bool IsExe(const std::string& path) override { return path == "/usr/bin/containerd"; }
  // Path -> inode: containerd's NRI socket, and what a case adds (another
  // engine's, or containerd's seen through a process's /proc/PID/root).
  std::map<std::string, ino_t> sockets = {{"/run/nri/nri.sock", 7}};
  std::optional<FileId> Socket(const std::string& path) override {
    auto it = sockets.find(Real(path));
    if (it == sockets.end()) return std::nullopt;
    return FileId{1, it->second, S_IFSOCK | 0755};
  }
  std::vector<RunningProcess> ProcessesNamed(const std::string& comm) override {
    std::vector<RunningProcess> out;
    for (auto [it, end] = processes.equal_range(comm); it != end; ++it) out.push_back(it->second);
    return out;
  }
};

RunningProcess Installed(int pid, std::vector<std::string> argv, const std::string& exe) {
  RunningProcess p{pid, std::move(argv)};
  p.exe = exe;
  p.exe_root_owned = p.root_uid = p.host_namespaces = true;
  return p;
}

const RunningProcess kNvidia =
    Installed(77, {"nvidia-ctk-installer", "--enable-nri-plugin"}, "/usr/bin/nvidia-ctk-installer");

struct NvidiaCase {
  std::string name;
  bool listed = false;  // [cdi] injectors = ["nvidia-nri"]
  std::vector<RunningProcess> nvidia = {};
  std::vector<std::string> want = {};     // the nri lines that name NVIDIA or nvidia-nri
  std::string environ = "PATH=/usr/bin";  // pid 77's /proc/77/environ, NUL-separated
  std::map<std::string, ino_t> sockets = {};
};

class NvidiaNriTable : public ::testing::TestWithParam<NvidiaCase> {};

TEST_P(NvidiaNriTable, NamesTheConnectedPluginAndWhatEachGpuPathGives) {
  const NvidiaCase& c = GetParam();
  GpuNode n;
  n.files["/etc/containerd/config.toml"] = "version = 3\n";
  n.files["/etc/oci-rlimit/config.toml"] =
      "[[rule]]\nname='gpu'\nrlimits=['memlock=8M']\nmatch={cdi=['nvidia.com/gpu=*']}\n" +
      std::string(c.listed ? "[cdi]\ninjectors=['nvidia-nri']\n" : "");
  n.files["/proc/self/status"] = "Name:\tx\nCapEff:\t000001ffffffffff\n";
  n.links["/var/run"] = "/run";
  n.processes.emplace("containerd", RunningProcess{1, {"containerd"}});
  n.processes.emplace("oci-rlimit-nri",
                      Installed(42, {"oci-rlimit-nri", "--socket", "/run/nri/nri.sock"},
                                "/usr/bin/oci-rlimit-nri"));
  for (const auto& p : c.nvidia) n.processes.emplace("nvidia-ctk-inst", p);
  n.files["/proc/77/environ"] = c.environ;
  n.sockets.insert(c.sockets.begin(), c.sockets.end());
  DoctorReport r = RunDoctor(n);
  std::vector<std::string> got;
  for (const auto& check : r.checks) {
    if (check.area != "nri") continue;
    if (check.what.find("NVIDIA") == std::string::npos &&
        check.what.find("nvidia") == std::string::npos) {
      continue;
    }
    std::string status = StatusName(check.status);
    status.resize(6, ' ');
    got.push_back(status + check.what);
  }
  EXPECT_EQ(got, c.want) << DoctorText(r);
}

constexpr const char* kConnected =
    "ok    NVIDIA's NRI plugin (nvidia-ctk-installer, pid 77) is connected to containerd's NRI "
    "socket";
constexpr const char* kDevicePlugin =
    "info  GPUs the device plugin allocates by CDI (cdi-cri, cdi-annotations) are resolved by "
    "containerd before NRI: a devices rule (\"/dev/nvidia*\") matches them";
constexpr const char* kCdiMatches =
    "ok    GPUs NVIDIA's NRI plugin injects (pod annotations nvidia.cdi.k8s.io/...) are resolved "
    "after oci-rlimit-nri answers: a cdi rule matches them ([cdi] injectors lists nvidia-nri)";
constexpr const char* kCdiUnlisted =
    "warn  GPUs NVIDIA's NRI plugin injects (pod annotations nvidia.cdi.k8s.io/...) are resolved "
    "after oci-rlimit-nri answers, so no device rule sees them, and [cdi] injectors does not "
    "list nvidia-nri: no rule matches those pods";
constexpr const char* kListedAlone =
    "warn  [cdi] injectors lists nvidia-nri, but doctor sees no NVIDIA NRI plugin connected to "
    "containerd: CDI names in pod annotations are then the author's word alone";

RunningProcess Argv(std::vector<std::string> args) {
  args.insert(args.begin(), "nvidia-ctk-installer");
  return Installed(77, std::move(args), "/usr/bin/nvidia-ctk-installer");
}
// As in the GPU Operator's toolkit pod: the node's PID namespace, its own mounts.
RunningProcess InItsPod() {
  RunningProcess p = Argv({"--enable-nri-plugin", "--nri-namespace", "gpu-operator"});
  p.host_namespaces = false;
  p.host_pid_namespace = true;
  return p;
}
constexpr const char* kOff =
    "info  nvidia-ctk-installer runs (pid 77) with its NRI plugin off (no --enable-nri-plugin, "
    "-p or ENABLE_NRI_PLUGIN)";
constexpr const char* kOnCrioSocket =
    "info  nvidia-ctk-installer (pid 77) runs NVIDIA's NRI plugin on the socket "
    "/run/crio/nri.sock (--nri-socket), which is not containerd's NRI socket: it is not "
    "connected to containerd";

RunningProcess Impostor() {
  RunningProcess p = kNvidia;
  p.root_uid = false;
  return p;
}
RunningProcess Renamed() {
  RunningProcess p = kNvidia;
  p.exe = "/tmp/x/sh";
  return p;
}

INSTANTIATE_TEST_SUITE_P(
    Doctor, NvidiaNriTable,
    ::testing::Values(
        NvidiaCase{.name = "ConnectedAndListed",
                   .listed = true,
                   .nvidia = {kNvidia},
                   .want = {kConnected, kDevicePlugin, kCdiMatches}},
        NvidiaCase{.name = "ConnectedNotListed",
                   .nvidia = {kNvidia},
                   .want = {kConnected, kDevicePlugin, kCdiUnlisted}},
        NvidiaCase{.name = "ListedNoneRunning", .listed = true, .want = {kListedAlone}},
        NvidiaCase{.name = "NoneRunningNotListed"},
        NvidiaCase{.name = "NotRootIsNotBelieved",
                   .listed = true,
                   .nvidia = {Impostor()},
                   .want = {"warn  a process named nvidia-ctk-installer (pid 77) is not believed: "
                            "it does not run as root",
                            kListedAlone}},
        NvidiaCase{.name = "AnotherExecutableIsNotBelieved",
                   .nvidia = {Renamed()},
                   .want = {"warn  a process named nvidia-ctk-installer (pid 77) is not believed: "
                            "its executable is \"/tmp/x/sh\", not nvidia-ctk-installer"}},
        NvidiaCase{.name = "WithoutFlagOrVariableIsOff", .nvidia = {Argv({})}, .want = {kOff}},
        // The seven setups of issue 44, as NVIDIA's v1.20.0 reads its flags.
        NvidiaCase{.name = "ShortFlag",
                   .listed = true,
                   .nvidia = {Argv({"--runtime", "containerd", "-p"})},
                   .want = {kConnected, kDevicePlugin, kCdiMatches}},
        NvidiaCase{.name = "FlagWithValueOne",
                   .listed = true,
                   .nvidia = {Argv({"--enable-nri-plugin=1"})},
                   .want = {kConnected, kDevicePlugin, kCdiMatches}},
        NvidiaCase{.name = "VariableOnly",
                   .listed = true,
                   .nvidia = {Argv({"--runtime", "containerd"})},
                   .want = {kConnected, kDevicePlugin, kCdiMatches},
                   .environ = std::string("PATH=/bin\0ENABLE_NRI_PLUGIN=true\0", 34)},
        NvidiaCase{.name = "FlagFalseWinsOverTheVariable",
                   .nvidia = {Argv({"-enable-nri-plugin=false"})},
                   .want = {"info  nvidia-ctk-installer runs (pid 77) with its NRI plugin off "
                            "(-enable-nri-plugin=false)"},
                   .environ = std::string("ENABLE_NRI_PLUGIN=1\0", 20)},
        NvidiaCase{.name = "SocketFlagAtCrioIsNotContainerds",
                   .listed = true,
                   .nvidia = {Argv({"-p", "--nri-socket", "/run/crio/nri.sock"})},
                   .want = {kOnCrioSocket, kListedAlone},
                   .sockets = {{"/run/crio/nri.sock", 9}}},
        NvidiaCase{.name = "SocketVariableAtContainerds",
                   .nvidia = {Argv({"-p"})},
                   .want = {kConnected, kDevicePlugin, kCdiUnlisted},
                   .environ = std::string("NRI_SOCKET=/run/nri/nri.sock\0", 29)},
        NvidiaCase{.name = "OwnMountNamespaceIsSeenUnproven",
                   .listed = true,
                   .nvidia = {InItsPod()},
                   .want = {"warn  nvidia-ctk-installer (pid 77) runs NVIDIA's NRI plugin "
                            "(--enable-nri-plugin) on containerd's NRI socket from its own mount "
                            "namespace, as in the GPU Operator's toolkit pod: seen, unproven (a "
                            "pod could run such a process): doctor cannot tell that the GPUs it "
                            "injects are NVIDIA's"},
                   .sockets = {{"/proc/77/root/run/nri/nri.sock", 7}}},
        NvidiaCase{.name = "OwnMountNamespaceWithoutTheSocket",
                   .listed = true,
                   .nvidia = {InItsPod()},
                   .want = {"info  nvidia-ctk-installer (pid 77) runs NVIDIA's NRI plugin on "
                            "the socket /run/nri/nri.sock (NRI's default), which doctor does not "
                            "find in its mount namespace: it is not connected to containerd",
                            kListedAlone}}),
    CaseName{});

}  // namespace
}  // namespace ocirlimit
