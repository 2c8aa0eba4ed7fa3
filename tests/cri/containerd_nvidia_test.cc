// NVIDIA's real toolkit (v1.20.0, from OCI_RLIMIT_NVIDIA_DIR: .ci/run points
// it at ../shared/nvidia) beside oci-rlimit on a real containerd 2.x, driven
// through CRI (issue 44, item 4, containerd's half; CRI-O's is
// tests/crio/crio_nvidia_test.cc):
// - `nvidia-ctk runtime configure --runtime=containerd` writes its drop-in
//   and the `imports` line beside our handler, in both orders;
// - `nvidia-ctk-installer` as the GPU Operator's toolkit pod runs it: start,
//   SIGTERM, a rerun that writes the same bytes, removal; with
//   --enable-nri-plugin, NVIDIA's NRI plugin beside oci-rlimit-nri;
// - NVIDIA's runtime in the `--nvidia` handler's chain, taking its CDI path,
//   and that handler's pods removed after the toolkit is gone.
// What is not NVIDIA's: the dump the installer asks for (`containerd config
// dump`) is of the test's config (its --executable-path runs the real
// containerd with --config), and the toolkit wrapper's one read of
// /proc/modules, which this kernel lacks and procfs cannot be given (a bind
// mount needs the file to exist), reads a stand-in file instead.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <sstream>
#include <thread>

#include "cri_containerd.h"
#include "cri_probe.h"
#include "fake_cdi_spec.h"
#include "harness.h"
#include "pinned.h"

namespace ocirlimit::itest::cri {
namespace {

namespace fs = std::filesystem;

constexpr Limit kDaemon{1 << 20, 8 << 20};      // what containerd starts with
constexpr Limit kConfigured{8 << 20, 8 << 20};  // memlock=8M
constexpr const char* kHandler = "oci-rlimit";
constexpr const char* kGpu = "nvidia.com/gpu=0";
constexpr const char* kDropIn = "conf.d/99-nvidia.toml";

constexpr const char* kCdiSpec = kFakeCdiSpec;

// Says whether it got the GPU, prints its limits, stays up for exec.
const std::vector<std::string> kInitShowsGpu = {
    "/bin/sh", "-c",
    "echo \"gpu-env=$FAKE_GPU\"; [ -c /dev/nvidia0 ] && echo gpu-node=yes; "
    "while read -r l; do echo \"$l\"; done < /proc/self/limits; exec sleep 3600"};

class ContainerdNvidiaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("prlimit");
    OCI_RLIMIT_REQUIRE_CONTAINERD(Containerd2());
    nv_ = FindNvidiaToolkit(OCI_RLIMIT_NVIDIA_CACHE);
    ASSERT_EQ(nv_.error, "");
    if (!nv_.skip.empty()) GTEST_SKIP() << nv_.skip;
    fs::create_directories(dir_ / "cdi");
    fs::create_directories(dir_ / "conf.d");
    WriteFile(dir_ / "cdi/nvidia.json", kCdiSpec);
    WriteFile(Ours(), "rlimits = [\"memlock=8M\"]\n");
  }
  void TearDown() override {
    for (auto* p : {&installer_, &ours_nri_}) {
      if (*p) (*p)->Stop();
    }
    if (containerd_) containerd_->RemoveAll();
  }

  std::string Ours() const { return dir_ / "oci-rlimit.toml"; }
  std::string DropIn() const { return dir_ / kDropIn; }

  // containerd 2.x from its stock config, `edit` run on it before it starts.
  void Start(const std::function<std::optional<std::string>(const std::string&)>& edit,
             bool nri = false) {
    CriContainerd::Options opts;
    opts.release = Containerd2();
    opts.stock_config = true;
    opts.edit_config = edit;
    opts.prefix = {"prlimit", "--memlock=1048576:8388608"};
    opts.env = {"OCI_RLIMIT_CONFIG=" + Ours()};
    if (nri) opts.nri = NriSetup{};
    containerd_ = std::make_unique<CriContainerd>(opts);
    ASSERT_TRUE(containerd_->ok()) << containerd_->error();
    // What the installer dumps: the node's config, through the real containerd.
    WriteFile(dir_ / "containerd-dump",
              "#!/bin/sh\nexec '" + Containerd2().bin_dir + "/containerd' --config '" +
                  containerd_->config_path() + "' \"$@\"\n",
              0755);
  }

