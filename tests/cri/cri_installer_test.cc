// The node installer's own output, loaded by real containerd and driven
// through CRI, on containerd 1.6, 1.7 and 2.x: each release's own
// `containerd config default` (with only this sandbox's settings, see
// CriContainerd::Options::stock_config), then `oci-rlimit node containerd
// install` on it, as packaging/kubernetes/install.sh runs it, then pods with
// runtimeClassName oci-rlimit. Every assertion is on what the container
// itself reads from /proc/self/limits.
//
// The wrapper's config is laid out as install.sh leaves a node:
// config.d/50-installer.toml (the installer's rlimits) and the admin's
// config.toml beside it (requests), read through OCI_RLIMIT_CONFIG.
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <filesystem>
#include <memory>
#include <sstream>

#include "cri_containerd.h"
#include "cri_probe.h"
#include "harness.h"

namespace ocirlimit::itest::cri {

void PrintTo(const ContainerdRelease& r, std::ostream* os);  // cri_test.cc

namespace {
namespace fs = std::filesystem;

constexpr Limit kDaemon{1 << 20, 8 << 20};      // what containerd starts with
constexpr Limit kConfigured{8 << 20, 8 << 20};  // memlock=8M: soft raised to the hard limit
constexpr Limit kRequested{2 << 20, 8 << 20};   // the pod's request, under the ceiling
const std::vector<std::string> kDaemonPrefix = {"prlimit", "--memlock=1048576:8388608"};
constexpr const char* kRequestAnnotation = "oci-rlimit.io/rlimits";
constexpr const char* kHandler = "oci-rlimit";  // install's default --name

// The container's init reads its own limits with shell builtins, prints
// them, then stays up for exec.
std::optional<std::string> GiveRootTheLibrariesOf(const std::string& root,
                                                  const std::string& program);

class CriInstallerTest : public ::testing::TestWithParam<ContainerdRelease> {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("prlimit");
    OCI_RLIMIT_REQUIRE_CONTAINERD(GetParam());
    for (const char* p : {"oci-rlimit-runtime", "oci-rlimit", "toml_rewrite"}) {
      ASSERT_TRUE(Which(OurBinary(p))) << OurBinary(p) << " has not been built";
    }
    fs::create_directories(dir_ / "etc/oci-rlimit/config.d");
    WriteFile(dir_ / "etc/oci-rlimit/config.d/50-installer.toml", "rlimits = [\"memlock=8M\"]\n");
    WriteFile(dir_ / "etc/oci-rlimit/config.toml",
              "[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\n");
  }

  static std::string Wrapper() { return OurBinary("oci-rlimit-runtime"); }

  // `oci-rlimit node containerd ACTION --config FILE [extra]`: its stdout,
  // or an error text in `error`.
  static std::string Node(const std::string& action, const std::string& config, std::string* error,
                          const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {
        OurBinary("oci-rlimit"), "node", "containerd", action, "--config", config};
    if (action == "install") argv.insert(argv.end(), {"--binary", Wrapper()});
    argv.insert(argv.end(), extra.begin(), extra.end());
    CmdResult r = RunCmd(argv);
    if (r.status != 0) *error = DescribeExit(argv, r);
    return r.out;
  }

  // containerd from its own stock config, edited by `edit` before it starts.
  void Start(std::function<std::optional<std::string>(const std::string&)> edit) {
    CriContainerd::Options opts;
    opts.release = GetParam();
    opts.stock_config = true;
    opts.edit_config = std::move(edit);
    opts.prefix = kDaemonPrefix;
    opts.env = {"OCI_RLIMIT_CONFIG=" + dir_ / "etc/oci-rlimit/config.toml"};
    containerd_ = std::make_unique<CriContainerd>(opts);
    ASSERT_TRUE(containerd_->ok()) << containerd_->error();
    RecordProperty("containerd", containerd_->version());
  }

  // A pod with `handler` and `annotations`, and in it a container whose init
  // prints its limits: the container id (init's memlock in `init`).
  std::string RunPrintingPod(const std::string& name, const std::string& handler,
                             const std::map<std::string, std::string>& annotations,
                             std::optional<Limit>* init) {
    PodSpec spec = containerd_->NewPod(name, handler);
    spec.annotations = annotations;
    return cri::RunPrintingPod(*containerd_, spec, init);
  }

