// doctor on whole fake nodes shaped like real ones: containerd 1.7 (config
// version 2) and 2.x (version 3) with NVIDIA's toolkit as nvidia-ctk and the
// GPU Operator write it (handlers nvidia, nvidia-cdi, nvidia-legacy under
// /usr/local/nvidia/toolkit/, default_runtime_name = "nvidia"), and CRI-O
// with an empty crio.conf and everything in crio.conf.d. Each case asserts
// the exact lines of the areas it is about, and the exit status.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <sstream>

#include "cli/doctor/doctor.h"
#include "formats/text.h"
#include "tests/testing/case_name.h"
#include "tests/testing/fake_node_files.h"

namespace ocirlimit {
namespace {

constexpr const char* kStdPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

class FakeNode : public testing::FakeFilesT<NodeOps> {
 public:
  std::map<std::string, std::string> versions;  // real path -> --version output
  std::map<std::string, ino_t> sockets;
  std::multimap<std::string, RunningProcess> processes;

  std::optional<std::string> Which(const std::string& name) override {
    return WhichIn(name, kStdPath);
  }
  Result<std::string> Version(const std::string& path) override {
    auto it = versions.find(Resolve(path).value_or(path));
    if (it == versions.end()) return MakeError("no version");
    return it->second;
  }
  std::optional<FileId> Socket(const std::string& path) override {
    auto it = sockets.find(Real(path));
    if (it == sockets.end()) return std::nullopt;
    return FileId{1, it->second, S_IFSOCK | 0755};
  }
  std::vector<RunningProcess> ProcessesNamed(const std::string& comm) override {
    std::vector<RunningProcess> out;
    for (auto [it, end] = processes.equal_range(comm); it != end; ++it) {
      RunningProcess p = it->second;
      if (p.exe.empty()) {  // the installed program, unless a test says otherwise
        p.exe = "/usr/bin/" + comm;
        p.exe_root_owned = p.root_uid = p.host_namespaces = true;
      }
      out.push_back(std::move(p));
    }
    return out;
  }
  void Program(const std::string& path, const std::string& version = "") {
    executables.insert(path);
    if (!version.empty()) versions[path] = version;
  }
};

constexpr const char* kWrapper = "/usr/bin/oci-rlimit-runtime";
constexpr const char* kToolkit = "/usr/local/nvidia/toolkit";
constexpr const char* kDropIn = "/etc/oci-rlimit/config.d/50-installer.toml";
constexpr const char* kModeJson = "/var/lib/oci-rlimit/node-install/mode.json";
constexpr const char* kOperatorNvidiaConfig =
    "/usr/local/nvidia/toolkit/.config/nvidia-container-runtime/config.toml";

// The programs every node here has: runc, crun, ours.
FakeNode BaseNode() {
  FakeNode n;
  n.Program("/usr/sbin/runc", "runc version 1.1.5\n");
  n.Program("/usr/bin/crun", "crun version 1.8.1\n");
  n.Program("/usr/bin/oci-rlimit-hook");
  n.Program(kWrapper);
  n.files["/etc/oci-rlimit/config.toml"] = "rlimits = ['memlock=unlimited']\n";
  n.files["/proc/self/status"] = "CapEff:\t000001ffffffffff\n";
  return n;
}

// The GPU Operator's toolkit: its three runtimes and its own config.
void OperatorToolkit(FakeNode& n, const std::string& runtimes = "") {
  for (const char* name : {"nvidia-container-runtime", "nvidia-container-runtime.cdi",
                           "nvidia-container-runtime.legacy"}) {
    n.Program(std::string(kToolkit) + "/" + name);
  }
  n.files[kOperatorNvidiaConfig] = "[nvidia-container-runtime]\nlog-level = 'info'\n" +
                                   (runtimes.empty() ? "" : "runtimes = " + runtimes + "\n");
}

// containerd's config as the operator rewrites it, plus our handler; `cri`
// is the CRI plugin of the version (v2: 1.7, v3: 2.x).
std::string OperatorContainerd(int version) {
  const std::string cri =
      version == 2 ? "io.containerd.grpc.v1.cri" : "io.containerd.cri.v1.runtime";
  std::ostringstream os;
  os << "version = " << version << "\n";
  if (version == 2) os << "imports = [\"/etc/containerd/config.toml\"]\n";
  const std::string base = "[plugins.\"" + cri + "\".containerd";
  os << base << "]\ndefault_runtime_name = \"nvidia\"\n";
  for (auto [name, bin] : std::vector<std::pair<std::string, std::string>>{
           {"nvidia", "nvidia-container-runtime"},
           {"nvidia-cdi", "nvidia-container-runtime.cdi"},
           {"nvidia-legacy", "nvidia-container-runtime.legacy"},
           {"oci-rlimit", ""},
           {"runc", ""}}) {
    os << base << ".runtimes." << name << "]\nruntime_type = \"io.containerd.runc.v2\"\n";
    if (name == "oci-rlimit") os << "pod_annotations = [\"oci-rlimit.io/*\"]\n";
    os << base << ".runtimes." << name << ".options]\nSystemdCgroup = true\n";
    if (name == "oci-rlimit") {
      os << "BinaryName = \"" << kWrapper << "\"\n";
    } else if (!bin.empty()) {
      os << "BinaryName = \"" << kToolkit << "/" << bin << "\"\n";
    }
  }
  return os.str();
}

void Containerd(FakeNode& n, const std::string& version_line, const std::string& config) {
  n.Program("/usr/bin/containerd", version_line);
  n.files["/etc/containerd/config.toml"] = config;
}

constexpr const char* kCtd17 = "containerd github.com/containerd/containerd v1.7.24 abc\n";
constexpr const char* kCtd2 = "containerd github.com/containerd/containerd/v2 v2.1.9 abc\n";

struct ScenarioCase {
  std::string name;
  FakeNode (*node)();
  std::vector<std::string> areas;  // the areas whose lines are compared
  std::vector<std::string> want;   // "STATUS AREA what", every line of those areas
  int exit_status;
  DoctorOptions options = {};
};

std::vector<std::string> Lines(const DoctorReport& r, const std::vector<std::string>& areas) {
  std::vector<std::string> out;
  for (const auto& c : r.checks) {
    if (std::find(areas.begin(), areas.end(), c.area) == areas.end()) continue;
    out.push_back(
        Cat(StatusName(c.status), " ", c.area, " ", c.what, c.path.empty() ? "" : " @" + c.path));
  }
  return out;
}

class Scenarios : public ::testing::TestWithParam<ScenarioCase> {};

TEST_P(Scenarios, ExactVerdicts) {
  const ScenarioCase& c = GetParam();
  FakeNode n = c.node();
  const DoctorReport r = RunDoctor(n, c.options);
  EXPECT_EQ(Lines(r, c.areas), c.want) << DoctorText(r);
  EXPECT_EQ(r.ok() ? 0 : 1, c.exit_status) << DoctorText(r);
  // Never both FAIL and ok for one handler.
  for (const auto& a : r.checks) {
    if (a.status != CheckStatus::kFail || !a.what.starts_with("runtime handler ")) continue;
    const std::string handler = a.what.substr(8, a.what.find(':') - 8);  // handler "NAME"
    for (const auto& b : r.checks) {
      EXPECT_FALSE(b.status == CheckStatus::kOk && b.area == a.area &&
                   b.what.find(handler) != std::string::npos)
          << b.what;
    }
  }
}

// --- the nodes ---

// containerd 1.7 on an operator node, the installer's drop-in naming the
// operator's runtime, and NVIDIA's config pointing back at the wrapper:
// every pod through either fails with the wrapper's loop error.
FakeNode NvidiaLoopsBack() {
  FakeNode n = BaseNode();
  OperatorToolkit(n, "['oci-rlimit-runtime', 'runc']");
  Containerd(n, kCtd17, OperatorContainerd(2));
  n.files[kDropIn] =
      "[runtime]\nruntimes = ['/usr/local/nvidia/toolkit/nvidia-container-runtime']\n";
  return n;
}

// The installer's remembered mode: `nvidia` and the engines it set up.
std::string ModeJson(bool nvidia, const std::string& runtimes) {
  return std::string(R"({"prefix": "/usr", "runtimes": )") + runtimes + R"(, "nvidia": )" +
         (nvidia ? "true" : "false") +
         R"(, "nvidia_runtime": "", "containerd_added_default": ""})" + "\n";
}

// containerd 2.x on an operator node whose drop-in has no [runtime]
// runtimes: oci-rlimit runs runc directly, skipping NVIDIA's runtime.
FakeNode WrapperSkipsNvidia() {
  FakeNode n = BaseNode();
  OperatorToolkit(n);
  Containerd(n, kCtd2, OperatorContainerd(3));
  n.files[kDropIn] = "rlimits = ['memlock=unlimited']\n";
  return n;
}

// ... on a node installed with --nvidia, as after the shipped DaemonSet's
// rerun without --nvidia by an installer that did not remember the mode.
FakeNode DaemonSetRerunBypassesNvidia() {
  FakeNode n = WrapperSkipsNvidia();
  n.files[kModeJson] = ModeJson(true, R"(["containerd"])");
  return n;
}

// ... on a node installed without --nvidia: nothing says NVIDIA was meant.
FakeNode InstalledWithoutNvidia() {
  FakeNode n = WrapperSkipsNvidia();
  n.files[kModeJson] = ModeJson(false, R"(["containerd"])");
  return n;
}

// ... installed with --nvidia for CRI-O only: containerd's handler is not
// the one the mode speaks of.
FakeNode InstalledWithNvidiaForCrioOnly() {
  FakeNode n = WrapperSkipsNvidia();
  n.files[kModeJson] = ModeJson(true, R"(["crio"])");
  return n;
}

// ... with no installer state, and a handler named for NVIDIA that runs
// the wrapper straight to runc.
FakeNode NvidiaNamedHandlerSkipsNvidia() {
  FakeNode n = WrapperSkipsNvidia();
  n.files["/etc/containerd/config.toml"] +=
      "[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.oci-rlimit-nvidia]\n"
      "runtime_type = \"io.containerd.runc.v2\"\n"
      "[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.oci-rlimit-nvidia.options]\n"
      "BinaryName = \"/usr/bin/oci-rlimit-runtime\"\n";
  return n;
}

// The same node installed with --nvidia: NVIDIA's runtime in the chain.
FakeNode OperatorNodeWithNvidia() {
  FakeNode n = DaemonSetRerunBypassesNvidia();
  n.files[kDropIn] +=
      "[runtime]\nruntimes = ['/usr/local/nvidia/toolkit/nvidia-container-runtime']\n";
  return n;
}

// nvidia-ctk on containerd 1.7 with --set-as-default, and our handler.
FakeNode NvidiaCtkDefault() {
  FakeNode n = BaseNode();
  n.Program("/usr/bin/nvidia-container-runtime");
  Containerd(n, kCtd17, R"(version = 2
[plugins."io.containerd.grpc.v1.cri".containerd]
default_runtime_name = "nvidia"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
BinaryName = "/usr/bin/nvidia-container-runtime"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit]
runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit.options]
BinaryName = "/usr/bin/oci-rlimit-runtime"
)");
  n.files[kDropIn] = "[runtime]\nruntimes = ['/usr/bin/nvidia-container-runtime']\n";
  return n;
}