  // `nvidia-ctk runtime configure` as NVIDIA documents it for containerd,
  // its drop-in in the test's conf.d; an error text, or nullopt.
  std::optional<std::string> NvidiaCtkConfigure(const std::string& config) {
    std::vector<std::string> argv = {
        nv_.Path("nvidia-ctk"),
        "runtime",
        "configure",
        "--runtime=containerd",
        "--config=" + config,
        "--drop-in-config=" + DropIn(),
        "--nvidia-runtime-path=" + nv_.Path("nvidia-container-runtime")};
    CmdResult r = RunCmd(argv);
    if (r.status != 0) return DescribeExit(argv, r);
    if (!fs::exists(DropIn())) return "no " + DropIn() + ": " + r.err;
    return std::nullopt;
  }
  // `oci-rlimit node containerd install`, as install.sh runs it.
  static std::optional<std::string> InstallOurs(const std::string& config,
                                                const std::string& base = "runc") {
    std::vector<std::string> argv = {OurBinary("oci-rlimit"),
                                     "node",
                                     "containerd",
                                     "install",
                                     "--config",
                                     config,
                                     "--binary",
                                     OurBinary("oci-rlimit-runtime"),
                                     "--base",
                                     base};
    CmdResult r = RunCmd(argv);
    if (r.status != 0) return DescribeExit(argv, r);
    return std::nullopt;
  }
  // The BinaryName of handler `name` in containerd's own merged view.
  std::string Serves(const std::string& name) {
    CmdResult r = RunCmd({dir_ / "containerd-dump", "config", "dump"});
    EXPECT_EQ(r.status, 0) << r.err;
    const std::string table =
        "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes." + name + ".options]";
    const size_t at = r.out.find(table);
    if (at == std::string::npos) return "";
    const size_t key = r.out.find("BinaryName = '", at);
    if (key == std::string::npos) return "";
    const size_t from = key + 14;
    return r.out.substr(from, r.out.find('\'', from) - from);
  }

