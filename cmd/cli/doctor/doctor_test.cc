#include "cli/doctor/doctor.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>
#include <sstream>

#include "adapters/engines/hooks_dir.h"
#include "adapters/engines/systemd.h"
#include "tests/testing/case_name.h"
#include "tests/testing/fake_node_files.h"

namespace ocirlimit {
namespace {

// A node as maps of files, symlinks and executables (the shared fake), with
// programs found on PATH by name, their versions, sockets and processes.
class FakeNode : public testing::FakeFilesT<NodeOps> {
 public:
  std::map<std::string, std::string> programs;  // name -> path on PATH
  std::map<std::string, std::string> versions;  // resolved path -> output
  // Sockets by path (after links): the same inode under two paths is one socket.
  std::map<std::string, ino_t> sockets;
  // comm -> processes of that name.
  std::multimap<std::string, RunningProcess> processes;

  std::optional<std::string> Which(const std::string& name) override {
    auto it = programs.find(name);
    if (it == programs.end()) return std::nullopt;
    return it->second;
  }
  Result<std::string> Version(const std::string& path) override {
    auto it = versions.find(Resolve(path).value_or(path));
    if (it == versions.end()) return MakeError("no version");
    return it->second;
  }
  // Executables are the programs' paths and the extra ones in `executables`,
  // by the path asked (links not followed).
  bool IsExe(const std::string& path) override {
    if (executables.count(path) > 0) return true;
    return std::any_of(programs.begin(), programs.end(),
                       [&](const auto& kv) { return kv.second == path; });
  }
  std::optional<FileId> Socket(const std::string& path) override {
    for (const auto& [where, ino] : sockets) {
      if (Real(where) == Real(path)) return FileId{1, ino, S_IFSOCK | 0755};
    }
    return std::nullopt;
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
};

// Never on a temporary report: the Check would dangle (ASan found one).
const Check* Find(DoctorReport&& r, const std::string& area, const std::string& what) = delete;
const Check* Find(const DoctorReport& r, const std::string& area, const std::string& what) {
  for (const auto& c : r.checks) {
    if (c.area == area && c.what.find(what) != std::string::npos) return &c;
  }
  return nullptr;
}

std::string All(const DoctorReport& r) { return DoctorText(r); }

// A hooks.d file that runs oci-rlimit-hook, as the package ships it.
constexpr const char* kOurHooksFile =
    R"({"version":"1.0.0","hook":{"path":"/usr/bin/oci-rlimit-hook","args":["oci-rlimit-hook","createRuntime"]},"when":{"always":true},"stages":["createRuntime"]})";

FakeNode GoodNode() {
  FakeNode n;
  n.programs = {{"runc", "/usr/sbin/runc"},
                {"crun", "/usr/bin/crun"},
                {"dockerd", "/usr/sbin/dockerd"},
                {"containerd", "/usr/bin/containerd"},
                {"podman", "/usr/bin/podman"},
                {"oci-rlimit-hook", "/usr/bin/oci-rlimit-hook"},
                {"oci-rlimit-runtime", "/usr/bin/oci-rlimit-runtime"},
                {"nvidia-container-runtime-hook", "/usr/local/bin/nvidia-container-runtime-hook"}};
  n.links = {{"/usr/local/bin/nvidia-container-runtime-hook", "/usr/bin/oci-rlimit-hook"}};
  n.versions = {{"/usr/sbin/runc", "runc version 1.1.5\ncommit: v1.1.5\n"},
                {"/usr/bin/crun", "crun version 1.8.1\ncommit: x\n"},
                {"/usr/sbin/dockerd", "Docker version 20.10.24+dfsg1, build 5d6db84\n"},
                {"/usr/bin/containerd",
                 "containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+b1\n"}};
  n.files["/etc/oci-rlimit/config.toml"] =
      "[[rule]]\nname='gpu'\nrlimits=['memlock=unlimited']\nmatch={env=['NVIDIA_VISIBLE_DEVICES']}"
      "\n"
      "[requests]\nenabled=true\nceilings=['memlock=64G']\n";
  n.files["/etc/docker/daemon.json"] =
      R"({"runtimes":{"oci-rlimit":{"path":"/usr/bin/oci-rlimit-runtime"}}})";
  n.files["/etc/containerd/config.toml"] = R"(version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit]
runtime_type = "io.containerd.runc.v2"
pod_annotations = ["oci-rlimit.io/*"]
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit.options]
BinaryName = "/usr/bin/oci-rlimit-runtime"
)";
  n.files["/usr/share/containers/oci/hooks.d/oci-rlimit.json"] = kOurHooksFile;
  n.files["/lib/systemd/system/containerd.service"] = "[Service]\nLimitNOFILE=1048576\n";
  n.files["/etc/systemd/system/containerd.service.d/memlock.conf"] = "[Service]\nLimitMEMLOCK=8M\n";
  n.files["/lib/systemd/system/docker.service"] = "[Service]\nLimitMEMLOCK=infinity\n";
  n.files["/proc/self/status"] = "Name:\tx\nCapEff:\t000001ffffffffff\n";
  n.executables = {"/usr/bin/nvidia-container-runtime-hook"};
  return n;
}

TEST(Doctor, ReportsAHealthyNode) {
  FakeNode n = GoodNode();
  DoctorReport r = RunDoctor(n);
  EXPECT_TRUE(r.ok()) << All(r);
  const Check* runc = Find(r, "runc", "runc 1.1.5: applies the spec's process.rlimits after hooks");
  ASSERT_NE(runc, nullptr) << All(r);
  EXPECT_EQ(runc->path, "/usr/sbin/runc");
  ASSERT_NE(Find(r, "crun", "crun 1.8.1: applies the spec's process.rlimits before hooks"), nullptr)
      << All(r);
  ASSERT_NE(Find(r, "docker", "dockerd 20.10.24"), nullptr) << All(r);
  ASSERT_NE(
      Find(r, "docker",
           "daemon.json runtime \"oci-rlimit\": /usr/bin/oci-rlimit-runtime -> "
           "/usr/sbin/runc: containers run with --runtime oci-rlimit get oci-rlimit's limits"),
      nullptr)
      << All(r);
  const Check* gpus = Find(r, "docker", "nvidia-container-runtime-hook is oci-rlimit-hook");
  ASSERT_NE(gpus, nullptr) << All(r);
  EXPECT_EQ(gpus->path, "/usr/local/bin/nvidia-container-runtime-hook");
  ASSERT_NE(Find(r, "containerd", "containerd 1.6.20"), nullptr) << All(r);
  const Check* handler = Find(r, "containerd",
                              "runtime handler \"oci-rlimit\": /usr/bin/oci-rlimit-runtime -> "
                              "/usr/sbin/runc: pods with runtimeClassName oci-rlimit get "
                              "oci-rlimit's limits (none by default; 1 rule(s) may add; requests "
                              "up to the ceilings), not NVIDIA's runtime");
  ASSERT_NE(handler, nullptr) << All(r);
  EXPECT_EQ(handler->status, CheckStatus::kOk);
  ASSERT_NE(Find(r, "containerd", "passes the pod annotation oci-rlimit.io/rlimits"), nullptr)
      << All(r);
  ASSERT_NE(Find(r, "containerd", "LimitMEMLOCK=8M"), nullptr) << All(r);
  const Check* docker_unit = Find(r, "docker", "LimitMEMLOCK=infinity");
  ASSERT_NE(docker_unit, nullptr) << All(r);
  EXPECT_EQ(docker_unit->status, CheckStatus::kWarn);
  const Check* hooks = Find(r, "hooks.d", "podman runs oci-rlimit-hook (stages createRuntime)");
  ASSERT_NE(hooks, nullptr) << All(r);
  EXPECT_EQ(hooks->path, "/usr/share/containers/oci/hooks.d/oci-rlimit.json");
  ASSERT_NE(Find(r, "config", "0 default limit(s), 1 rule(s), requests enabled"), nullptr)
      << All(r);
  EXPECT_EQ(Find(r, "capabilities", "CAP_SYS_RESOURCE is effective")->status, CheckStatus::kOk);
}

TEST(Doctor, FailsOnABrokenConfigAndNoRuntime) {
  FakeNode n;
  n.files["/etc/oci-rlimit/config.toml"] = "rlimits = ['memlok=1']\n";
  n.files["/proc/self/status"] = "CapEff:\t000001fffeffffff\n";
  DoctorReport r = RunDoctor(n);
  EXPECT_FALSE(r.ok());
  const Check* cfg = Find(r, "config", "unknown name \"memlok\"");
  ASSERT_NE(cfg, nullptr) << All(r);
  EXPECT_EQ(cfg->status, CheckStatus::kFail);
  ASSERT_NE(Find(r, "runtime", "neither runc nor crun"), nullptr) << All(r);
  EXPECT_EQ(Find(r, "capabilities", "no CAP_SYS_RESOURCE")->status, CheckStatus::kWarn);
  EXPECT_NE(DoctorText(r).find("doctor: FAILED"), std::string::npos);
  EXPECT_EQ(DoctorJson(r)["ok"], false);
}

// Issue 39 finding 8: on-error = "warn" with the "spec" source is named,
// with what it means under runc; "fail", or no "spec", says nothing.
TEST(Doctor, WarnWithTheSpecSourceSaysTheHookKeepsAnEntryOverItsCeiling) {
  const std::string requests = "[requests]\nenabled = true\nceilings = ['memlock=1G']\nsources = ";
  const std::string said = "on-error = \"warn\" with \"spec\" in requests.sources";
  for (const auto& [config, named] : std::vector<std::pair<std::string, bool>>{
           {"on-error = 'warn'\n" + requests + "['oci-rlimit', 'spec']\n", true},
           {"on-error = 'fail'\n" + requests + "['oci-rlimit', 'spec']\n", false},
           {"on-error = 'warn'\n" + requests + "['oci-rlimit']\n", false},
           {"on-error = 'warn'\n[requests]\nenabled = false\nsources = ['spec']\n", false}}) {
    FakeNode n;
    n.files["/etc/oci-rlimit/config.toml"] = config;
    DoctorReport r = RunDoctor(n);
    const Check* c = Find(r, "config", said);
    EXPECT_EQ(c != nullptr, named) << config << All(r);
    if (c == nullptr) continue;
    EXPECT_EQ(c->status, CheckStatus::kWarn);
    EXPECT_NE(c->what.find("the container keeps that entry"), std::string::npos) << c->what;
    EXPECT_EQ(c->path, "/etc/oci-rlimit/config.toml");
  }
}

// Without the capability, a configured hard raise above the limits in force
// is named with the one unraisable message (core/unraisable.h).
TEST(Doctor, TheCapabilityWarningNamesAConfiguredUnraisableEntry) {
  FakeNode n;
  n.files["/etc/oci-rlimit/config.toml"] = "rlimits = ['memlock=unlimited']\n";
  n.files["/proc/self/status"] = "CapEff:\t000001fffeffffff\n";
  n.files["/proc/self/limits"] =
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max cpu time              unlimited            unlimited            seconds   \n"
      "Max file size             unlimited            unlimited            bytes     \n"
      "Max data size             unlimited            unlimited            bytes     \n"
      "Max stack size            8388608              unlimited            bytes     \n"
      "Max core file size        0                    unlimited            bytes     \n"
      "Max resident set          unlimited            unlimited            bytes     \n"
      "Max processes             127318               127318               processes \n"
      "Max open files            1024                 524288               files     \n"
      "Max locked memory         8388608              8388608              bytes     \n"
      "Max address space         unlimited            unlimited            bytes     \n"
      "Max file locks            unlimited            unlimited            locks     \n"
      "Max pending signals       127318               127318               signals   \n"
      "Max msgqueue size         819200               819200               bytes     \n"
      "Max nice priority         0                    0                    \n"
      "Max realtime priority     0                    0                    \n"
      "Max realtime timeout      unlimited            unlimited            us        \n";
  DoctorReport r = RunDoctor(n);
  const Check* cap = Find(r, "capabilities", "no CAP_SYS_RESOURCE");
  ASSERT_NE(cap, nullptr) << All(r);
  EXPECT_EQ(cap->status, CheckStatus::kWarn);
  EXPECT_NE(cap->what.find("; config entry memlock=unlimited: the hard limit in force is 8M, and "
                           "raising it needs CAP_SYS_RESOURCE, which this context does not "
                           "have; memlock=8M would work"),
            std::string::npos)
      << cap->what;
  EXPECT_EQ(cap->advice.rfind("change that entry, or run the container daemons", 0), 0u)
      << cap->advice;
  n.files["/etc/oci-rlimit/config.toml"] = "rlimits = ['memlock=4M']\n";
  const DoctorReport raisable = RunDoctor(n);  // kept: cap points into it
  cap = Find(raisable, "capabilities", "no CAP_SYS_RESOURCE");
  ASSERT_NE(cap, nullptr);
  EXPECT_EQ(cap->what.find("config entry"), std::string::npos) << "a raisable value: " << cap->what;
}

// Advice is read on a node: it names files the .deb installs, never a
// source-tree path such as packaging/... or docs/....
TEST(Doctor, AdviceNamesInstalledPathsOnly) {
  FakeNode bare;  // podman present, nothing configured: every "how to" advice
  bare.programs = {{"podman", "/usr/bin/podman"},
                   {"dockerd", "/usr/sbin/dockerd"},
                   {"containerd", "/usr/bin/containerd"}};
  FakeNode nvidia = GoodNode();
  nvidia.links.clear();  // NVIDIA's own hook on PATH
  const std::vector<std::string> installed = {
      kPackagedHooksFile, std::string(std::string(engines::kStockHooksDir)) + "/",
      std::string(kDocDir) + "/policy.md", std::string(kDocDir) + "/deployment.md",
      std::string(kDocDir) + "/nri.md"};
  size_t advised = 0;
  for (FakeNode* n : {&bare, &nvidia}) {
    DoctorReport r = RunDoctor(*n);
    for (const auto& c : r.checks) {
      EXPECT_EQ(c.advice.find("packaging/"), std::string::npos) << c.advice;
      EXPECT_EQ(c.advice.find("(docs/"), std::string::npos) << c.advice;
      for (size_t at = c.advice.find("/usr/share/"); at != std::string::npos;
           at = c.advice.find("/usr/share/", at + 1)) {
        const std::string path = c.advice.substr(at, c.advice.find_first_of(" )", at) - at);
        EXPECT_NE(std::find(installed.begin(), installed.end(), path), installed.end())
            << path << " in: " << c.advice;
        ++advised;
      }
    }
  }
  EXPECT_GE(advised, 4u) << "the hooks.d, config, containerd and docker advice name files";
  const DoctorReport bare_report = RunDoctor(bare);
  const Check* hooks = Find(bare_report, "hooks.d", "no oci-rlimit hook");
  ASSERT_NE(hooks, nullptr);
  EXPECT_EQ(hooks->advice,
            "install -m 644 /usr/share/oci-rlimit/hooks.d/oci-rlimit.json "
            "/usr/share/containers/oci/hooks.d/ for podman (the oci-rlimit package puts it in "
            "the stock dir)");
}

// docs/doctor.md: statuses are ok, info, warn and FAIL, the same in --json.
TEST(Doctor, JsonStatusesAreTheDocumentedOnes) {
  FakeNode n;
  n.files["/etc/oci-rlimit/config.toml"] = "rlimits = ['memlok=1']\n";
  n.programs = {{"runc", "/usr/sbin/runc"}};
  n.files["/proc/self/status"] = "CapEff:\t000001fffeffffff\n";
  DoctorReport r = RunDoctor(n);
  Json j = DoctorJson(r);
  std::set<std::string> seen;
  for (size_t i = 0; i < r.checks.size(); ++i) {
    const std::string status = j["checks"][i]["status"];
    EXPECT_EQ(status, StatusName(r.checks[i].status));
    seen.insert(status);
  }
  EXPECT_EQ(seen, (std::set<std::string>{"ok", "info", "warn", "FAIL"}));
  EXPECT_EQ(StatusName(CheckStatus::kFail), std::string("FAIL"));
}

TEST(Doctor, WarnsWhenRequestsCannotReachTheSpec) {
  FakeNode n = GoodNode();
  n.files["/etc/containerd/config.toml"] = R"(version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit]
runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit.options]
BinaryName = "/usr/bin/oci-rlimit-runtime"
)";
  DoctorReport r = RunDoctor(n);
  const Check* c = Find(r, "containerd", "does not pass the pod annotation");
  ASSERT_NE(c, nullptr) << All(r);
  EXPECT_EQ(c->status, CheckStatus::kWarn);
  EXPECT_NE(c->advice.find("pod_annotations"), std::string::npos);
}