  std::optional<Limit> ExecMemlock(const std::string& id) {
    return cri::ExecMemlock(*containerd_, id);
  }

  // Pod `name` with handler `handler`: init and exec read `want`.
  void ExpectPodReads(const std::string& name, const std::string& handler,
                      const std::map<std::string, std::string>& annotations, const Limit& want) {
    std::optional<Limit> init;
    std::string id = RunPrintingPod(name, handler, annotations, &init);
    ASSERT_FALSE(id.empty());
    EXPECT_EQ(init, want) << name << ": init";
    EXPECT_EQ(ExecMemlock(id), want) << name << ": ExecSync";
  }

  // `containerd --config FILE config dump` with this release, parsed.
  toml::table Dump(const std::string& config) {
    CmdResult r =
        RunCmd({GetParam().bin_dir + "/containerd", "--config", config, "config", "dump"});
    EXPECT_EQ(r.status, 0) << r.err;
    try {
      return toml::parse(r.out);
    } catch (const toml::parse_error& e) {
      ADD_FAILURE() << e.description() << "\n" << r.out;
      return {};
    }
  }
  const char* CriPlugin() const {
    return GetParam().config_version >= 3 ? "io.containerd.cri.v1.runtime"
                                          : "io.containerd.grpc.v1.cri";
  }

  // A fake node root HOST for install.sh: directories, a shell, a stand-in
  // systemctl, and the libraries of the programs install.sh runs under it.
  std::optional<std::string> MakeHost(const std::string& host) {
    for (const char* d : {"/etc/containerd", "/usr/local/bin", "/usr/bin", "/bin", "/tmp"}) {
      fs::create_directories(host + d);
    }
    fs::copy_file("/bin/busybox", host + "/bin/busybox");
    fs::create_symlink("busybox", host + "/bin/sh");
    WriteFile(host + "/usr/bin/systemctl", "#!/bin/sh\necho \"$@\" >>/systemctl.log\n", 0755);
    for (const char* p : {"oci-rlimit-hook", "oci-prlimit-helper", "oci-rlimit"}) {
      if (auto err = GiveRootTheLibrariesOf(host, OurBinary(p))) return err;
    }
    return std::nullopt;
  }

  // containerd from the release's stock config copied to HOST, edited there
  // by `edit` (install.sh runs), run where HOST/usr/local/bin is
  // /usr/local/bin (for containerd, its shims and runtimes only), the wrapper
  // reading HOST's /etc/oci-rlimit.
  void StartOnHost(const std::string& host,
                   std::function<std::optional<std::string>(const std::string&)> edit) {
    CriContainerd::Options opts;
    opts.release = GetParam();
    opts.stock_config = true;
    opts.edit_config = [host, edit](const std::string& config) -> std::optional<std::string> {
      const std::string node_config = host + "/etc/containerd/config.toml";
      WriteFile(node_config, ReadFile(config));
      if (auto err = edit(node_config)) return err;
      WriteFile(config, ReadFile(node_config));
      return std::nullopt;
    };
    opts.prefix = {"unshare",
                   "-m",
                   "sh",
                   "-c",
                   "mount --bind \"$0\" /usr/local/bin && exec \"$@\"",
                   host + "/usr/local/bin"};
    opts.prefix.insert(opts.prefix.end(), kDaemonPrefix.begin(), kDaemonPrefix.end());
    opts.env = {"OCI_RLIMIT_CONFIG=" + host + "/etc/oci-rlimit/config.toml"};
    containerd_ = std::make_unique<CriContainerd>(opts);
    ASSERT_TRUE(containerd_->ok()) << containerd_->error();
  }