  // The toolkit pod's source root (../shared/nvidia/README.md: NVIDIA's
  // programs, stand-ins for libnvidia-container's).
  std::string SourceRoot() { return NvidiaSourceRoot(nv_, dir_ / "nvidia-src"); }
  std::string Toolkit() const { return dir_ / "nvidia/toolkit"; }
  // nvidia-ctk-installer as the operator runs it against containerd, every
  // path it writes in the test's directory.
  std::vector<std::string> InstallerArgv(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {nv_.Path("nvidia-ctk-installer"),
                                     "--runtime",
                                     "containerd",
                                     "--toolkit-source-root",
                                     SourceRoot(),
                                     "--toolkit-install-dir",
                                     dir_ / "nvidia",
                                     "--host-root",
                                     "/",
                                     "--restart-mode",
                                     "none",
                                     "--config",
                                     containerd_->config_path(),
                                     "--drop-in-config",
                                     DropIn(),
                                     "--executable-path",
                                     dir_ / "containerd-dump",
                                     "--pid-file",
                                     dir_ / "toolkit.pid"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }
  void StartInstaller(const std::vector<std::string>& extra, int n) {
    installer_ = std::make_unique<BackgroundProcess>();
    auto err = installer_->Start(
        InstallerArgv(extra),
        {.env = {"NVIDIA_RUNTIME_SET_AS_DEFAULT=false"}, .path_dirs = {}, .prefix = {}},
        dir_ / ("nvidia-installer-" + std::to_string(n) + ".log"));
    ASSERT_FALSE(err) << *err;
    auto ready = installer_->WaitForLog("nvidia-ctk-installer", "Waiting for signal",
                                        BackgroundProcess::Clock::now() + std::chrono::seconds(60));
    ASSERT_FALSE(ready) << *ready;
  }
  // SIGTERM, as kubelet stops the toolkit pod: its cleanup runs.
  void Terminate(bool cleanup = true) {
    ASSERT_TRUE(installer_);
    kill(installer_->pid(), SIGTERM);
    for (int i = 0; i < 200 && installer_->Running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_FALSE(installer_->Running()) << "no exit on SIGTERM\n" << installer_->Log();
    EXPECT_EQ(installer_->Log().find("Completed 'cleanup'") != std::string::npos, cleanup)
        << installer_->Log();
  }

  // `oci-rlimit doctor` on a node root holding this node's containerd
  // config and binary, our config, and in /proc only the processes `pids`
  // (no other test's); the host's /tmp and /work through links.
  std::string Doctor(const std::vector<pid_t>& pids = {}) {
    const std::string root = dir_ / "doctor-root";
    std::error_code ec;
    fs::remove_all(root, ec);
    fs::create_directories(root + "/etc/containerd");
    fs::create_directories(root + "/proc");
    fs::copy_file(containerd_->config_path(), root + "/etc/containerd/config.toml");
    fs::create_directories(root + "/usr");
    fs::create_directory_symlink(containerd_->release().bin_dir, root + "/usr/bin", ec);
    fs::create_directory_symlink("/usr/sbin", root + "/usr/sbin", ec);  // runc
    for (const std::string& path : {std::string(dir_.path()), OurBinary("oci-rlimit"),
                                    std::string(OCI_RLIMIT_NVIDIA_CACHE)}) {
      const std::string top = "/" + path.substr(1, path.find('/', 1) - 1);
      fs::create_directory_symlink(top, root + top, ec);
    }
    for (pid_t pid : pids) {
      fs::create_directory_symlink("/proc/" + std::to_string(pid),
                                   root + "/proc/" + std::to_string(pid), ec);
    }
    CmdResult r = RunCmd({OurBinary("oci-rlimit"), "doctor", "--root", root, "--config", Ours()});
    return r.out;
  }
  // doctor's lines holding every one of `needles`.
  static std::vector<std::string> Lines(const std::string& doctor,
                                        const std::vector<std::string>& needles) {
    std::vector<std::string> out;
    std::istringstream in(doctor);
    for (std::string line; std::getline(in, line);) {
      bool all = true;
      for (const auto& n : needles) all = all && line.find(n) != std::string::npos;
      if (all) out.push_back(line);
    }
    return out;
  }
  // doctor says handler oci-rlimit is ok and fails nothing about handlers.
  void ExpectDoctorServesOurs(const std::string& step) {
    SCOPED_TRACE(step);
    const std::string d = Doctor();
    const auto ours = Lines(d, {"handler \"oci-rlimit\""});
    EXPECT_FALSE(ours.empty()) << d;
    for (const auto& l : ours) EXPECT_FALSE(l.starts_with("FAIL")) << l;
    bool ok = false;
    for (const auto& l : ours) ok = ok || l.starts_with("ok");
    EXPECT_TRUE(ok) << d;
  }

  // Pod `spec` with a kInitShowsGpu container `c`: its id ("" when it did
  // not start) and init's log once it printed its limits.
  std::pair<std::string, std::string> RunGpu(const PodSpec& spec, const ContainerSpec& c) {
    auto pod = containerd_->RunPod(spec);
    EXPECT_TRUE(pod) << pod.error().Text() << containerd_->Log();
    if (!pod) return {};
    auto id = containerd_->RunContainer(*pod, c);
    EXPECT_TRUE(id) << id.error().Text() << containerd_->Log();
    if (!id) return {};
    auto log = containerd_->WaitForLog(*pod, c, kMemlock);
    EXPECT_TRUE(log) << log.error().Text();
    return {*id, log ? *log : ""};
  }

  Probe Run(const std::string& name, const std::string& handler,
            const std::vector<std::string>& command = kInitPrintsLimits) {
    return RunProbe(*containerd_, containerd_->NewPod(name, handler),
                    CriContainerd::NewContainer("limits", command));
  }

  TempDir dir_;
  NvidiaBinaries nv_;
  std::unique_ptr<CriContainerd> containerd_;
  std::unique_ptr<BackgroundProcess> installer_;
  std::unique_ptr<BackgroundProcess> ours_nri_;
};

// Our handler and `nvidia-ctk runtime configure`, in both orders: on 2.x
// NVIDIA's drop-in is merged key by key, so both handlers are served; a pod
// of each runs, ours with the limit, NVIDIA's through its real runtime.
class ContainerdNvidiaOrderTest : public ContainerdNvidiaTest,
                                  public ::testing::WithParamInterface<bool> {};

TEST_P(ContainerdNvidiaOrderTest, NvidiaCtkConfigureBesideOurHandler) {
  const bool nvidia_first = GetParam();
  ASSERT_NO_FATAL_FAILURE(Start([&](const std::string& config) -> std::optional<std::string> {
    if (nvidia_first) {
      if (auto err = NvidiaCtkConfigure(config)) return err;
      return InstallOurs(config);
    }
    if (auto err = InstallOurs(config)) return err;
    return NvidiaCtkConfigure(config);
  }));
  const std::string config = ReadFile(containerd_->config_path());
  EXPECT_NE(config.find("imports = [\"" + (dir_ / "conf.d") + "/*.toml\"]"), std::string::npos)
      << config;
  EXPECT_EQ(Serves(kHandler), OurBinary("oci-rlimit-runtime"));
  EXPECT_EQ(Serves("nvidia"), nv_.Path("nvidia-container-runtime"));
  Probe ours = Run("ours", kHandler);
  ASSERT_EQ(ours.error, "") << containerd_->Log();
  EXPECT_EQ(ours.init, kConfigured) << "init";
  EXPECT_EQ(ExecMemlock(*containerd_, ours.id), kConfigured) << "ExecSync";
  Probe nvidia = Run("nvidia", "nvidia");
  ASSERT_EQ(nvidia.error, "") << containerd_->Log();
  EXPECT_EQ(nvidia.init, kDaemon) << "NVIDIA's handler, through its real runtime";
  ExpectDoctorServesOurs(nvidia_first ? "NVIDIA first" : "oci-rlimit first");
}

INSTANTIATE_TEST_SUITE_P(Order, ContainerdNvidiaOrderTest, ::testing::Bool(), [](const auto& info) {
  return std::string(info.param ? "NvidiaFirst" : "OciRlimitFirst");
});

// nvidia-ctk-installer as the operator runs it, after our install: its
// drop-in copies the CRI table (our handler in it); both handlers run pods;
// SIGTERM deletes the drop-in; a rerun writes the same bytes; once it is
// stopped and its toolkit removed, containerd serves ours alone.
TEST_F(ContainerdNvidiaTest, NvidiaInstallerAsTheOperatorRunsIt) {
  ASSERT_NO_FATAL_FAILURE(Start([](const std::string& c) { return InstallOurs(c); }));
  ASSERT_NO_FATAL_FAILURE(StartInstaller({}, 1));
  const std::string written = ReadFile(DropIn());
  EXPECT_NE(written.find("runtimes.oci-rlimit]"), std::string::npos)
      << "the dump's copy of our handler: " << written;
  EXPECT_EQ(Serves("nvidia"), Toolkit() + "/nvidia-container-runtime");
  auto restarted = containerd_->Restart();
  ASSERT_FALSE(restarted) << *restarted;
  Probe ours = Run("ours", kHandler);
  ASSERT_EQ(ours.error, "") << containerd_->Log();
  EXPECT_EQ(ours.init, kConfigured);
  Probe nvidia = Run("nvidia", "nvidia");
  EXPECT_EQ(nvidia.error, "") << "NVIDIA's handler, through the toolkit its installer placed";
  ExpectDoctorServesOurs("beside NVIDIA's installer");

  ASSERT_NO_FATAL_FAILURE(Terminate());
  EXPECT_FALSE(fs::exists(DropIn())) << "SIGTERM deletes NVIDIA's drop-in";
  EXPECT_EQ(Serves("nvidia"), "");
  ASSERT_NO_FATAL_FAILURE(StartInstaller({}, 2));
  EXPECT_EQ(ReadFile(DropIn()), written) << "the rerun writes the same bytes";
  ASSERT_NO_FATAL_FAILURE(Terminate());

  // Removal: the toolkit pod gone for good, NVIDIA's pods first.
  containerd_->RemoveAll();
  fs::remove_all(dir_ / "nvidia");
  restarted = containerd_->Restart();
  ASSERT_FALSE(restarted) << *restarted;
  EXPECT_EQ(Serves("nvidia"), "");
  Probe after = Run("after", kHandler);
  ASSERT_EQ(after.error, "") << containerd_->Log();
  EXPECT_EQ(after.init, kConfigured);
  ExpectDoctorServesOurs("after NVIDIA's removal");
}

// NVIDIA's NRI plugin (nvidia-ctk-installer --enable-nri-plugin) beside
// oci-rlimit-nri on containerd 2.x's NRI socket: a pod with NVIDIA's CDI
// annotation gets its device and the cdi rule's limit; doctor says NVIDIA's
// plugin is connected while it runs, and not after SIGTERM.
TEST_F(ContainerdNvidiaTest, NvidiaNriPluginBesideOurs) {
  WriteFile(Ours(),
            "[cdi]\ninjectors = [\"nvidia-nri\"]\n"
            "[[rule]]\nname = \"gpu\"\nrlimits = [\"memlock=8M\"]\n"
            "match = { cdi = [\"nvidia.com/gpu=*\"] }\n");
  ASSERT_NO_FATAL_FAILURE(Start(
      [&](const std::string& config) -> std::optional<std::string> {
        // CDI (on in 2.x's default) from the test's spec dir.
        std::string text = ReadFile(config);
        const std::string dirs = "cdi_spec_dirs = ['/etc/cdi', '/var/run/cdi']";
        const size_t at = text.find(dirs);
        if (at == std::string::npos) return "no " + dirs + " in " + config;
        text.replace(at, dirs.size(), "cdi_spec_dirs = ['" + (dir_ / "cdi") + "']");
        WriteFile(config, text);
        return std::nullopt;
      },
      true));
  ours_nri_ = std::make_unique<BackgroundProcess>();
  ASSERT_FALSE(ours_nri_->Start(
      {OurBinary("oci-rlimit-nri"), "--config", Ours(), "--socket", containerd_->nri_socket(),
       "--status-file", dir_ / "nri.status"},
      {.env = {"OCI_RLIMIT_DECISIONS_DIR=" + (dir_ / "decisions")}, .path_dirs = {}, .prefix = {}},
      dir_ / "oci-rlimit-nri.log"));
  auto up = ours_nri_->WaitForLog("oci-rlimit-nri", "configured by",
                                  BackgroundProcess::Clock::now() + std::chrono::seconds(20));
  ASSERT_FALSE(up) << *up;
  ASSERT_NO_FATAL_FAILURE(StartInstaller({"--enable-nri-plugin", "--nri-namespace", "gpu-operator",
                                          "--nri-socket", containerd_->nri_socket()},
                                         1));
  std::vector<std::string> connected;
  for (int i = 0; i < 100 && connected.empty(); ++i) {
    connected = Lines(Doctor({installer_->pid(), ours_nri_->pid()}),
                      {"NVIDIA's NRI plugin", "is connected to containerd"});
    if (connected.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(connected.size(), 1u) << Doctor({installer_->pid(), ours_nri_->pid()}) << "\n"
                                  << installer_->Log();
  EXPECT_TRUE(connected[0].starts_with("ok")) << connected[0];
  const auto cdi_rule = Lines(Doctor({installer_->pid(), ours_nri_->pid()}),
                              {"GPUs NVIDIA's NRI plugin injects", "a cdi rule matches them"});
  ASSERT_EQ(cdi_rule.size(), 1u);
  EXPECT_TRUE(cdi_rule[0].starts_with("ok")) << cdi_rule[0];

  PodSpec spec = containerd_->NewPod("gpu");
  spec.annotations = {{"nvidia.cdi.k8s.io/container.limits", kGpu}};
  auto [id, log] = RunGpu(spec, CriContainerd::NewContainer("limits", kInitShowsGpu));
  ASSERT_NE(id, "");
  EXPECT_NE(log.find("gpu-env=gpu0\ngpu-node=yes\n"), std::string::npos)
      << "NVIDIA's plugin injected the CDI device: " << log << installer_->Log();
  EXPECT_EQ(LimitRow(log, kMemlock), kConfigured) << "the cdi rule's limit, in init";
  EXPECT_EQ(ExecMemlock(*containerd_, id), kConfigured) << "and in exec";

  // SIGTERM: the plugin stops, and the drop-in goes (NRI mode logs no
  // 'cleanup' step, but removes it all the same).
  ASSERT_NO_FATAL_FAILURE(Terminate(false));
  EXPECT_FALSE(fs::exists(DropIn())) << installer_->Log();
  const std::string after = Doctor({ours_nri_->pid()});
  EXPECT_TRUE(Lines(after, {"NVIDIA's NRI plugin", "is connected"}).empty()) << after;
}

// Our `--nvidia` handler (a copy of NVIDIA's handler running the wrapper,
// which execs NVIDIA's runtime: the drop-in install.sh --nvidia writes)
// chained to the toolkit the installer placed. The wrapper's /proc/modules
// read points at a stand-in naming `nvidia`, so it runs NVIDIA's runtime
// (mode cdi for a qualified NVIDIA_VISIBLE_DEVICES), which edits the spec
// from the CDI spec: the container reads NVIDIA's device and env and our
// limit. Then NVIDIA's toolkit and drop-in go and containerd restarts: a new
// pod of the handler fails, the running one is stopped and removed.
TEST_F(ContainerdNvidiaTest, NvidiaRuntimeInOurChainTakesItsCdiPath) {
  ASSERT_NO_FATAL_FAILURE(Start([&](const std::string& config) -> std::optional<std::string> {
    if (auto err = NvidiaCtkConfigure(config)) return err;
    return InstallOurs(config, "nvidia");
  }));
  // The toolkit as the operator's installer places it (no runtime config).
  std::vector<std::string> argv = InstallerArgv({"--no-daemon", "--no-runtime-config"});
  CmdResult placed = RunCmd(argv);
  ASSERT_EQ(placed.status, 0) << DescribeExit(argv, placed);
  const std::string wrapper = Toolkit() + "/nvidia-container-runtime.cdi";
  const std::string nv_config = Toolkit() + "/.config/nvidia-container-runtime/config.toml";
  CmdResult set =
      RunCmd({nv_.Path("nvidia-ctk"), "config", "--config-file", nv_config, "--in-place", "--set",
              "nvidia-container-runtime.modes.cdi.spec-dirs=" + (dir_ / "cdi"), "--set",
              "nvidia-container-runtime.debug=" + (dir_ / "nvidia-rt.log"), "--set",
              "nvidia-container-runtime.log-level=debug"});
  ASSERT_EQ(set.status, 0) << set.err;
  WriteFile(dir_ / "modules", "nvidia 56623104 0 - Live 0x0000000000000000\n");
  std::string text = ReadFile(wrapper);
  const size_t at = text.find("/proc/modules");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 13, dir_ / "modules");
  WriteFile(wrapper, text, 0755);
  WriteFile(Ours(), "rlimits = [\"memlock=8M\"]\n[runtime]\nruntimes = [\"" + wrapper + "\"]\n");

  ContainerSpec c = CriContainerd::NewContainer("limits", kInitShowsGpu);
  c.env = {{"NVIDIA_VISIBLE_DEVICES", kGpu}};
  auto [id, log] = RunGpu(containerd_->NewPod("gpu", kHandler), c);
  ASSERT_NE(id, "");
  const std::string rt_log = ReadFile(dir_ / "nvidia-rt.log");
  EXPECT_NE(rt_log.find("Injecting devices using CDI: [nvidia.com/gpu=0]"), std::string::npos)
      << rt_log;
  // NVIDIA's runtime edits the bundle's spec on create, so init has its
  // device and env (an exec, built from containerd's spec, has neither).
  EXPECT_NE(log.find("gpu-env=gpu0\ngpu-node=yes\n"), std::string::npos) << log;
  EXPECT_EQ(LimitRow(log, kMemlock), kConfigured) << "our limit in init, beside NVIDIA's edits";
  EXPECT_EQ(ExecMemlock(*containerd_, id), kConfigured) << "and in exec";

  // NVIDIA's toolkit and drop-in gone, containerd restarted.
  fs::remove_all(dir_ / "nvidia");
  fs::remove(DropIn());
  auto restarted = containerd_->Restart();
  ASSERT_FALSE(restarted) << *restarted;
  // The handler's sandbox runs through it too: the pod fails at once.
  auto fresh = containerd_->RunPod(containerd_->NewPod("fresh", kHandler));
  EXPECT_FALSE(fresh) << "a GPU pod must not start without its GPU";
  EXPECT_TRUE(containerd_->cri().StopContainer(id, 0)) << containerd_->Log();
  EXPECT_TRUE(containerd_->cri().RemoveContainer(id)) << containerd_->Log();
}

}  // namespace
}  // namespace ocirlimit::itest::cri