// Each annotation source of [requests] sources needs its own key passed; the
// spec source needs none (docs/policy.md, "Request sources").
TEST(Doctor, WarnsPerRequestSourceAnnotation) {
  FakeNode n = GoodNode();
  n.files["/etc/oci-rlimit/config.toml"] =
      "[requests]\nenabled=true\nceilings=['memlock=64G']\nsources=['spec', 'ulimit-adjuster']\n";
  n.files["/etc/containerd/config.toml"] = R"(version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit]
runtime_type = "io.containerd.runc.v2"
pod_annotations = ["oci-rlimit.io/*"]
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit.options]
BinaryName = "/usr/bin/oci-rlimit-runtime"
)";
  DoctorReport r = RunDoctor(n);
  const Check* c = Find(r, "containerd",
                        "does not pass the pod annotation ulimits.noderesource.dev/container.NAME");
  ASSERT_NE(c, nullptr) << All(r);
  EXPECT_EQ(c->status, CheckStatus::kWarn);
  EXPECT_NE(c->advice.find("ulimits.noderesource.dev/*"), std::string::npos) << c->advice;
  EXPECT_EQ(Find(r, "containerd", "pod annotation oci-rlimit.io/rlimits"), nullptr)
      << "oci-rlimit is not a source here\n"
      << All(r);
}