  static CmdResult InstallSh(const std::string& host, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {
        "bash",        std::string(OCI_RLIMIT_SOURCE_DIR) + "/packaging/kubernetes/install.sh",
        "--host-root", host,
        "--source",    fs::path(OurBinary("oci-rlimit")).parent_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCmd(argv);
  }

  TempDir dir_;
  std::unique_ptr<CriContainerd> containerd_;
};

// The installer on the release's stock config (and a rerun, which changes
// nothing); containerd loads what it wrote. A pod with runtimeClassName
// oci-rlimit gets the configured limit in init and exec; a pod on the stock
// runc handler does not (the baseline); and the installer's pod_annotations
// let a pod's request under the admin's ceiling reach init and exec.
TEST_P(CriInstallerTest, InstalledHandlerGivesTheLimitAndPassesPodRequests) {
  ASSERT_NO_FATAL_FAILURE(Start([](const std::string& config) -> std::optional<std::string> {
    std::string error;
    std::string first = Node("install", config, &error);
    if (!error.empty()) return error;
    if (first.find("changed=yes") == std::string::npos) return "first install: " + first;
    std::string again = Node("install", config, &error);
    if (!error.empty()) return error;
    if (again.find("changed=no") == std::string::npos) return "rerun changed the file: " + again;
    return std::nullopt;
  }));

  ExpectPodReads("pod-runc", "runc", {}, kDaemon);
  ExpectPodReads("pod-installed", kHandler, {}, kConfigured);
  ExpectPodReads("pod-request", kHandler, {{kRequestAnnotation, "memlock=2M:8M"}}, kRequested);
}

// The coexistence flow through CRI: install, NVIDIA's rewrite of the whole
// file (nvidia handler, default_runtime_name = "nvidia", no comments), the
// installer's rerun; containerd loads the result and the oci-rlimit handler
// still gives the limit. Uninstall then leaves NVIDIA's handler and default.
TEST_P(CriInstallerTest, HandlerSurvivesNvidiasRewriteAndUninstallKeepsNvidia) {
  ASSERT_NO_FATAL_FAILURE(Start([](const std::string& config) -> std::optional<std::string> {
    std::string error;
    Node("install", config, &error);
    if (!error.empty()) return error;
    CmdResult rw = RunCmd({OurBinary("toml_rewrite"), config});
    if (rw.status != 0) return "toml_rewrite: " + rw.err;
    if (ReadFile(config).find('#') != std::string::npos) return "the rewrite kept a comment";
    Node("install", config, &error);
    if (!error.empty()) return "rerun after the rewrite: " + error;
    return std::nullopt;
  }));
  const std::string config = containerd_->config_path();
  {
    toml::table t = Dump(config);
    const toml::table* runtimes = t["plugins"][CriPlugin()]["containerd"]["runtimes"].as_table();
    ASSERT_NE(runtimes, nullptr) << ReadFile(config);
    EXPECT_TRUE(runtimes->contains(kHandler)) << ReadFile(config);
    EXPECT_TRUE(runtimes->contains("nvidia")) << ReadFile(config);
  }
  ExpectPodReads("pod-after-rewrite", kHandler, {}, kConfigured);

  std::string error;
  Node("uninstall", config, &error);
  ASSERT_EQ(error, "");
  toml::table t = Dump(config);
  const auto ctd = t["plugins"][CriPlugin()]["containerd"];
  EXPECT_FALSE(ctd["runtimes"][kHandler]) << ReadFile(config);
  EXPECT_EQ(ctd["runtimes"]["nvidia"]["options"]["BinaryName"].value<std::string>(),
            "/usr/bin/nvidia-container-runtime")
      << ReadFile(config);
  EXPECT_EQ(ctd["default_runtime_name"].value<std::string>(), "nvidia") << ReadFile(config);
}

// The words of the by-hand install command in docs/deployment.md (a ```sh
// line starting "bash /usr/share/oci-rlimit/kubernetes/install.sh", with its
// `\` continuation), double quotes removed; empty when it is not there.
std::vector<std::string> DocumentedByHandInstall(const std::string& doc) {
  const std::string start = "bash /usr/share/oci-rlimit/kubernetes/install.sh";
  size_t at = doc.find("\n" + start);
  if (at == std::string::npos) return {};
  std::string cmd;
  std::istringstream lines(doc.substr(at + 1));
  for (std::string line; std::getline(lines, line);) {
    bool more = line.ends_with("\\");
    cmd += " " + (more ? line.substr(0, line.size() - 1) : line);
    if (!more) break;
  }
  std::vector<std::string> words;
  std::istringstream ws(cmd);
  for (std::string w; ws >> w;) {
    if (w.size() >= 2 && w.front() == '"' && w.back() == '"') w = w.substr(1, w.size() - 2);
    words.push_back(w);
  }
  return words;
}

std::string Squeeze(const std::string& text) {
  std::istringstream ws(text);
  std::string out;
  for (std::string w; ws >> w;) out += (out.empty() ? "" : " ") + w;
  return out;
}

// Copies the loader and shared libraries of `program` into `root`, so that
// install.sh's `chroot ROOT PROGRAM --version` check runs there.
std::optional<std::string> GiveRootTheLibrariesOf(const std::string& root,
                                                  const std::string& program) {
  CmdResult r = RunCmd({"sh", "-c",
                        "ldd \"$1\" | grep -o '/[^ ]*' | while read -r l; do "
                        "mkdir -p \"$0${l%/*}\" && cp -L \"$l\" \"$0$l\" || exit 1; done",
                        root, program});
  if (r.status != 0) return "libraries of " + program + ": " + r.err;
  return std::nullopt;
}

// GPU nodes: after NVIDIA's rewrite, `install --base nvidia` (install.sh
// --nvidia) makes the oci-rlimit handler a copy of NVIDIA's, and the
// installer's drop-in names NVIDIA's runtime in `[runtime] runtimes` (here a
// stand-in that logs its argv and execs runc, as `--nvidia-runtime PATH`
// names it). Through CRI, init and exec get the limit and every call of the
// pod's lifecycle passes through NVIDIA's runtime.
TEST_P(CriInstallerTest, NvidiaBasedHandlerRunsNvidiasRuntimeWithTheLimit) {
  const std::string calls = dir_ / "nvidia-calls.log";
  const std::string nvidia = dir_ / "nvidia-container-runtime";
  auto runc = Which("runc");
  ASSERT_TRUE(runc);
  WriteFile(nvidia, "#!/bin/sh\necho \"$*\" >> '" + calls + "'\nexec " + *runc + " \"$@\"\n", 0755);
  WriteFile(dir_ / "etc/oci-rlimit/config.d/50-installer.toml",
            "rlimits = [\"memlock=8M\"]\n[runtime]\nruntimes = [\"" + nvidia + "\"]\n");
  std::string base_binary;
  ASSERT_NO_FATAL_FAILURE(Start([&](const std::string& config) -> std::optional<std::string> {
    std::string error;
    Node("install", config, &error);
    if (!error.empty()) return error;
    CmdResult rw = RunCmd({OurBinary("toml_rewrite"), config});
    if (rw.status != 0) return "toml_rewrite: " + rw.err;
    std::string out = Node("install", config, &error, {"--base", "nvidia"});
    if (!error.empty()) return "install --base nvidia: " + error;
    base_binary = out;
    return std::nullopt;
  }));
  EXPECT_NE(base_binary.find("base-binary=/usr/bin/nvidia-container-runtime\n"), std::string::npos)
      << base_binary << "(what install.sh --nvidia puts in [runtime] runtimes)";

  ExpectPodReads("pod-gpu", kHandler, {}, kConfigured);
  containerd_->RemoveAll();
  const std::string log = ReadFile(calls);
  for (const char* sub : {" create ", " start ", " exec ", " kill ", " delete "}) {
    EXPECT_NE((" " + log).find(sub), std::string::npos)
        << sub << "did not reach NVIDIA's runtime; calls:\n"
        << log;
  }
}

// docs/deployment.md's (and README's) "one node by hand" step, run as
// written, with only what cannot run in this sandbox mapped: `--host-root /`
// is a fake host root HOST holding the release's stock config, the .deb's
// /usr/share/oci-rlimit/kubernetes/install.sh and /usr/bin are the source
// tree's packaging/kubernetes/install.sh and this build's bin/ (the .deb ships
// those), and memlock=unlimited is 8M (no CAP_SYS_RESOURCE here). HOST has a
// stand-in systemctl for --restart. containerd then loads the file install.sh
// wrote, in a private mount namespace where HOST/usr/local/bin is
// /usr/local/bin (where the handler's BinaryName points), and the wrapper
// reads the installer's drop-in HOST/etc/oci-rlimit/config.d/50-installer.toml.
TEST_P(CriInstallerTest, DocumentedByHandInstallRunsAPodWithTheLimit) {
  OCI_RLIMIT_REQUIRE("unshare", "mount", "bash", "/bin/busybox");
  const std::string src = OCI_RLIMIT_SOURCE_DIR;
  const std::vector<std::string> doc =
      DocumentedByHandInstall(ReadFile(src + "/docs/deployment.md"));
  ASSERT_GE(doc.size(), 2u) << "docs/deployment.md has no by-hand install.sh command";
  // README says the same, inline.
  const std::string readme = ReadFile(src + "/README.md");
  const std::string lead = "One node by hand instead: `";
  size_t at = readme.find(lead);
  ASSERT_NE(at, std::string::npos) << "README.md: no \"" << lead << "\"";
  at += lead.size();
  std::string readme_cmd = Squeeze(readme.substr(at, readme.find('`', at) - at));
  std::string doc_cmd;
  for (const auto& w : doc) doc_cmd += (doc_cmd.empty() ? "" : " ") + w;
  for (size_t q; (q = readme_cmd.find('"')) != std::string::npos;) readme_cmd.erase(q, 1);
  EXPECT_EQ(readme_cmd, doc_cmd) << "README.md and docs/deployment.md differ";

  const std::string host = dir_ / "host";
  const std::string bin = fs::path(OurBinary("oci-rlimit")).parent_path();
  const std::map<std::pair<std::string, std::string>, std::string> mapped = {
      {{"--host-root", "/"}, host},
      {{"--source", "/usr/bin"}, bin},
      {{"--rlimits", "memlock=unlimited"}, "memlock=8M"},
  };
  std::vector<std::string> argv = {doc[0], src + "/packaging/kubernetes/install.sh"};
  ASSERT_EQ(doc[0], "bash");
  size_t seen = 0;
  for (size_t i = 2; i < doc.size(); ++i) {
    if (i + 1 < doc.size()) {
      if (auto it = mapped.find({doc[i], doc[i + 1]}); it != mapped.end()) {
        argv.insert(argv.end(), {doc[i], it->second});
        ++i;
        ++seen;
        continue;
      }
    }
    argv.push_back(doc[i]);
  }
  ASSERT_EQ(seen, mapped.size()) << "the documented command changed: " << doc_cmd;
  RecordProperty("command", doc_cmd);

  for (const char* d : {"/etc/containerd", "/usr/local/bin", "/usr/bin", "/bin"}) {
    fs::create_directories(host + d);
  }
  fs::copy_file("/bin/busybox", host + "/bin/busybox");
  fs::create_symlink("busybox", host + "/bin/sh");
  WriteFile(host + "/usr/bin/systemctl", "#!/bin/sh\necho \"$@\" >>/systemctl.log\n", 0755);
  for (const char* p : {"oci-rlimit-hook", "oci-prlimit-helper", "oci-rlimit"}) {
    auto err = GiveRootTheLibrariesOf(host, OurBinary(p));
    ASSERT_FALSE(err) << *err;
  }

  CriContainerd::Options opts;
  opts.release = GetParam();
  opts.stock_config = true;
  opts.edit_config = [&](const std::string& config) -> std::optional<std::string> {
    const std::string node_config = host + "/etc/containerd/config.toml";
    WriteFile(node_config, ReadFile(config));
    CmdResult r = RunCmd(argv);
    if (r.status != 0) return DescribeExit(argv, r);
    WriteFile(config, ReadFile(node_config));
    return std::nullopt;
  };
  // The node's /usr/local/bin, for containerd, its shims and runtimes only.
  opts.prefix = {"unshare",
                 "-m",
                 "sh",
                 "-c",
                 "mount --bind \"$0\" /usr/local/bin && exec \"$@\"",
                 host + "/usr/local/bin"};
  opts.prefix.insert(opts.prefix.end(), kDaemonPrefix.begin(), kDaemonPrefix.end());
  opts.env = {"OCI_RLIMIT_CONFIG=" + host + "/etc/oci-rlimit/config.toml"};
  containerd_ = std::make_unique<CriContainerd>(opts);
  ASSERT_TRUE(containerd_->ok()) << containerd_->error();
  EXPECT_EQ(ReadFile(host + "/systemctl.log"), "restart containerd\n") << "--restart";
  EXPECT_NE(ReadFile(containerd_->config_path()).find("/usr/local/bin/oci-rlimit-runtime"),
            std::string::npos)
      << ReadFile(containerd_->config_path());

  ExpectPodReads("pod-by-hand", kHandler, {}, kConfigured);
}

// The DaemonSet's own command (daemonset.yaml: no --nvidia), rerun on a GPU
// node installed with --nvidia after NVIDIA's rewrite: the oci-rlimit handler
// still passes every call of a pod's lifecycle through NVIDIA's runtime (a
// stand-in that logs and execs runc, named with --nvidia-runtime, which the
// node remembers), and init and exec get the limit.
TEST_P(CriInstallerTest, DaemonSetRerunKeepsNvidiaInTheChain) {
  OCI_RLIMIT_REQUIRE("unshare", "mount", "bash", "/bin/busybox", "python3");
  const std::string host = dir_ / "host";
  auto made = MakeHost(host);
  ASSERT_FALSE(made) << *made;
  const std::string calls = dir_ / "nvidia-calls.log";
  const std::string nvidia = dir_ / "nvidia-container-runtime";
  auto runc = Which("runc");
  ASSERT_TRUE(runc);
  WriteFile(nvidia, "#!/bin/sh\necho \"$*\" >> '" + calls + "'\nexec " + *runc + " \"$@\"\n", 0755);
  CmdResult ds =
      RunCmd({"python3", "-c", R"(
import json, sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d["kind"] == "DaemonSet":
        print(json.dumps(d["spec"]["template"]["spec"]["initContainers"][0]["command"]))
)",
              std::string(OCI_RLIMIT_SOURCE_DIR) + "/packaging/kubernetes/handler/daemonset.yaml"});
  ASSERT_EQ(ds.status, 0) << ds.err;
  const auto command = Json::parse(ds.out).get<std::vector<std::string>>();
  // The fleet's policy (the ConfigMap it mounts), as the by-hand install's: no CAP_SYS_RESOURCE
  // here, so 8M stands for what the fleet gives.
  const std::string fleet = dir_ / "fleet.toml";
  WriteFile(fleet, "rlimits = [\"memlock=8M\"]\n");
  std::vector<std::string> rerun;
  for (size_t i = 1; i < command.size(); ++i) {
    rerun.push_back(command[i] == "/host"                               ? host
                    : command[i] == "/etc/oci-rlimit-fleet/config.toml" ? fleet
                                                                        : command[i]);
  }
  std::string rerun_err;
  ASSERT_NO_FATAL_FAILURE(
      StartOnHost(host, [&](const std::string& config) -> std::optional<std::string> {
        CmdResult rw = RunCmd({OurBinary("toml_rewrite"), config});
        if (rw.status != 0) return "toml_rewrite: " + rw.err;
        CmdResult first = InstallSh(host, {"--runtime", "containerd", "--rlimits", "memlock=8M",
                                           "--nvidia", "--nvidia-runtime", nvidia});
        if (first.status != 0) return "install --nvidia: " + first.err;
        for (int i = 0; i < 2; ++i) {
          CmdResult again = InstallSh(host, rerun);
          if (again.status != 0) return "the DaemonSet's command: " + again.err;
          rerun_err = again.err;
        }
        return std::nullopt;
      }));
  EXPECT_NE(rerun_err.find("kept NVIDIA's runtime in the oci-rlimit handler's chain"),
            std::string::npos)
      << rerun_err;
  EXPECT_FALSE(fs::exists(host + "/systemctl.log")) << "the reruns changed nothing";