// runc on PATH is the wrapper (runtime mode): NVIDIA's "runc" is the wrapper.
FakeNode ShadowedRuncUnderNvidia() {
  FakeNode n = NvidiaCtkDefault();
  n.links["/usr/local/sbin/runc"] = kWrapper;
  return n;
}

// The wrapper the handler names is gone.
FakeNode HandlerBinaryMissing() {
  FakeNode n = BaseNode();
  n.executables.erase(kWrapper);
  Containerd(n, kCtd2, R"(version = 3
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.oci-rlimit.options]
BinaryName = "/usr/bin/oci-rlimit-runtime"
)");
  return n;
}

// CRI-O with an empty crio.conf (no [crio] table) and everything in
// crio.conf.d, the installer's hook file (annotation-conditioned), and
// containerd 1.6 from docker's packages beside it.
FakeNode CrioBase() {
  FakeNode n = BaseNode();
  n.Program("/usr/bin/crio", "crio version 1.31.13\n");
  n.Program("/usr/bin/containerd", "containerd github.com/containerd/containerd 1.6.20~ds1 x\n");
  n.files["/etc/crio/crio.conf"] = "";
  n.files["/etc/crio/crio.conf.d/10-runc.conf"] =
      "[crio.runtime]\ndefault_runtime = 'runc'\n"
      "[crio.runtime.runtimes.runc]\nruntime_path = '/usr/sbin/runc'\n";
  n.files["/etc/crio/crio.conf.d/50-oci-rlimit.conf"] =
      "[crio.runtime.runtimes.oci-rlimit]\nruntime_path = '/usr/bin/oci-rlimit-runtime'\n"
      "runtime_type = 'oci'\n";
  n.files["/usr/share/containers/oci/hooks.d/oci-rlimit.json"] =
      R"({"version":"1.0.0","hook":{"path":"/usr/bin/oci-rlimit-hook","args":["oci-rlimit-hook","createRuntime"]},"when":{"annotations":{"^oci-rlimit\\.io/enable$":"^true$"}},"stages":["createRuntime"]})";
  return n;
}