TEST(Doctor, NvidiaHookThatIsNotOurs) {
  FakeNode n = GoodNode();
  n.links.clear();
  DoctorReport r = RunDoctor(n);
  ASSERT_NE(Find(r, "docker", "nvidia-container-runtime-hook is NVIDIA's, not ours"), nullptr)
      << All(r);
}

TEST(Doctor, BrokenDaemonJsonAndContainerdConfigFail) {
  FakeNode n = GoodNode();
  n.files["/etc/docker/daemon.json"] = "{";
  n.files["/etc/containerd/config.toml"] = "version = \n";
  DoctorReport r = RunDoctor(n);
  EXPECT_FALSE(r.ok());
  const Check* docker = Find(r, "docker", "not valid JSON");
  ASSERT_NE(docker, nullptr) << All(r);
  EXPECT_EQ(docker->status, CheckStatus::kFail);
  const Check* containerd = Find(r, "containerd", "/etc/containerd/config.toml: line 1");
  ASSERT_NE(containerd, nullptr) << All(r);
  EXPECT_EQ(containerd->status, CheckStatus::kFail);
}

const char* const kV3WithV2Handler = R"(version = 3
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit]
runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit.options]
BinaryName = "/usr/bin/oci-rlimit-runtime"
)";
const char* const kV2WithV3Handler = R"(version = 2
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.oci-rlimit]
runtime_type = "io.containerd.runc.v2"
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.oci-rlimit.options]
BinaryName = "/usr/bin/oci-rlimit-runtime"
)";

TEST(Doctor, HandlerInTheWrongSectionFails) {
  for (const char* text : {kV3WithV2Handler, kV2WithV3Handler}) {
    FakeNode n = GoodNode();
    n.files["/etc/containerd/config.toml"] = text;
    n.versions["/usr/bin/containerd"] = "containerd github.com/containerd/containerd/v2 2.1.9\n";
    DoctorReport r = RunDoctor(n);
    EXPECT_FALSE(r.ok()) << All(r);
    const Check* c = Find(r, "containerd", "config does not read: containerd ignores it");
    ASSERT_NE(c, nullptr) << All(r);
    EXPECT_EQ(c->status, CheckStatus::kFail);
    EXPECT_NE(c->advice.find("move it under plugins."), std::string::npos) << c->advice;
  }
}

// issue 30: a version 3 config on a containerd 1.7 node does not start.
TEST(Doctor, FailsAVersion3ConfigOnContainerd17) {
  FakeNode n = GoodNode();
  n.versions["/usr/bin/containerd"] = "containerd github.com/containerd/containerd 1.7.24 abc\n";
  n.files["/etc/containerd/config.toml"] = kV3WithV2Handler;
  DoctorReport r = RunDoctor(n);
  EXPECT_FALSE(r.ok()) << All(r);
  const Check* c = Find(r, "containerd", "containerd 1.x reads versions 1 and 2 only");
  ASSERT_NE(c, nullptr) << All(r);
  EXPECT_EQ(c->status, CheckStatus::kFail);
}

// issue 29: NVIDIA's v1.20 drop-in defines the CRI table; containerd 1.7
// replaces config.toml's with it whole, so the handler there is gone.
constexpr const char* kMainWithHandlerAndImports = R"(version = 2
imports = ["/etc/containerd/conf.d/*.toml"]
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit]
runtime_type = "io.containerd.runc.v2"
pod_annotations = ["oci-rlimit.io/*"]
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.oci-rlimit.options]
BinaryName = "/usr/bin/oci-rlimit-runtime"
)";
constexpr const char* kNvidiaDropin = R"(version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
BinaryName = "/usr/bin/runc"
)";

TEST(Doctor, FailsAHandlerContainerd17HidesBehindNvidiasDropin) {
  FakeNode n = GoodNode();
  n.versions["/usr/bin/containerd"] = "containerd github.com/containerd/containerd 1.7.24 abc\n";
  n.files["/etc/containerd/config.toml"] = kMainWithHandlerAndImports;
  n.files["/etc/containerd/conf.d/99-nvidia.toml"] = kNvidiaDropin;
  DoctorReport r = RunDoctor(n);
  EXPECT_FALSE(r.ok()) << All(r);
  const Check* c = Find(r, "containerd", "runtime handler \"oci-rlimit\" is hidden");
  ASSERT_NE(c, nullptr) << All(r);
  EXPECT_EQ(c->status, CheckStatus::kFail);
  EXPECT_NE(c->what.find("/etc/containerd/conf.d/99-nvidia.toml"), std::string::npos) << c->what;
  EXPECT_EQ(c->path, "/etc/containerd/config.toml");
  // containerd 2.x merges it key by key: the same files are fine.
  n.versions["/usr/bin/containerd"] = "containerd github.com/containerd/containerd/v2 2.1.9\n";
  DoctorReport two = RunDoctor(n);
  EXPECT_EQ(Find(two, "containerd", "is hidden"), nullptr) << All(two);
  EXPECT_NE(Find(two, "containerd", "runtime handler \"oci-rlimit\""), nullptr) << All(two);
}

// issue 38: an upgraded node. config.toml still version 2; NVIDIA's version 3
// drop-in copies the whole CRI table. containerd 2.x reads the copy only (its
// real `config dump`): oci-rlimit and runc are served from there, not FAILed;
// a handler only config.toml defines is ignored and still FAILs.
constexpr const char* kNvidiaDropinV3 = R"(version = 3
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
runtime_type = 'io.containerd.runc.v2'
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.oci-rlimit]
runtime_type = 'io.containerd.runc.v2'
pod_annotations = ['oci-rlimit.io/*']
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.oci-rlimit.options]
BinaryName = '/usr/bin/oci-rlimit-runtime'
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia]
runtime_type = 'io.containerd.runc.v2'
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia.options]
BinaryName = '/usr/sbin/runc'
)";

TEST(Doctor, UpgradedNodeServesTheHandlersFromTheVersion3Dropin) {
  FakeNode n = GoodNode();
  n.versions["/usr/bin/containerd"] = "containerd github.com/containerd/containerd/v2 2.1.9\n";
  n.files["/etc/containerd/config.toml"] =
      std::string(kMainWithHandlerAndImports) +
      "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
      "runtime_type = \"io.containerd.runc.v2\"\n";
  n.files["/etc/containerd/conf.d/99-nvidia.toml"] = kNvidiaDropinV3;
  DoctorReport r = RunDoctor(n);
  EXPECT_TRUE(r.ok()) << All(r);
  for (const char* h : {"\"oci-rlimit\"", "\"runc\""}) {
    const Check* c = Find(r, "containerd", std::string("runtime handler ") + h + " under plugins.");
    ASSERT_NE(c, nullptr) << h << All(r);
    EXPECT_EQ(c->status, CheckStatus::kInfo) << All(r);
    EXPECT_NE(c->what.find("from /etc/containerd/conf.d/99-nvidia.toml"), std::string::npos)
        << c->what;
  }
  // a handler only config.toml defines: containerd 2.x drops it
  n.files["/etc/containerd/config.toml"] +=
      "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.only-main]\n"
      "runtime_type = \"io.containerd.runc.v2\"\n";
  DoctorReport only = RunDoctor(n);
  EXPECT_FALSE(only.ok()) << All(only);
  const Check* c = Find(only, "containerd", "config does not read: containerd ignores it");
  ASSERT_NE(c, nullptr) << All(only);
  EXPECT_NE(c->what.find("\"only-main\""), std::string::npos) << c->what;
}