  ExpectPodReads("pod-gpu-after-rerun", kHandler, {}, kConfigured);
  containerd_->RemoveAll();
  const std::string log = ReadFile(calls);
  for (const char* sub : {" create ", " start ", " exec ", " kill ", " delete "}) {
    EXPECT_NE((" " + log).find(sub), std::string::npos)
        << sub << "did not reach NVIDIA's runtime; calls:\n"
        << log;
  }
}

// Uninstall while a pod on the handler runs: the handler goes, the wrapper
// stays (exit 3, naming the pod's containers), and the pod can still be
// exec'd into; containerd restarts on the edited config, and the pod can
// still be stopped and removed (and exec'd into on 1.6 and 1.7). Then a
// second uninstall finishes.
TEST_P(CriInstallerTest, UninstallKeepsARunningPodWorking) {
  OCI_RLIMIT_REQUIRE("unshare", "mount", "bash", "/bin/busybox");
  const std::string host = dir_ / "host";
  auto made = MakeHost(host);
  ASSERT_FALSE(made) << *made;
  ASSERT_NO_FATAL_FAILURE(StartOnHost(host, [&](const std::string&) -> std::optional<std::string> {
    CmdResult r = InstallSh(host, {"--runtime", "containerd", "--rlimits", "memlock=8M"});
    if (r.status != 0) return "install: " + r.err;
    return std::nullopt;
  }));
  PodSpec spec = containerd_->NewPod("pod-during-uninstall", kHandler);
  Probe probe =
      RunProbe(*containerd_, spec, CriContainerd::NewContainer("limits", kInitPrintsLimits));
  ASSERT_TRUE(probe.error.empty()) << probe.error;
  EXPECT_EQ(probe.init, kConfigured);

  // The fixture's containerd keeps its state (bundles, the handler's runc
  // root) in its own directory: seen from HOST at the same path, so that
  // uninstall finds it as it would on a node.
  const std::string state = containerd_->dir().path();
  fs::create_directories(fs::path(host + state).parent_path());
  fs::create_symlink(state, host + state);
  CmdResult un = InstallSh(host, {"--uninstall"});
  EXPECT_EQ(un.status, 3) << un.out << un.err;
  EXPECT_NE(un.err.find("still exist ("), std::string::npos) << un.err;
  EXPECT_NE(un.err.find(probe.id), std::string::npos) << "names the container\n" << un.err;
  EXPECT_TRUE(fs::exists(host + "/usr/local/bin/oci-rlimit-runtime"));
  const std::string edited = ReadFile(host + "/etc/containerd/config.toml");
  // containerd 2.x (version 3 configs; measured on 2.1.9) looks a sandbox's
  // handler up in its config for every exec, and refuses with the handler
  // gone ("no runtime for \"oci-rlimit\" is configured"), so uninstall keeps
  // the handler there while its pods run. containerd 1.6 and 1.7 exec
  // through the shim the pod started with: the handler goes first.
  const bool v3 = GetParam().config_version >= 3;
  EXPECT_EQ(edited.find("oci-rlimit-runtime") != std::string::npos, v3)
      << (v3 ? "the handler stays for its pods" : "the handler is gone") << "\n"
      << edited;
  if (v3) {
    EXPECT_NE(un.err.find("and containerd's handler oci-rlimit"), std::string::npos) << un.err;
  }

  EXPECT_EQ(ExecMemlock(probe.id), kConfigured) << "exec after uninstall";

  // containerd restarted on the edited config, as `--restart` would; the
  // pod's shim still runs the wrapper it was started with.
  WriteFile(containerd_->config_path(), edited);
  auto restarted = containerd_->Restart();
  ASSERT_FALSE(restarted) << *restarted;
  if (!v3) {
    auto refused = containerd_->RunPod(containerd_->NewPod("pod-after-uninstall", kHandler));
    EXPECT_FALSE(refused.ok()) << "containerd loaded the config without the handler";
  }
  EXPECT_EQ(ExecMemlock(probe.id), kConfigured) << "exec after uninstall and restart";
  auto pods = containerd_->cri().ListPodSandboxIds();
  ASSERT_TRUE(pods.ok()) << pods.error().Text();
  ASSERT_EQ(pods->size(), 1U) << "only the pod from before uninstall";
  auto stop_ctr = containerd_->cri().StopContainer(probe.id, 0);
  EXPECT_TRUE(stop_ctr.ok()) << stop_ctr.error().Text();
  auto remove_ctr = containerd_->cri().RemoveContainer(probe.id);
  EXPECT_TRUE(remove_ctr.ok()) << remove_ctr.error().Text();
  auto stop = containerd_->cri().StopPodSandbox(pods->front());
  EXPECT_TRUE(stop.ok()) << stop.error().Text();
  auto remove = containerd_->cri().RemovePodSandbox(pods->front());
  EXPECT_TRUE(remove.ok()) << remove.error().Text();
  auto left = containerd_->cri().ListPodSandboxIds();
  ASSERT_TRUE(left.ok()) << left.error().Text();
  EXPECT_TRUE(left->empty()) << "the pod is removed";

  CmdResult done = InstallSh(host, {"--uninstall"});
  EXPECT_EQ(done.status, 0) << done.err;
  const std::string config = host + "/etc/containerd/config.toml";
  EXPECT_TRUE(!fs::exists(config) ||
              ReadFile(config).find("oci-rlimit-runtime") == std::string::npos)
      << "the rerun after the drain removes the handler";
  EXPECT_FALSE(fs::exists(host + "/usr/local/bin/oci-rlimit-runtime"));
  EXPECT_FALSE(fs::exists(host + "/var/lib/oci-rlimit"));
}

INSTANTIATE_TEST_SUITE_P(Releases, CriInstallerTest, ::testing::ValuesIn(AllContainerdReleases()),
                         [](const auto& info) { return TestName(info.param); });

}  // namespace
}  // namespace ocirlimit::itest::cri