// ... as the installer left it (its handler in 99-oci-rlimit.conf), crio
// running since before the write (issue 37: it does not know the handler).
FakeNode CrioRestartPending() {
  FakeNode n = CrioBase();
  n.files["/etc/crio/crio.conf.d/99-oci-rlimit.conf"] =
      n.files["/etc/crio/crio.conf.d/50-oci-rlimit.conf"];
  n.files.erase("/etc/crio/crio.conf.d/50-oci-rlimit.conf");
  n.files["/var/lib/oci-rlimit/node-install/restart"] = "crio 1000\n";
  return n;
}

// ... on cgroupfs with no monitor_cgroup: crio refuses to start (issue 37).
FakeNode CrioMonitorRefused() {
  FakeNode n = CrioBase();
  n.files["/etc/crio/crio.conf"] = "[crio.runtime]\ncgroup_manager = 'cgroupfs'\n";
  return n;
}

// ... whose drop-in names a runtime that is not there.
FakeNode CrioRuntimesResolveToNothing() {
  FakeNode n = CrioBase();
  n.files[kDropIn] = "[runtime]\nruntimes = ['nvidia-container-runtime']\n";
  return n;
}

// ... with oci-rlimit-nri running and connected to CRI-O's NRI socket.
FakeNode CrioWithNri() {
  FakeNode n = CrioBase();
  n.sockets["/var/run/nri/nri.sock"] = 7;
  n.processes.emplace("oci-rlimit-nri", RunningProcess{42, {"/usr/bin/oci-rlimit-nri"}, "systemd"});
  n.files["/etc/systemd/system/multi-user.target.wants/oci-rlimit-nri.service"] = "[Service]\n";
  return n;
}

// Only the installer's drop-in: config.toml does not exist.
FakeNode OnlyADropIn() {
  FakeNode n = BaseNode();
  n.files.erase("/etc/oci-rlimit/config.toml");
  n.files[kDropIn] = "rlimits = ['memlock=unlimited']\n";
  return n;
}

// A config elsewhere, named with --config; the default path holds a broken one.
FakeNode ConfigElsewhere() {
  FakeNode n = BaseNode();
  n.files["/etc/oci-rlimit/config.toml"] = "rlimits = ['memlok=1']\n";
  n.files["/srv/rl/config.toml"] = "rlimits = ['nofile=4096']\n";
  return n;
}