// issue 38: containerd 1.7 behind NVIDIA's drop-in: the installer refuses to
// write a hidden handler, so doctor's fix is the real one, not "rerun".
TEST(Doctor, InstalledHandlerHiddenOnContainerd17NamesTheRealFix) {
  FakeNode n = GoodNode();
  n.versions["/usr/bin/containerd"] = "containerd github.com/containerd/containerd 1.7.24 abc\n";
  n.files["/var/lib/oci-rlimit/node-install/mode.json"] =
      R"({"prefix":"/usr","runtimes":["containerd"],"nvidia":false})";
  n.files["/etc/containerd/config.toml"] = kMainWithHandlerAndImports;
  n.files["/etc/containerd/conf.d/99-nvidia.toml"] = kNvidiaDropin;
  DoctorReport r = RunDoctor(n);
  const Check* c = Find(r, "containerd", "oci-rlimit node install set up runtime handler");
  ASSERT_NE(c, nullptr) << All(r);
  EXPECT_EQ(c->advice.find("rerun"), std::string::npos) << c->advice;
  EXPECT_NE(c->advice.find("define the handler in /etc/containerd/conf.d/99-nvidia.toml"),
            std::string::npos)
      << c->advice;
  // containerd.toml alone: rerunning the installer is the fix
  n.files.erase("/etc/containerd/conf.d/99-nvidia.toml");
  n.files["/etc/containerd/config.toml"] = "version = 2\n";
  DoctorReport plain = RunDoctor(n);
  const Check* p = Find(plain, "containerd", "oci-rlimit node install set up runtime handler");
  ASSERT_NE(p, nullptr) << All(plain);
  EXPECT_NE(p->advice.find("rerun oci-rlimit node install"), std::string::npos) << p->advice;
}

// The installer's record says a handler was set up; containerd reads none.
TEST(Doctor, FailsAnInstalledHandlerContainerdDoesNotRead) {
  FakeNode n = GoodNode();
  n.files["/var/lib/oci-rlimit/node-install/mode.json"] =
      R"({"prefix":"/usr","runtimes":["containerd"],"nvidia":false})";
  n.files["/etc/containerd/config.toml"] = "version = 2\n";
  DoctorReport r = RunDoctor(n);
  const Check* c = Find(r, "containerd", "but containerd 1.x reads none");
  ASSERT_NE(c, nullptr) << All(r);
  EXPECT_EQ(c->status, CheckStatus::kFail);
}

// A handler whose BinaryName is gone FAILs, naming the file that wins.
TEST(Doctor, FailsAHandlerWhoseProgramIsGoneNamingTheWinningFile) {
  FakeNode n = GoodNode();
  n.versions["/usr/bin/containerd"] = "containerd github.com/containerd/containerd/v2 2.1.9\n";
  n.files["/etc/containerd/config.toml"] = kMainWithHandlerAndImports;
  n.files["/etc/containerd/conf.d/99-nvidia.toml"] =
      std::string(kNvidiaDropin) +
      "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.oci-rlimit.options]\n"
      "BinaryName = \"/gone/oci-rlimit-runtime\"\n";
  DoctorReport r = RunDoctor(n);
  EXPECT_FALSE(r.ok()) << All(r);
  const Check* c = Find(r, "containerd", "runtime handler \"oci-rlimit\"");
  ASSERT_NE(c, nullptr) << All(r);
  EXPECT_EQ(c->status, CheckStatus::kFail) << All(r);
  EXPECT_EQ(c->path, "/etc/containerd/conf.d/99-nvidia.toml") << All(r);
}

TEST(Doctor, ReportsAVersion3Config) {
  FakeNode n = GoodNode();
  n.versions["/usr/bin/containerd"] = "containerd github.com/containerd/containerd/v2 2.1.9\n";
  n.files["/etc/containerd/config.toml"] = R"(version = 3
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.oci-rlimit]
runtime_type = 'io.containerd.runc.v2'
pod_annotations = ['oci-rlimit.io/*']
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.oci-rlimit.options]
BinaryName = '/usr/bin/oci-rlimit-runtime'
)";
  DoctorReport r = RunDoctor(n);
  EXPECT_TRUE(r.ok()) << All(r);
  ASSERT_NE(Find(r, "containerd", "containerd 2.1.9"), nullptr) << All(r);
  ASSERT_NE(Find(r, "containerd", "config version 3: handlers under"), nullptr) << All(r);
  const Check* handler = Find(r, "containerd",
                              "runtime handler \"oci-rlimit\": /usr/bin/oci-rlimit-runtime -> "
                              "/usr/sbin/runc: pods with runtimeClassName oci-rlimit get "
                              "oci-rlimit's limits (none by default; 1 rule(s) may add; requests "
                              "up to the ceilings), not NVIDIA's runtime");
  ASSERT_NE(handler, nullptr) << All(r);
  EXPECT_EQ(handler->status, CheckStatus::kOk);
  ASSERT_NE(Find(r, "containerd", "passes the pod annotation"), nullptr) << All(r);
}

// The installer's drop-in names NVIDIA's runtime: FAIL while it is missing
// (naming the drop-in, not config.toml, as the source), never ok as well.
TEST(Doctor, UnresolvableRuntimesFail) {
  FakeNode n = GoodNode();
  n.files["/etc/oci-rlimit/config.d/50-installer.toml"] =
      "[runtime]\nruntimes = [\"/usr/bin/nvidia-container-runtime\"]\n";
  DoctorReport r = RunDoctor(n);
  EXPECT_FALSE(r.ok());
  const Check* c = Find(r, "containerd",
                        "runtime handler \"oci-rlimit\": /usr/bin/oci-rlimit-runtime: [runtime] "
                        "runtimes [\"/usr/bin/nvidia-container-runtime\"] in "
                        "/etc/oci-rlimit/config.d/50-installer.toml: none resolves on the PATH");
  ASSERT_NE(c, nullptr) << All(r);
  EXPECT_EQ(c->status, CheckStatus::kFail);
  for (const auto& check : r.checks) {
    EXPECT_FALSE(check.status == CheckStatus::kOk &&
                 check.what.starts_with("runtime handler \"oci-rlimit\""))
        << check.what;
  }
  ASSERT_NE(Find(r, "config", "(1 drop-in(s) in /etc/oci-rlimit/config.d)"), nullptr) << All(r);
  n.executables.insert("/usr/bin/nvidia-container-runtime");
  r = RunDoctor(n);
  EXPECT_TRUE(r.ok()) << All(r);
  c = Find(r, "containerd",
           "runtime handler \"oci-rlimit\": /usr/bin/oci-rlimit-runtime -> "
           "/usr/bin/nvidia-container-runtime -> /usr/sbin/runc: pods with runtimeClassName "
           "oci-rlimit get oci-rlimit's limits");
  ASSERT_NE(c, nullptr) << All(r);
  EXPECT_EQ(c->status, CheckStatus::kOk);
  EXPECT_TRUE(c->what.ends_with("and NVIDIA's runtime")) << c->what;
}

// Issue 39 finding 9: the `nvidia-runtime` CDI injector is believed only
// where the node backs it: NVIDIA's runtime in a handler's chain, reading a
// config that accepts the variable in unprivileged containers.
TEST(Doctor, TheNvidiaRuntimeInjectorIsCheckedAgainstTheNode) {
  const std::string said = "[cdi] injectors lists \"nvidia-runtime\", which this node cannot back";
  FakeNode n = GoodNode();
  n.files["/etc/oci-rlimit/config.toml"] = "[cdi]\ninjectors = ['nvidia-runtime']\n";
  DoctorReport r = RunDoctor(n);
  const Check* c = Find(r, "config", said);
  ASSERT_NE(c, nullptr) << All(r);
  EXPECT_EQ(c->status, CheckStatus::kWarn);
  EXPECT_NE(c->what.find("NVIDIA's runtime runs in no handler's chain"), std::string::npos);
  // NVIDIA in the oci-rlimit handler's chain, with the toolkit's defaults.
  n.files["/etc/oci-rlimit/config.d/50-installer.toml"] =
      "[runtime]\nruntimes = [\"/usr/bin/nvidia-container-runtime\"]\n";
  n.executables.insert("/usr/bin/nvidia-container-runtime");
  r = RunDoctor(n);
  EXPECT_EQ(Find(r, "config", said), nullptr) << All(r);
  // Its config ignores the variable for unprivileged containers.
  n.files["/etc/nvidia-container-runtime/config.toml"] =
      "accept-nvidia-visible-devices-envvar-when-unprivileged = false\n";
  r = RunDoctor(n);
  c = Find(r, "config", said);
  ASSERT_NE(c, nullptr) << All(r);
  EXPECT_NE(c->what.find("/etc/nvidia-container-runtime/config.toml sets "
                         "accept-nvidia-visible-devices-envvar-when-unprivileged = false"),
            std::string::npos)
      << c->what;
  // Not listed: nothing said.
  n.files["/etc/oci-rlimit/config.toml"] = "[cdi]\ninjectors = ['nvidia-nri']\n";
  r = RunDoctor(n);
  EXPECT_EQ(Find(r, "config", "[cdi] injectors"), nullptr) << All(r);
}

TEST(Doctor, GpusPathUsesDockerdsPathAndChecksTheChainTarget) {
  FakeNode n = GoodNode();
  // The hook only on dockerd's own PATH, from a drop-in.
  n.programs.erase("nvidia-container-runtime-hook");
  n.links = {{"/opt/nv/nvidia-container-runtime-hook", "/usr/bin/oci-rlimit-hook"}};
  n.executables = {"/opt/nv/nvidia-container-runtime-hook"};
  n.files["/etc/systemd/system/docker.service.d/path.conf"] =
      "[Service]\nEnvironment=\"PATH=/opt/nv:/usr/bin\" FOO=1\n";
  DoctorReport r = RunDoctor(n);
  const Check* gpus = Find(r, "docker", "nvidia-container-runtime-hook is oci-rlimit-hook");
  ASSERT_NE(gpus, nullptr) << All(r);
  EXPECT_EQ(gpus->path, "/opt/nv/nvidia-container-runtime-hook");
  const Check* chain = Find(r, "docker", "the default chain target");
  ASSERT_NE(chain, nullptr) << All(r);
  EXPECT_EQ(chain->status, CheckStatus::kFail) << All(r);
  EXPECT_FALSE(r.ok());
  n.executables.insert("/usr/bin/nvidia-container-runtime-hook");
  r = RunDoctor(n);
  EXPECT_EQ(Find(r, "docker", "the default chain target")->status, CheckStatus::kOk) << All(r);
}

// docker --gpus chain mode with no config file: the drop-in's environment
// gives the hook its limits, so "apply nothing" would be wrong.
TEST(Doctor, NoConfigButDockersEnvironmentGivesTheChainItsLimits) {
  FakeNode n;
  n.files["/proc/self/status"] = "CapEff:\t000001ffffffffff\n";
  const DoctorReport bare = RunDoctor(n);
  const Check* cfg = Find(bare, "config", "no config: the hook and the wrapper apply");
  ASSERT_NE(cfg, nullptr) << "without the drop-in";
  n.files["/etc/systemd/system/docker.service.d/oci-rlimit.conf"] =
      "[Service]\nEnvironment=PATH=/usr/lib/oci-rlimit/shim:/usr/bin\n"
      "Environment=NVIDIA_CONTAINER_RUNTIME_RLIMITS=memlock=unlimited\n";
  DoctorReport r = RunDoctor(n);
  EXPECT_EQ(Find(r, "config", "the hook and the wrapper apply nothing"), nullptr) << All(r);
  cfg = Find(r, "config",
             "no config file: docker.service's NVIDIA_CONTAINER_RUNTIME_RLIMITS=memlock=unlimited "
             "gives the hook its limits (docker --gpus chain mode); other paths apply nothing");
  ASSERT_NE(cfg, nullptr) << All(r);
  EXPECT_EQ(cfg->status, CheckStatus::kInfo);
  EXPECT_EQ(cfg->path, "/etc/systemd/system/docker.service.d/oci-rlimit.conf");
}

// doctor finds the config as every program does: --config, else
// $OCI_RLIMIT_CONFIG, else the default; a named file that is missing fails.
TEST(Doctor, FindsTheConfigAsEveryProgramDoes) {
  const EnvLookup env = [](std::string_view name) -> std::optional<std::string> {
    if (name == "OCI_RLIMIT_CONFIG") return "/etc/env.toml";
    return std::nullopt;
  };
  const EnvLookup none = [](std::string_view) -> std::optional<std::string> { return {}; };
  DoctorOptions o;
  ResolveDoctorConfig(o, std::nullopt, none);
  EXPECT_EQ(o.config_path, "/etc/oci-rlimit/config.toml");
  EXPECT_FALSE(o.config_named);
  ResolveDoctorConfig(o, std::nullopt, env);
  EXPECT_EQ(o.config_path, "/etc/env.toml");
  EXPECT_TRUE(o.config_named);
  ResolveDoctorConfig(o, "/etc/flag.toml", env);
  EXPECT_EQ(o.config_path, "/etc/flag.toml");

  FakeNode n;
  n.files["/proc/self/status"] = "CapEff:\t000001ffffffffff\n";
  n.files["/etc/env.toml"] = "rlimits = [\"memlock=64M\"]\n";
  ResolveDoctorConfig(o, std::nullopt, env);
  DoctorReport r = RunDoctor(n, o);
  EXPECT_EQ(Find(r, "config", "no config"), nullptr) << All(r);
  EXPECT_EQ(Find(r, "config", "no such file"), nullptr) << All(r);
  n.files.erase("/etc/env.toml");
  r = RunDoctor(n, o);
  const Check* missing = Find(r, "config", "no such file, named by --config or $OCI_RLIMIT_CONFIG");
  ASSERT_NE(missing, nullptr) << All(r);
  EXPECT_EQ(missing->status, CheckStatus::kFail);
  EXPECT_EQ(missing->path, "/etc/env.toml");
  EXPECT_FALSE(r.ok());
}

// hooks_dir as CRI-O (crio.conf, then crio.conf.d in name order) or podman
// (containers.conf files) reads it: the last file that sets it wins.
struct HooksDirCase {
  std::string name;
  std::vector<engines::ConfigText> files;
  std::vector<std::string> table;
  std::vector<std::string> want_dirs;  // with want_source, when no error
  std::string want_source;
  std::string want_error;  // how the error begins; "" for none
};
class HooksDirTable : public ::testing::TestWithParam<HooksDirCase> {};
TEST_P(HooksDirTable, LastFileThatSetsItWins) {
  const HooksDirCase& c = GetParam();
  auto got = engines::HooksDirFromConfigs(c.files, c.table);
  if (!c.want_error.empty()) {
    ASSERT_FALSE(got);
    EXPECT_TRUE(got.error().Text().starts_with(c.want_error)) << got.error().Text();
    return;
  }
  ASSERT_TRUE(got) << got.error().Text();
  EXPECT_EQ(got->dirs, c.want_dirs);
  EXPECT_EQ(got->source, c.want_source);
}
const std::vector<std::string> kCrio = {"crio", "runtime"};
const std::string kEtcHooks = "/etc/containers/oci/hooks.d";
INSTANTIATE_TEST_SUITE_P(
    Doctor, HooksDirTable,
    ::testing::Values(
        HooksDirCase{
            "NoConfigIsTheStockDirOnly", {}, kCrio, {std::string(engines::kStockHooksDir)}, "", ""},
        HooksDirCase{"ConfigWithoutHooksDir",
                     {{"/etc/crio/crio.conf", "[crio.runtime]\nconmon = '/usr/bin/conmon'\n"}},
                     kCrio,
                     {std::string(engines::kStockHooksDir)},
                     "",
                     ""},
        HooksDirCase{"CrioConfSetsIt",
                     {{"/etc/crio/crio.conf", "[crio.runtime]\nhooks_dir = ['/etc/h']\n"}},
                     kCrio,
                     {"/etc/h"},
                     "/etc/crio/crio.conf",
                     ""},
        HooksDirCase{
            "DropInBeatsCrioConf",
            {{"/etc/crio/crio.conf", "[crio.runtime]\nhooks_dir = ['/etc/h']\n"},
             {"/etc/crio/crio.conf.d/10-hooks.conf",
              "[crio.runtime]\nhooks_dir = ['" + std::string(std::string(engines::kStockHooksDir)) +
                  "', '" + kEtcHooks + "']\n"}},
            kCrio,
            {std::string(engines::kStockHooksDir), kEtcHooks},
            "/etc/crio/crio.conf.d/10-hooks.conf",
            ""},
        HooksDirCase{
            "LaterDropInWithoutItKeepsTheEarlierOne",
            {{"/etc/crio/crio.conf.d/10-hooks.conf", "[crio.runtime]\nhooks_dir = ['/a']\n"},
             {"/etc/crio/crio.conf.d/50-oci-rlimit.conf",
              "[crio.runtime.runtimes.oci-rlimit]\nruntime_path = '/x'\n"}},
            kCrio,
            {"/a"},
            "/etc/crio/crio.conf.d/10-hooks.conf",
            ""},
        HooksDirCase{"EmptyListReadsNoDir",
                     {{"/etc/crio/crio.conf", "[crio.runtime]\nhooks_dir = []\n"}},
                     kCrio,
                     {},
                     "/etc/crio/crio.conf",
                     ""},
        HooksDirCase{"PodmansEngineTable",
                     {{"/usr/share/containers/containers.conf", "[engine]\n#hooks_dir = []\n"},
                      {"/etc/containers/containers.conf", "[engine]\nhooks_dir = ['/p']\n"}},
                     {"engine"},
                     {"/p"},
                     "/etc/containers/containers.conf",
                     ""},
        HooksDirCase{"AnotherTablesHooksDirIsNotIt",
                     {{"/etc/crio/crio.conf", "[crio]\nhooks_dir = ['/wrong']\n"}},
                     kCrio,
                     {std::string(engines::kStockHooksDir)},
                     "",
                     ""},
        HooksDirCase{"NotAList",
                     {{"/etc/crio/crio.conf.d/1.conf", "[crio.runtime]\nhooks_dir = '/a'\n"}},
                     kCrio,
                     {},
                     "",
                     "/etc/crio/crio.conf.d/1.conf: [crio.runtime] hooks_dir: must be an array "
                     "of strings"},
        HooksDirCase{"BadToml",
                     {{"/etc/crio/crio.conf", "[crio.runtime\n"}},
                     kCrio,
                     {},
                     "",
                     "/etc/crio/crio.conf: line 1: "}),
    CaseName{});