// A copy of a node under --root, without a /proc.
FakeNode CopyWithoutProc() {
  FakeNode n = BaseNode();
  n.files.erase("/proc/self/status");
  return n;
}

// The containerd lines of WrapperSkipsNvidia's node, with `ours` as the
// verdicts on the handlers that run the wrapper; `annotations`: the ok line
// for oci-rlimit's pod_annotations (absent when its verdict is FAIL).
constexpr const char* kSkipsNvidiaWarn =
    "warn containerd runtime handler \"oci-rlimit\": /usr/bin/oci-rlimit-runtime -> "
    "/usr/sbin/runc: pods with runtimeClassName oci-rlimit get oci-rlimit's limits (by default "
    "memlock=unlimited:unlimited), not NVIDIA's runtime, which runtime handler \"nvidia\" runs: "
    "GPU pods through it start without their GPUs @/etc/containerd/config.toml";

std::vector<std::string> SkipsNvidiaLines(const std::vector<std::string>& ours, bool annotations) {
  std::vector<std::string> out = {
      "ok containerd containerd 2.1.9 @/usr/bin/containerd",
      "info containerd config version 3: handlers under "
      "plugins.\"io.containerd.cri.v1.runtime\" (containerd 2.x) @/etc/containerd/config.toml",
      "info containerd runtime handler \"nvidia\": "
      "/usr/local/nvidia/toolkit/nvidia-container-runtime -> /usr/sbin/runc: pods with "
      "runtimeClassName nvidia get no oci-rlimit-runtime limits and NVIDIA's runtime "
      "@/etc/containerd/config.toml",
      "info containerd runtime handler \"nvidia-cdi\": "
      "/usr/local/nvidia/toolkit/nvidia-container-runtime.cdi -> /usr/sbin/runc: pods with "
      "runtimeClassName nvidia-cdi get no oci-rlimit-runtime limits and NVIDIA's runtime "
      "@/etc/containerd/config.toml",
      "info containerd runtime handler \"nvidia-legacy\": "
      "/usr/local/nvidia/toolkit/nvidia-container-runtime.legacy -> /usr/sbin/runc: pods with "
      "runtimeClassName nvidia-legacy get no oci-rlimit-runtime limits and NVIDIA's runtime "
      "@/etc/containerd/config.toml"};
  out.insert(out.end(), ours.begin(), ours.end());
  out.push_back(
      "info containerd runtime handler \"runc\": /usr/sbin/runc: pods with runtimeClassName "
      "runc get no oci-rlimit-runtime limits, not NVIDIA's runtime @/etc/containerd/config.toml");
  if (annotations) {
    out.push_back(
        "ok containerd handler \"oci-rlimit\" passes the pod annotation oci-rlimit.io/rlimits "
        "to the spec @/etc/containerd/config.toml");
  }
  out.push_back(
      "warn containerd pods without a runtimeClassName get runtime handler \"nvidia\" "
      "(default_runtime_name): no oci-rlimit-runtime limits and NVIDIA's runtime "
      "@/etc/containerd/config.toml");
  out.push_back("info containerd no systemd unit containerd.service in the unit directories");
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Doctor, Scenarios,
    ::testing::Values(
        ScenarioCase{
            "Containerd17NvidiaRuntimesPointBackAtTheWrapper",
            NvidiaLoopsBack,
            {"containerd"},
            {"ok containerd containerd 1.7.24 @/usr/bin/containerd",
             "info containerd config version 2: handlers under "
             "plugins.\"io.containerd.grpc.v1.cri\" (containerd 1.x; 2.x migrates it on load) "
             "@/etc/containerd/config.toml",
             "FAIL containerd runtime handler \"nvidia\": "
             "/usr/local/nvidia/toolkit/nvidia-container-runtime -> /usr/bin/oci-rlimit-runtime -> "
             "/usr/local/nvidia/toolkit/nvidia-container-runtime: loop: nvidia-container-runtime "
             "comes back ([runtime] runtimes "
             "[\"/usr/local/nvidia/toolkit/nvidia-container-runtime\"] in "
             "/etc/oci-rlimit/config.d/50-installer.toml): pods with runtimeClassName nvidia fail "
             "to start @/etc/containerd/config.toml",
             "FAIL containerd runtime handler \"nvidia-cdi\": "
             "/usr/local/nvidia/toolkit/nvidia-container-runtime.cdi -> "
             "/usr/bin/oci-rlimit-runtime -> /usr/local/nvidia/toolkit/nvidia-container-runtime: "
             "loop: nvidia-container-runtime comes back ([runtime] runtimes "
             "[\"/usr/local/nvidia/toolkit/nvidia-container-runtime\"] in "
             "/etc/oci-rlimit/config.d/50-installer.toml): pods with runtimeClassName nvidia-cdi "
             "fail to start @/etc/containerd/config.toml",
             "FAIL containerd runtime handler \"nvidia-legacy\": "
             "/usr/local/nvidia/toolkit/nvidia-container-runtime.legacy -> "
             "/usr/bin/oci-rlimit-runtime -> /usr/local/nvidia/toolkit/nvidia-container-runtime: "
             "loop: nvidia-container-runtime comes back ([runtime] runtimes "
             "[\"/usr/local/nvidia/toolkit/nvidia-container-runtime\"] in "
             "/etc/oci-rlimit/config.d/50-installer.toml): pods with runtimeClassName "
             "nvidia-legacy fail to start @/etc/containerd/config.toml",
             "FAIL containerd runtime handler \"oci-rlimit\": /usr/bin/oci-rlimit-runtime -> "
             "/usr/local/nvidia/toolkit/nvidia-container-runtime -> /usr/bin/oci-rlimit-runtime: "
             "loop: oci-rlimit-runtime comes back (NVIDIA's runtimes [\"oci-rlimit-runtime\", "
             "\"runc\"] in "
             "/usr/local/nvidia/toolkit/.config/nvidia-container-runtime/config.toml): pods with "
             "runtimeClassName oci-rlimit fail to start @/etc/containerd/config.toml",
             "info containerd runtime handler \"runc\": /usr/sbin/runc: pods with runtimeClassName "
             "runc get no oci-rlimit-runtime limits, not NVIDIA's runtime "
             "@/etc/containerd/config.toml",
             "FAIL containerd pods without a runtimeClassName get runtime handler \"nvidia\" "
             "(default_runtime_name), which fails (above) @/etc/containerd/config.toml",
             "info containerd no systemd unit containerd.service in the unit directories"},
            1},
        ScenarioCase{"Containerd2DaemonSetRerunBypassesNvidia",
                     DaemonSetRerunBypassesNvidia,
                     {"containerd"},
                     SkipsNvidiaLines(
                         {"FAIL containerd runtime handler \"oci-rlimit\": "
                          "/usr/bin/oci-rlimit-runtime -> /usr/sbin/runc: the node was installed "
                          "with --nvidia (/var/lib/oci-rlimit/node-install/mode.json), but the "
                          "chain reaches /usr/sbin/runc, not NVIDIA's runtime: pods with "
                          "runtimeClassName oci-rlimit start without their GPUs "
                          "@/etc/containerd/config.toml"},
                         false),
                     1},
        ScenarioCase{"Containerd2WrapperSkipsNvidiaNotMeantToRunIt",
                     InstalledWithoutNvidia,
                     {"containerd"},
                     SkipsNvidiaLines({kSkipsNvidiaWarn}, true),
                     0},
        ScenarioCase{"Containerd2NvidiaModeForCrioOnlyLeavesContainerdAWarn",
                     InstalledWithNvidiaForCrioOnly,
                     {"containerd"},
                     SkipsNvidiaLines({kSkipsNvidiaWarn}, true),
                     0},
        ScenarioCase{"Containerd2NvidiaNamedHandlerBypassesNvidia",
                     NvidiaNamedHandlerSkipsNvidia,
                     {"containerd"},
                     SkipsNvidiaLines(
                         {kSkipsNvidiaWarn,
                          "FAIL containerd runtime handler \"oci-rlimit-nvidia\": "
                          "/usr/bin/oci-rlimit-runtime -> /usr/sbin/runc: its name says NVIDIA, "
                          "but the chain reaches /usr/sbin/runc, not NVIDIA's runtime: pods with "
                          "runtimeClassName oci-rlimit-nvidia start without their GPUs "
                          "@/etc/containerd/config.toml"},
                         true),
                     1},
        ScenarioCase{
            "Containerd2OperatorNodeWithNvidia",
            OperatorNodeWithNvidia,
            {"containerd"},
            {"ok containerd containerd 2.1.9 @/usr/bin/containerd",
             "info containerd config version 3: handlers under "
             "plugins.\"io.containerd.cri.v1.runtime\" (containerd 2.x) "
             "@/etc/containerd/config.toml",
             "info containerd runtime handler \"nvidia\": "
             "/usr/local/nvidia/toolkit/nvidia-container-runtime -> /usr/sbin/runc: pods with "
             "runtimeClassName nvidia get no oci-rlimit-runtime limits and NVIDIA's runtime "
             "@/etc/containerd/config.toml",
             "info containerd runtime handler \"nvidia-cdi\": "
             "/usr/local/nvidia/toolkit/nvidia-container-runtime.cdi -> /usr/sbin/runc: pods with "
             "runtimeClassName nvidia-cdi get no oci-rlimit-runtime limits and NVIDIA's runtime "
             "@/etc/containerd/config.toml",
             "info containerd runtime handler \"nvidia-legacy\": "
             "/usr/local/nvidia/toolkit/nvidia-container-runtime.legacy -> /usr/sbin/runc: pods "
             "with runtimeClassName nvidia-legacy get no oci-rlimit-runtime limits and NVIDIA's "
             "runtime @/etc/containerd/config.toml",
             "ok containerd runtime handler \"oci-rlimit\": /usr/bin/oci-rlimit-runtime -> "
             "/usr/local/nvidia/toolkit/nvidia-container-runtime -> /usr/sbin/runc: pods with "
             "runtimeClassName oci-rlimit get oci-rlimit's limits (by default "
             "memlock=unlimited:unlimited) and NVIDIA's runtime @/etc/containerd/config.toml",
             "info containerd runtime handler \"runc\": /usr/sbin/runc: pods with runtimeClassName "
             "runc get no oci-rlimit-runtime limits, not NVIDIA's runtime "
             "@/etc/containerd/config.toml",
             "ok containerd handler \"oci-rlimit\" passes the pod annotation oci-rlimit.io/rlimits "
             "to the spec @/etc/containerd/config.toml",
             "warn containerd pods without a runtimeClassName get runtime handler \"nvidia\" "
             "(default_runtime_name): no oci-rlimit-runtime limits and NVIDIA's runtime "
             "@/etc/containerd/config.toml",
             "info containerd no systemd unit containerd.service in the unit directories"},
            0},
        ScenarioCase{
            "Containerd17NvidiaCtkDefaultGetsNoLimits",
            NvidiaCtkDefault,
            {"containerd"},
            {"ok containerd containerd 1.7.24 @/usr/bin/containerd",
             "info containerd config version 2: handlers under "
             "plugins.\"io.containerd.grpc.v1.cri\" (containerd 1.x; 2.x migrates it on load) "
             "@/etc/containerd/config.toml",
             "info containerd runtime handler \"nvidia\": /usr/bin/nvidia-container-runtime -> "
             "/usr/sbin/runc: pods with runtimeClassName nvidia get no oci-rlimit-runtime limits "
             "and NVIDIA's runtime @/etc/containerd/config.toml",
             "ok containerd runtime handler \"oci-rlimit\": /usr/bin/oci-rlimit-runtime -> "
             "/usr/bin/nvidia-container-runtime -> /usr/sbin/runc: pods with runtimeClassName "
             "oci-rlimit get oci-rlimit's limits (by default memlock=unlimited:unlimited) and "
             "NVIDIA's runtime @/etc/containerd/config.toml",
             "info containerd runtime handler \"runc\": /usr/sbin/runc: pods with runtimeClassName "
             "runc get no oci-rlimit-runtime limits, not NVIDIA's runtime",
             "warn containerd pods without a runtimeClassName get runtime handler \"nvidia\" "
             "(default_runtime_name): no oci-rlimit-runtime limits and NVIDIA's runtime "
             "@/etc/containerd/config.toml",
             "info containerd no systemd unit containerd.service in the unit directories"},
            0},
        ScenarioCase{
            "Containerd17ShadowedRuncUnderNvidia",
            ShadowedRuncUnderNvidia,
            {"runc", "containerd"},
            {"ok runc runc on PATH is oci-rlimit-runtime (runtime mode) @/usr/local/sbin/runc",
             "ok containerd containerd 1.7.24 @/usr/bin/containerd",
             "info containerd config version 2: handlers under "
             "plugins.\"io.containerd.grpc.v1.cri\" (containerd 1.x; 2.x migrates it on load) "
             "@/etc/containerd/config.toml",
             "FAIL containerd runtime handler \"nvidia\": /usr/bin/nvidia-container-runtime -> "
             "/usr/local/sbin/runc -> /usr/bin/nvidia-container-runtime: loop: "
             "nvidia-container-runtime comes back ([runtime] runtimes "
             "[\"/usr/bin/nvidia-container-runtime\"] in "
             "/etc/oci-rlimit/config.d/50-installer.toml): pods with runtimeClassName nvidia fail "
             "to start @/etc/containerd/config.toml",
             "FAIL containerd runtime handler \"oci-rlimit\": /usr/bin/oci-rlimit-runtime -> "
             "/usr/bin/nvidia-container-runtime -> /usr/local/sbin/runc: loop: oci-rlimit-runtime "
             "comes back (NVIDIA's runtimes [\"docker-runc\", \"runc\", \"crun\"] (its default; "
             "/etc/nvidia-container-runtime/config.toml does not exist)): pods with "
             "runtimeClassName oci-rlimit fail to start @/etc/containerd/config.toml",
             "FAIL containerd runtime handler \"runc\": /usr/local/sbin/runc -> "
             "/usr/bin/nvidia-container-runtime -> /usr/local/sbin/runc: loop: oci-rlimit-runtime "
             "comes back (NVIDIA's runtimes [\"docker-runc\", \"runc\", \"crun\"] (its default; "
             "/etc/nvidia-container-runtime/config.toml does not exist)): pods with "
             "runtimeClassName runc fail to start",
             "FAIL containerd pods without a runtimeClassName get runtime handler \"nvidia\" "
             "(default_runtime_name), which fails (above) @/etc/containerd/config.toml",
             "info containerd no systemd unit containerd.service in the unit directories"},
            1},
        ScenarioCase{
            "Containerd2HandlerBinaryMissing",
            HandlerBinaryMissing,
            {"containerd"},
            {"ok containerd containerd 2.1.9 @/usr/bin/containerd",
             "info containerd config version 3: handlers under "
             "plugins.\"io.containerd.cri.v1.runtime\" (containerd 2.x) "
             "@/etc/containerd/config.toml",
             "FAIL containerd runtime handler \"oci-rlimit\": BinaryName "
             "\"/usr/bin/oci-rlimit-runtime\" does not exist or is not executable: pods with "
             "runtimeClassName oci-rlimit fail to start @/etc/containerd/config.toml",
             "info containerd runtime handler \"runc\": /usr/sbin/runc: pods with runtimeClassName "
             "runc get no oci-rlimit-runtime limits, not NVIDIA's runtime",
             "info containerd no runtime handler runs oci-rlimit-runtime "
             "@/etc/containerd/config.toml",
             "info containerd pods without a runtimeClassName get runtime handler \"runc\" "
             "(containerd's default): no oci-rlimit-runtime limits, not NVIDIA's runtime "
             "@/etc/containerd/config.toml",
             "info containerd no systemd unit containerd.service in the unit directories"},
            1},
        ScenarioCase{"CrioEmptyCrioConfRuntimesResolveToNothing",
                     CrioRuntimesResolveToNothing,
                     {"CRI-O"},
                     {"ok CRI-O crio 1.31.13 @/usr/bin/crio",
                      "info CRI-O runtime handler \"runc\": /usr/sbin/runc: pods with "
                      "runtimeClassName runc get no oci-rlimit-runtime limits, not NVIDIA's "
                      "runtime @/etc/crio/crio.conf.d/10-runc.conf",
                      "FAIL CRI-O runtime handler \"oci-rlimit\": /usr/bin/oci-rlimit-runtime: "
                      "[runtime] runtimes [\"nvidia-container-runtime\"] in "
                      "/etc/oci-rlimit/config.d/50-installer.toml: none resolves on the PATH "
                      "(/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin) to a runtime "
                      "other than oci-rlimit-runtime itself: pods with runtimeClassName oci-rlimit "
                      "fail to start @/etc/crio/crio.conf.d/50-oci-rlimit.conf",
                      "info CRI-O runtime handler \"crun\": /usr/bin/crun: pods with "
                      "runtimeClassName crun get no oci-rlimit-runtime limits, not NVIDIA's "
                      "runtime",
                      "info CRI-O pods without a runtimeClassName get runtime handler \"runc\" "
                      "(default_runtime): no oci-rlimit-runtime limits, not NVIDIA's runtime "
                      "@/etc/crio/crio.conf.d/10-runc.conf",
                      "info CRI-O no systemd unit crio.service in the unit directories"},
                     1},
        ScenarioCase{
            "CrioRestartPendingIsNoOkHandler",
            CrioRestartPending,
            {"CRI-O"},
            {"ok CRI-O crio 1.31.13 @/usr/bin/crio",
             "warn CRI-O restart pending: oci-rlimit's installer changed crio's config "
             "after crio started, and crio runs a new runtime handler only once restarted "
             "(a SIGHUP does not add one) @/var/lib/oci-rlimit/node-install/restart",
             "info CRI-O runtime handler \"runc\": /usr/sbin/runc: pods with "
             "runtimeClassName runc get no oci-rlimit-runtime limits, not NVIDIA's "
             "runtime @/etc/crio/crio.conf.d/10-runc.conf",
             "warn CRI-O runtime handler \"oci-rlimit\": /usr/bin/oci-rlimit-runtime -> "
             "/usr/sbin/runc: crio started before oci-rlimit's installer wrote it, and "
             "knows it only once restarted: pods with runtimeClassName oci-rlimit fail "
             "until then @/etc/crio/crio.conf.d/99-oci-rlimit.conf",
             "info CRI-O runtime handler \"crun\": /usr/bin/crun: pods with "
             "runtimeClassName crun get no oci-rlimit-runtime limits, not NVIDIA's "
             "runtime",
             "info CRI-O pods without a runtimeClassName get runtime handler \"runc\" "
             "(default_runtime): no oci-rlimit-runtime limits, not NVIDIA's runtime "
             "@/etc/crio/crio.conf.d/10-runc.conf",
             "info CRI-O no systemd unit crio.service in the unit directories"},
            0,
            {.engine_starts = [](const std::string&) { return std::vector<int64_t>{500}; }}},
        ScenarioCase{
            "CrioRestartDoneIsOk",
            CrioRestartPending,
            {"CRI-O"},
            {"ok CRI-O crio 1.31.13 @/usr/bin/crio",
             "info CRI-O runtime handler \"runc\": /usr/sbin/runc: pods with "
             "runtimeClassName runc get no oci-rlimit-runtime limits, not NVIDIA's "
             "runtime @/etc/crio/crio.conf.d/10-runc.conf",
             "ok CRI-O runtime handler \"oci-rlimit\": /usr/bin/oci-rlimit-runtime -> "
             "/usr/sbin/runc: pods with runtimeClassName oci-rlimit get oci-rlimit's "
             "limits (by default memlock=unlimited:unlimited), not NVIDIA's runtime "
             "@/etc/crio/crio.conf.d/99-oci-rlimit.conf",
             "info CRI-O runtime handler \"crun\": /usr/bin/crun: pods with "
             "runtimeClassName crun get no oci-rlimit-runtime limits, not NVIDIA's "
             "runtime",
             "info CRI-O pods without a runtimeClassName get runtime handler \"runc\" "
             "(default_runtime): no oci-rlimit-runtime limits, not NVIDIA's runtime "
             "@/etc/crio/crio.conf.d/10-runc.conf",
             "info CRI-O no systemd unit crio.service in the unit directories"},
            0,
            {.engine_starts = [](const std::string&) { return std::vector<int64_t>{1000}; }}},
        ScenarioCase{"CrioMonitorCgroupCrioRefuses",
                     CrioMonitorRefused,
                     {"CRI-O"},
                     {"ok CRI-O crio 1.31.13 @/usr/bin/crio",
                      "FAIL CRI-O CRI-O would not start: [crio.runtime.runtimes.runc] "
                      "monitor_cgroup is unset (CRI-O makes it \"system.slice\") "
                      "(/etc/crio/crio.conf.d/10-runc.conf), and the cgroupfs cgroup manager "
                      "takes only \"pod\"; set monitor_cgroup = \"pod\" for handler runc",
                      "info CRI-O runtime handler \"runc\": /usr/sbin/runc: pods with "
                      "runtimeClassName runc get no oci-rlimit-runtime limits, not NVIDIA's "
                      "runtime @/etc/crio/crio.conf.d/10-runc.conf",
                      "ok CRI-O runtime handler \"oci-rlimit\": /usr/bin/oci-rlimit-runtime -> "
                      "/usr/sbin/runc: pods with runtimeClassName oci-rlimit get oci-rlimit's "
                      "limits (by default memlock=unlimited:unlimited), not NVIDIA's runtime "
                      "@/etc/crio/crio.conf.d/50-oci-rlimit.conf",
                      "info CRI-O runtime handler \"crun\": /usr/bin/crun: pods with "
                      "runtimeClassName crun get no oci-rlimit-runtime limits, not NVIDIA's "
                      "runtime",
                      "info CRI-O pods without a runtimeClassName get runtime handler \"runc\" "
                      "(default_runtime): no oci-rlimit-runtime limits, not NVIDIA's runtime "
                      "@/etc/crio/crio.conf.d/10-runc.conf",
                      "info CRI-O no systemd unit crio.service in the unit directories"},
                     1},
        ScenarioCase{"CrioEmptyCrioConfWithNriConnected",
                     CrioWithNri,
                     {"CRI-O", "nri", "hooks.d"},
                     {"info nri containerd 1.6.20~ds1 has no NRI (1.7 or later)",
                      "ok CRI-O crio 1.31.13 @/usr/bin/crio",
                      "info CRI-O runtime handler \"runc\": /usr/sbin/runc: pods with "
                      "runtimeClassName runc get no oci-rlimit-runtime limits, not NVIDIA's "
                      "runtime @/etc/crio/crio.conf.d/10-runc.conf",
                      "ok CRI-O runtime handler \"oci-rlimit\": /usr/bin/oci-rlimit-runtime -> "
                      "/usr/sbin/runc: pods with runtimeClassName oci-rlimit get oci-rlimit's "
                      "limits (by default memlock=unlimited:unlimited), not NVIDIA's runtime "
                      "@/etc/crio/crio.conf.d/50-oci-rlimit.conf",
                      "info CRI-O runtime handler \"crun\": /usr/bin/crun: pods with "
                      "runtimeClassName crun get no oci-rlimit-runtime limits, not NVIDIA's "
                      "runtime",
                      "info CRI-O pods without a runtimeClassName get runtime handler \"runc\" "
                      "(default_runtime): no oci-rlimit-runtime limits, not NVIDIA's runtime "
                      "@/etc/crio/crio.conf.d/10-runc.conf",
                      "ok nri NRI is enabled in CRI-O, socket /var/run/nri/nri.sock",
                      "ok nri oci-rlimit-nri.service is enabled (external plugin) "
                      "@/etc/systemd/system/multi-user.target.wants/oci-rlimit-nri.service",
                      "ok nri oci-rlimit-nri is running (pid 42) and CRI-O's NRI socket exists "
                      "@/var/run/nri/nri.sock",
                      "info nri oci-rlimit-nri has written no status file: not connected since it "
                      "started, or started with another --status-file @/run/oci-rlimit/nri.status",
                      "info CRI-O no systemd unit crio.service in the unit directories",
                      "info hooks.d CRI-O reads hooks from /usr/share/containers/oci/hooks.d (its "
                      "default: no hooks_dir in crio.conf or crio.conf.d)",
                      "info hooks.d CRI-O runs oci-rlimit-hook (stages createRuntime) only for "
                      "containers annotated oci-rlimit.io/enable=true "
                      "@/usr/share/containers/oci/hooks.d/oci-rlimit.json"},
                     0},
        ScenarioCase{"OnlyADropInNamesTheDropIns",
                     OnlyADropIn,
                     {"config"},
                     {"ok config 1 default limit(s), 0 rule(s), requests disabled (1 drop-in(s) in "
                      "/etc/oci-rlimit/config.d); /etc/oci-rlimit/config.toml does not exist "
                      "@/etc/oci-rlimit/config.d"},
                     0},
        ScenarioCase{
            "ConfigFlagIsUsed",
            ConfigElsewhere,
            {"config"},
            {"ok config 1 default limit(s), 0 rule(s), requests disabled @/srv/rl/config.toml"},
            0,
            {"/srv/rl/config.toml", false}},
        ScenarioCase{"RootWithoutProcSaysNothingOfCapabilities",
                     CopyWithoutProc,
                     {"capabilities"},
                     {},
                     0,
                     {"/etc/oci-rlimit/config.toml", true}}),
    CaseName{});

}  // namespace
}  // namespace ocirlimit