// What doctor says about hooks.d files, by which engines are installed, how
// their hooks_dir is set, and where the oci-rlimit hook file is.
struct HooksNodeCase {
  std::string name;
  std::vector<std::string> engines;          // "podman", "crio"
  std::map<std::string, std::string> files;  // besides the engines
  std::string want_what;                     // a check in area hooks.d containing this
  CheckStatus want_status;
  std::string want_path;
  bool no_ok = false;  // and no hooks.d check is ok
};
class HooksNode : public ::testing::TestWithParam<HooksNodeCase> {};
TEST_P(HooksNode, ReportsWhatEachEngineRuns) {
  const HooksNodeCase& c = GetParam();
  FakeNode n;
  for (const auto& e : c.engines) n.programs[e] = "/usr/bin/" + e;
  n.programs["oci-rlimit-hook"] = "/usr/bin/oci-rlimit-hook";
  n.files = c.files;
  DoctorReport r = RunDoctor(n);
  const Check* got = Find(r, "hooks.d", c.want_what);
  ASSERT_NE(got, nullptr) << All(r);
  EXPECT_EQ(got->status, c.want_status) << All(r);
  EXPECT_EQ(got->path, c.want_path) << All(r);
  if (c.no_ok) {
    for (const auto& check : r.checks) {
      EXPECT_FALSE(check.area == "hooks.d" && check.status == CheckStatus::kOk) << All(r);
    }
  }
}
const std::string kStockFile =
    std::string(std::string(engines::kStockHooksDir)) + "/oci-rlimit.json";
const std::string kEtcFile = kEtcHooks + "/oci-rlimit.json";
const std::string kBothDirs = "[crio.runtime]\nhooks_dir = ['" +
                              std::string(std::string(engines::kStockHooksDir)) + "', '" +
                              kEtcHooks + "']\n";
// Not ours: the annotation-scoped copy an admin masks the package's file with.
constexpr const char* kOtherHook =
    R"({"version":"1.0.0","hook":{"path":"/usr/bin/other"},"when":{"always":true},"stages":["prestart"]})";
INSTANTIATE_TEST_SUITE_P(
    Doctor, HooksNode,
    ::testing::Values(
        HooksNodeCase{"StockCrioRunsTheStockDir",
                      {"crio"},
                      {{kStockFile, kOurHooksFile}},
                      "CRI-O runs oci-rlimit-hook (stages createRuntime)",
                      CheckStatus::kOk,
                      kStockFile},
        HooksNodeCase{"StockCrioSaysWhereItReads",
                      {"crio"},
                      {},
                      "CRI-O reads hooks from /usr/share/containers/oci/hooks.d (its default",
                      CheckStatus::kInfo,
                      ""},
        HooksNodeCase{"StockCrioNeverRunsEtc",
                      {"crio"},
                      {{kEtcFile, kOurHooksFile}},
                      "oci-rlimit-hook here never runs: /etc/containers/oci/hooks.d is not a "
                      "hooks dir CRI-O reads",
                      CheckStatus::kWarn,
                      kEtcFile,
                      true},
        HooksNodeCase{"StockPodmanNeverRunsEtc",
                      {"podman"},
                      {{kEtcFile, kOurHooksFile}},
                      "is not a hooks dir podman reads",
                      CheckStatus::kWarn,
                      kEtcFile,
                      true},
        HooksNodeCase{
            "CrioDropInAddsEtc",
            {"crio"},
            {{"/etc/crio/crio.conf.d/10-hooks.conf", kBothDirs}, {kEtcFile, kOurHooksFile}},
            "CRI-O runs oci-rlimit-hook",
            CheckStatus::kOk,
            kEtcFile},
        HooksNodeCase{"CrioDropInIsNamed",
                      {"crio"},
                      {{"/etc/crio/crio.conf.d/10-hooks.conf", kBothDirs}},
                      "CRI-O reads hooks from /usr/share/containers/oci/hooks.d, "
                      "/etc/containers/oci/hooks.d (hooks_dir)",
                      CheckStatus::kInfo,
                      "/etc/crio/crio.conf.d/10-hooks.conf"},
        HooksNodeCase{"LaterDirMasksTheSameName",
                      {"crio"},
                      {{"/etc/crio/crio.conf.d/10-hooks.conf", kBothDirs},
                       {kStockFile, kOurHooksFile},
                       {kEtcFile, kOtherHook}},
                      "has its name in a later hooks dir, and the later dir wins",
                      CheckStatus::kInfo,
                      kStockFile,
                      true},
        HooksNodeCase{
            "PodmanContainersConfAddsEtc",
            {"podman"},
            {{"/etc/containers/containers.conf", "[engine]\nhooks_dir = ['" + kEtcHooks + "']\n"},
             {kEtcFile, kOurHooksFile}},
            "podman runs oci-rlimit-hook",
            CheckStatus::kOk,
            kEtcFile},
        HooksNodeCase{"BothEnginesStock",
                      {"podman", "crio"},
                      {{kStockFile, kOurHooksFile}},
                      "podman and CRI-O runs oci-rlimit-hook",
                      CheckStatus::kOk,
                      kStockFile},
        HooksNodeCase{
            "OnlyOneEngineConfiguredForEtc",
            {"podman", "crio"},
            {{"/etc/crio/crio.conf.d/10-hooks.conf", kBothDirs}, {kEtcFile, kOurHooksFile}},
            "no oci-rlimit hook in the hooks dirs podman reads",
            CheckStatus::kInfo,
            ""},
        HooksNodeCase{"BrokenDropInIsAWarning",
                      {"crio"},
                      {{"/etc/crio/crio.conf.d/10-hooks.conf", "[crio.runtime]\nhooks_dir = 1\n"}},
                      "/etc/crio/crio.conf.d/10-hooks.conf: [crio.runtime] hooks_dir: must be an "
                      "array of strings",
                      CheckStatus::kWarn,
                      ""}),
    CaseName{});

struct PathCase {
  std::string name;
  std::vector<std::string> texts;
  std::optional<std::string> want;
};
class EnvironmentPath : public ::testing::TestWithParam<PathCase> {};
TEST_P(EnvironmentPath, LastAssignmentWins) {
  EXPECT_EQ(engines::EnvironmentPathFromUnits(GetParam().texts), GetParam().want);
}
INSTANTIATE_TEST_SUITE_P(
    Doctor, EnvironmentPath,
    ::testing::Values(
        PathCase{"None", {"[Service]\nExecStart=/x\n"}, std::nullopt},
        PathCase{"Plain", {"[Service]\nEnvironment=PATH=/a:/b\n"}, "/a:/b"},
        PathCase{"QuotedAmongOthers", {"[Service]\nEnvironment=\"A=1\" \"PATH=/q\" B=2\n"}, "/q"},
        PathCase{"DropInWins",
                 {"[Service]\nEnvironment=PATH=/a\n", "[Service]\nEnvironment=PATH=/d\n"},
                 "/d"},
        PathCase{"EmptyResets",
                 {"[Service]\nEnvironment=PATH=/a\n", "[Service]\nEnvironment=\n"},
                 std::nullopt},
        PathCase{"OtherSectionIgnored", {"[Unit]\nEnvironment=PATH=/u\n"}, std::nullopt}),
    [](const auto& info) { return info.param.name; });

struct UnitCase {
  std::string name;
  std::vector<std::string> texts;
  std::optional<std::string> want;
};
class LimitMemlock : public ::testing::TestWithParam<UnitCase> {};
TEST_P(LimitMemlock, LastAssignmentWins) {
  EXPECT_EQ(engines::LimitMemlockFromUnits(GetParam().texts), GetParam().want);
}
INSTANTIATE_TEST_SUITE_P(
    Doctor, LimitMemlock,
    ::testing::Values(UnitCase{"Unset", {"[Service]\nLimitNOFILE=1\n"}, std::nullopt},
                      UnitCase{"Set", {"[Service]\nLimitMEMLOCK = infinity\n"}, "infinity"},
                      UnitCase{
                          "DropInWins",
                          {"[Service]\nLimitMEMLOCK=infinity\n", "[Service]\nLimitMEMLOCK=8M\n"},
                          "8M"},
                      UnitCase{"EmptyResets",
                               {"[Service]\nLimitMEMLOCK=8M\n", "[Service]\nLimitMEMLOCK=\n"},
                               std::nullopt},
                      UnitCase{"OtherSectionIgnored", {"[Unit]\nLimitMEMLOCK=8M\n"}, std::nullopt}),
    [](const auto& info) { return info.param.name; });

struct VersionCase {
  std::string name;
  std::string output;
  std::string want;
};
class Versions : public ::testing::TestWithParam<VersionCase> {};
TEST_P(Versions, FirstLine) { EXPECT_EQ(VersionNumber(GetParam().output), GetParam().want); }
INSTANTIATE_TEST_SUITE_P(
    Doctor, Versions,
    ::testing::Values(VersionCase{"Runc", "runc version 1.1.5\ncommit: v1.1.5-0\n", "1.1.5"},
                      VersionCase{"Docker", "Docker version 20.10.24+dfsg1, build 5d6db84\n",
                                  "20.10.24+dfsg1"},
                      VersionCase{"Podman", "podman version 4.3.1\n", "4.3.1"},
                      VersionCase{"None", "hello\n", ""}),
    [](const auto& info) { return info.param.name; });

TEST(HasCapSysResource, ReadsBit24) {
  EXPECT_EQ(*HasCapSysResource("CapEff:\t000001fffeffffff\n"), false);
  EXPECT_EQ(*HasCapSysResource("CapEff:\t0000000001000000\n"), true);
  EXPECT_FALSE(HasCapSysResource("CapEff:\tzz\n").ok());
  EXPECT_FALSE(HasCapSysResource("Name: x\n").ok());
}

}  // namespace
}  // namespace ocirlimit

namespace ocirlimit {
namespace {

// How a node runs oci-rlimit-nri, and what doctor makes of it: the "nri"
// lines in order, as "STATUS what".
struct NriNodeCase {
  std::string name;
  std::string containerd_version;
  std::string nri_toml = {};  // appended to GoodNode's config.toml
  bool preregistered = false;
  bool unit_enabled = false;
  std::map<std::string, ino_t> sockets = {};
  std::vector<RunningProcess> running = {};  // each named oci-rlimit-nri
  std::vector<std::string> want = {};
  std::map<std::string, std::string> files = {};  // more node files: the plugin's status file
};

// A running plugin that has written no status file (cli/doctor_nri_status.h).
constexpr const char* kNoStatus =
    "info  oci-rlimit-nri has written no status file: not connected since it started, or "
    "started with another --status-file";
constexpr const char* kHealedStatus =
    "connected=2026-12-01T22:00:00Z\nsynchronized=2026-12-01T22:00:01Z\ncontainers=7\n"
    "healed=6\nunhealed=0\nhealed-total=6\nreport-only=no\nwriter-pid=42\nwriter-start=500\n";
// The writer's /proc/42/stat: started at 500 (field 22).
constexpr const char* kWriterStat =
    "42 (oci-rlimit-nri) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 500 0 0\n";
constexpr const char* kHealedLine =
    "ok    oci-rlimit-nri last (re)connected at 2026-12-01T22:00:00Z and healed 6 of 7 "
    "containers then (6 since it started)";

constexpr const char* kContainerd2 = "containerd github.com/containerd/containerd/v2 v2.1.9 abc\n";
constexpr const char* kContainerd17 = "containerd github.com/containerd/containerd 1.7.24 abc\n";
constexpr const char* kEnable17 = "[plugins.\"io.containerd.nri.v1.nri\"]\ndisable = false\n";
constexpr const char* kOtherSocket =
    "[plugins.\"io.containerd.nri.v1.nri\"]\nsocket_path = \"/run/x/nri.sock\"\n";
const std::map<std::string, ino_t> kDefaultSocket = {{"/var/run/nri/nri.sock", 7}};
constexpr const char* kEnabled = "ok    NRI is enabled in containerd, socket /var/run/nri/nri.sock";
constexpr const char* kPrereg = "ok    oci-rlimit-nri is pre-registered as \"10-oci-rlimit\"";
constexpr const char* kUnit = "ok    oci-rlimit-nri.service is enabled (external plugin)";
constexpr const char* kNotRunning =
    "warn  oci-rlimit-nri is configured but not running: containers are created unadjusted "
    "while no plugin is connected";

class NriNodeTable : public ::testing::TestWithParam<NriNodeCase> {};

TEST_P(NriNodeTable, ReportsConfiguredRunningAndSocket) {
  const NriNodeCase& c = GetParam();
  FakeNode n = GoodNode();
  n.versions["/usr/bin/containerd"] = c.containerd_version;
  n.files["/etc/containerd/config.toml"] += c.nri_toml;
  if (c.preregistered) {
    n.files["/opt/nri/plugins/10-oci-rlimit"] = "";
    n.links["/opt/nri/plugins/10-oci-rlimit"] = "/usr/bin/oci-rlimit-nri";
  }
  if (c.unit_enabled) {
    n.files["/etc/systemd/system/multi-user.target.wants/oci-rlimit-nri.service"] = "[Service]\n";
  }
  n.sockets = c.sockets;
  for (const auto& [path, text] : c.files) n.files[path] = text;
  n.links["/var/run"] = "/run";  // as on Debian: one socket under both paths
  for (const auto& p : c.running) n.processes.emplace("oci-rlimit-nri", p);
  n.processes.emplace("containerd", RunningProcess{1, {"containerd"}});
  DoctorReport r = RunDoctor(n);
  std::vector<std::string> got;
  for (const auto& check : r.checks) {
    if (check.area != "nri") continue;
    std::string status = StatusName(check.status);
    status.resize(6, ' ');
    got.push_back(status + check.what);
  }
  EXPECT_EQ(got, c.want) << All(r);
  EXPECT_TRUE(r.ok()) << All(r);  // warnings, never FAIL: the other paths may still work
}

INSTANTIATE_TEST_SUITE_P(
    Doctor, NriNodeTable,
    ::testing::Values(
        NriNodeCase{.name = "Containerd16HasNoNri",
                    .containerd_version = "containerd github.com/containerd/containerd 1.6.20\n",
                    .running = {{42, {"oci-rlimit-nri"}}},
                    .want = {"info  containerd 1.6.20 has no NRI (1.7 or later)",
                             "warn  oci-rlimit-nri is running (pid 42) but containerd 1.6.20 on "
                             "PATH has no NRI: another engine (not on PATH) may serve it, whose "
                             "socket doctor cannot check",
                             kNoStatus}},
        NriNodeCase{.name = "Containerd16NothingRunning",
                    .containerd_version = "containerd github.com/containerd/containerd 1.6.20\n",
                    .want = {"info  containerd 1.6.20 has no NRI (1.7 or later)"}},
        NriNodeCase{.name = "Containerd17DisabledNothingRunning",
                    .containerd_version = kContainerd17,
                    .want = {"info  NRI is disabled in containerd's config"}},
        NriNodeCase{.name = "DisabledButAPluginRuns",
                    .containerd_version = kContainerd17,
                    .running = {{42, {"oci-rlimit-nri"}}},
                    .want = {"warn  oci-rlimit-nri is running (pid 42) but NRI is disabled in "
                             "containerd's config: containers are created unadjusted"}},
        NriNodeCase{.name = "NothingConfiguredNothingRunning",
                    .containerd_version = kContainerd2,
                    .sockets = kDefaultSocket,
                    .want = {kEnabled, "info  no oci-rlimit NRI plugin is configured or running"}},
        NriNodeCase{.name = "UnitEnabledRunningSocketThere",
                    .containerd_version = kContainerd2,
                    .unit_enabled = true,
                    .sockets = kDefaultSocket,
                    .running = {{42, {"/usr/bin/oci-rlimit-nri"}}},
                    .want = {kEnabled, kUnit,
                             "ok    oci-rlimit-nri is running (pid 42) and containerd's NRI "
                             "socket exists",
                             kNoStatus}},
        // issue 44: plugin and handler on one engine; one decides.
        NriNodeCase{
            .name = "BesideTheInstallersHandlerSaysWhoDecides",
            .containerd_version = kContainerd2,
            .unit_enabled = true,
            .sockets = kDefaultSocket,
            .running = {{42, {"/usr/bin/oci-rlimit-nri"}}},
            .want = {kEnabled, kUnit,
                     "ok    oci-rlimit-nri is running (pid 42) and containerd's NRI socket exists",
                     "info  oci-rlimit-nri and the installer's handler both serve containerd: the "
                     "plugin decides at CreateContainer and records it; oci-rlimit-runtime "
                     "applies that record (create and exec), not its own config",
                     kNoStatus},
            .files = {{"/var/lib/oci-rlimit/node-install/mode.json",
                       R"({"prefix":"/usr","runtimes":["containerd"],"nvidia":false})"}}},
        NriNodeCase{.name = "Containerd17EnabledPreregisteredRunning",
                    .containerd_version = kContainerd17,
                    .nri_toml = kEnable17,
                    .preregistered = true,
                    .sockets = kDefaultSocket,
                    .running = {{43, {"/opt/nri/plugins/10-oci-rlimit"}, "containerd"}},
                    .want = {kEnabled, kPrereg,
                             "ok    oci-rlimit-nri is running (pid 43) and containerd's NRI "
                             "socket exists",
                             kNoStatus}},
        NriNodeCase{.name = "UnitEnabledNotRunning",
                    .containerd_version = kContainerd2,
                    .unit_enabled = true,
                    .sockets = kDefaultSocket,
                    .want = {kEnabled, kUnit, kNotRunning}},
        NriNodeCase{.name = "PreregisteredNotRunningNoSocket",
                    .containerd_version = kContainerd2,
                    .preregistered = true,
                    .want = {kEnabled, kPrereg, kNotRunning}},
        NriNodeCase{.name = "RunningNoSocket",
                    .containerd_version = kContainerd2,
                    .unit_enabled = true,
                    .running = {{42, {"oci-rlimit-nri"}}},
                    .want = {kEnabled, kUnit,
                             "warn  oci-rlimit-nri is running (pid 42) but containerd's NRI socket "
                             "does not exist: it is not connected, and containers are created "
                             "unadjusted while no plugin is connected",
                             kNoStatus}},
        // A DaemonSet: nothing configured on the host, the plugin runs in a
        // pod that mounts the host's socket dir at /host/nri.
        NriNodeCase{
            .name = "RunningUnconfiguredAsADaemonSet",
            .containerd_version = kContainerd2,
            .sockets = {{"/var/run/nri/nri.sock", 7}, {"/proc/42/root/host/nri/nri.sock", 7}},
            .running =
                {{42, {"oci-rlimit-nri", "--socket", "/host/nri/nri.sock"}, "containerd-shim"}},
            .want = {kEnabled,
                     "ok    oci-rlimit-nri is running (pid 42) and containerd's NRI "
                     "socket exists",
                     kNoStatus}},
        NriNodeCase{.name = "RunningWithAnotherSocket",
                    .containerd_version = kContainerd2,
                    .unit_enabled = true,
                    .sockets = {{"/var/run/nri/nri.sock", 7}, {"/tmp/old.sock", 8}},
                    .running = {{42, {"oci-rlimit-nri", "--socket", "/tmp/old.sock"}, "systemd"}},
                    .want = {kEnabled, kUnit,
                             "warn  oci-rlimit-nri (pid 42) dials \"/tmp/old.sock\", not "
                             "containerd's NRI socket",
                             "warn  no oci-rlimit-nri dials containerd's NRI socket: containers "
                             "are created unadjusted while no plugin is connected",
                             kNoStatus}},
        NriNodeCase{.name = "SocketFlagNamesTheSameSocketThroughALink",
                    .containerd_version = kContainerd2,
                    .unit_enabled = true,
                    .sockets = {{"/run/nri/nri.sock", 7}},
                    .running = {{42, {"oci-rlimit-nri", "--socket=/run/nri/nri.sock"}, "systemd"}},
                    .want = {kEnabled, kUnit,
                             "ok    oci-rlimit-nri is running (pid 42) and containerd's NRI "
                             "socket exists",
                             kNoStatus}},
        // containerd's socket elsewhere: an external plugin without --socket
        // dials the default and misses it; one containerd started is handed
        // its connection; one with the right --socket reaches it.
        NriNodeCase{
            .name = "OtherSocketPathDefaultMissesPreregisteredAndFlagReach",
            .containerd_version = kContainerd2,
            .nri_toml = kOtherSocket,
            .preregistered = true,
            .unit_enabled = true,
            .sockets = {{"/run/x/nri.sock", 9}, {"/var/run/nri/nri.sock", 7}},
            .running = {{42, {"oci-rlimit-nri", "--config", "--socket", "--name", "a"}, "systemd"},
                        {43, {"/opt/nri/plugins/10-oci-rlimit"}, "containerd"},
                        {50, {"oci-rlimit-nri", "--socket", "/run/x/nri.sock"}, "systemd"}},
            .want = {"ok    NRI is enabled in containerd, socket /run/x/nri.sock", kPrereg, kUnit,
                     "warn  oci-rlimit-nri (pid 42) dials \"/var/run/nri/nri.sock\", not "
                     "containerd's NRI socket",
                     "ok    oci-rlimit-nri is running (pid 43, 50) and containerd's NRI "
                     "socket exists",
                     kNoStatus}}),
    CaseName{});

// The plugin's status file (docs/nri.md "Healing at reconnect"): at the
// default path, or where its --status-file names it.
INSTANTIATE_TEST_SUITE_P(
    DoctorStatus, NriNodeTable,
    ::testing::Values(
        NriNodeCase{.name = "StatusFileSaysTheLastConnectAndItsHeals",
                    .containerd_version = kContainerd2,
                    .unit_enabled = true,
                    .sockets = kDefaultSocket,
                    .running = {{42, {"/usr/bin/oci-rlimit-nri"}}},
                    .want = {kEnabled, kUnit,
                             "ok    oci-rlimit-nri is running (pid 42) and containerd's NRI "
                             "socket exists",
                             kHealedLine},
                    .files = {{"/run/oci-rlimit/nri.status", kHealedStatus},
                              {"/proc/42/stat", kWriterStat}}},
        NriNodeCase{
            .name = "StatusFileFlagIsRead",
            .containerd_version = kContainerd2,
            .unit_enabled = true,
            .sockets = kDefaultSocket,
            .running = {{42, {"oci-rlimit-nri", "--status-file", "/var/lib/x.status"}}},
            .want = {kEnabled, kUnit,
                     "ok    oci-rlimit-nri is running (pid 42) and containerd's NRI "
                     "socket exists",
                     kHealedLine},
            .files = {{"/var/lib/x.status", kHealedStatus}, {"/proc/42/stat", kWriterStat}}},
        NriNodeCase{.name = "StatusFileOfAStoppedPlugin",
                    .containerd_version = kContainerd2,
                    .unit_enabled = true,
                    .sockets = kDefaultSocket,
                    .want = {kEnabled, kUnit, kNotRunning,
                             "warn  oci-rlimit-nri's status file was written by pid 42, which no "
                             "longer runs: stale, not believed"},
                    .files = {{"/run/oci-rlimit/nri.status", kHealedStatus}}},
        // A process of another uid, in its own PID namespace, that calls
        // itself oci-rlimit-nri and names a root-only file as its status file:
        // not believed, and the file is never read.
        NriNodeCase{.name = "AnImpostorIsNotThePlugin",
                    .containerd_version = kContainerd2,
                    .unit_enabled = true,
                    .sockets = kDefaultSocket,
                    .running = {{.pid = 42,
                                 .argv = {"oci-rlimit-nri", "--status-file", "/etc/shadow"},
                                 .exe = "/tmp/x/oci-rlimit-nri"}},
                    .want = {"warn  a process named oci-rlimit-nri (pid 42) is not the installed "
                             "plugin: its executable \"/tmp/x/oci-rlimit-nri\" is not root's, or "
                             "others may write it; not believed",
                             kEnabled, kUnit, kNotRunning},
                    .files = {{"/etc/shadow", "root:SECRET:0:0\n"}}},
        NriNodeCase{.name = "APluginInItsOwnNamespacesIsNotBelieved",
                    .containerd_version = kContainerd2,
                    .unit_enabled = true,
                    .sockets = kDefaultSocket,
                    .running = {{.pid = 42,
                                 .argv = {"oci-rlimit-nri"},
                                 .exe = "/usr/bin/oci-rlimit-nri",
                                 .exe_root_owned = true,
                                 .root_uid = true}},
                    .want = {"warn  a process named oci-rlimit-nri (pid 42) is not the installed "
                             "plugin: it runs in its own PID or mount namespace; not believed",
                             kEnabled, kUnit, kNotRunning}},
        // The same rule where no engine on PATH serves NRI (containerd 1.6,
        // no crio; issue 39 finding 2): a uid 65534 process in its own PID
        // namespace whose --status-file is a forged file naming it as the
        // writer is not believed, and its file is never quoted.
        NriNodeCase{.name = "AnImpostorOnContainerd16IsNotBelieved",
                    .containerd_version = "containerd github.com/containerd/containerd 1.6.20\n",
                    .running = {{.pid = 42,
                                 .argv = {"oci-rlimit-nri", "--status-file", "/tmp/forged"},
                                 .exe = "/usr/bin/oci-rlimit-nri",
                                 .exe_root_owned = true}},
                    .want = {"info  containerd 1.6.20 has no NRI (1.7 or later)",
                             "warn  a process named oci-rlimit-nri (pid 42) is not the installed "
                             "plugin: it does not run as root; not believed"},
                    .files = {{"/tmp/forged", kHealedStatus}, {"/proc/42/stat", kWriterStat}}}),
    CaseName{});

}  // namespace
}  // namespace ocirlimit
