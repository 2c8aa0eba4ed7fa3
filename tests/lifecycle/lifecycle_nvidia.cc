#include "lifecycle_nvidia.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace ocirlimit::itest::lifecycle {
namespace fs = std::filesystem;

namespace {

constexpr const char* kRuntime = "/usr/local/bin/nvidia-container-runtime";
constexpr const char* kDropIn = "/etc/crio/crio.conf.d/99-nvidia.toml";
// Under the namespace's overlaid /usr/local/bin: its default /usr/local/nvidia is the machine's.
constexpr const char* kToolkitDir = "/usr/local/bin/nvidia-toolkit";
constexpr const char* kCdiSpec = "/etc/cdi/nvidia-lifecycle.yaml";
// The stand-in GPU: /dev/null as /dev/nvidia0, and an env to see it by.
constexpr const char* kCdiSpecText =
    "cdiVersion: \"0.5.0\"\nkind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n"
    "  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n      hostPath: /dev/null\n"
    "    env: [\"NVIDIA_LIFECYCLE_STANDIN=0\"]\n";

}  // namespace

CrioNvidia::CrioNvidia(crio::CriO& crio, NvidiaBinaries nv) : crio_(crio), nv_(std::move(nv)) {
  fs::create_directories(crio_.Host("/etc/cdi"));
  WriteFile(crio_.Host(kCdiSpec), kCdiSpecText);
}

CrioNvidia::~CrioNvidia() {
  (void)Stop();
  std::error_code ec;
  for (const char* f : {kRuntime, kDropIn, kToolkitDir, kCdiSpec})
    fs::remove_all(crio_.Host(f), ec);
}

bool CrioNvidia::RestartsEngine(const Op& op) {
  return op.kind == OpKind::kNvidiaConfigure || op.kind == OpKind::kNvidiaRemove;
}

std::optional<std::string> CrioNvidia::Run(const Op& op) {
  switch (op.kind) {
    case OpKind::kNvidiaConfigure:
      return Configure();
    case OpKind::kNvidiaStart:
      return Start(false);
    case OpKind::kNvidiaStartNri:
      return Start(true);
    case OpKind::kNvidiaStop:
      return Stop();
    case OpKind::kNvidiaRemove:
      return Remove();
    default:
      return OpName(op) + " is not one of NVIDIA's";
  }
}

// As an admin runs it: NVIDIA's runtime on PATH, its drop-in, crio restarted.
std::optional<std::string> CrioNvidia::Configure() {
  std::error_code ec;
  fs::copy_file(nv_.Path("nvidia-container-runtime"), crio_.Host(kRuntime),
                fs::copy_options::overwrite_existing, ec);
  if (ec) return "cannot place nvidia-container-runtime: " + ec.message();
  CmdResult r = crio_.InNs({nv_.Path("nvidia-ctk"), "runtime", "configure", "--runtime=crio",
                            "--nvidia-runtime-path", kRuntime});
  if (r.status != 0) return "nvidia-ctk runtime configure: " + r.out + r.err;
  if (!fs::exists(crio_.Host(kDropIn))) return std::string("nvidia-ctk wrote no ") + kDropIn;
  return crio_.Restart();
}

// The toolkit pod's source root (../shared/nvidia/README.md: usr/bin with
// NVIDIA's programs, stand-ins for libnvidia-container's).
std::string CrioNvidia::SourceRoot() const {
  return NvidiaSourceRoot(nv_, crio_.dir() + "/nvidia-lifecycle-src");
}

// As the GPU Operator's toolkit pod runs it on CRI-O: ready once its drop-in
// is there; with its NRI plugin (cdi.nriPluginEnabled) on crio's NRI socket,
// where it configures no runtime, once its plugin has started.
std::optional<std::string> CrioNvidia::Start(bool nri) {
  std::vector<std::string> argv = crio_.NsPrefix();
  argv.insert(argv.end(),
              {"env", "RUNTIME=crio", "NVIDIA_RUNTIME_SET_AS_DEFAULT=false",
               nv_.Path("nvidia-ctk-installer"), "--toolkit-source-root", SourceRoot(),
               "--toolkit-install-dir", kToolkitDir, "--host-root", "/", "--restart-mode", "none"});
  if (nri) {
    argv.insert(argv.end(), {"--enable-nri-plugin", "--nri-namespace", "gpu-operator",
                             "--nri-socket", crio_.nri_socket()});
  }
  installer_ = std::make_unique<BackgroundProcess>();
  const std::string log = crio_.dir() + "/nvidia-lifecycle-" + std::to_string(++starts_) + ".log";
  if (auto err = installer_->Start(argv, {}, log)) return err;
  const auto deadline = BackgroundProcess::Clock::now() + std::chrono::seconds(60);
  if (nri) return installer_->WaitForLog("NVIDIA's NRI plugin", "Started plugin", deadline);
  return installer_->WaitReady(
      "nvidia-ctk-installer's drop-in",
      [&]() -> std::optional<std::string> {
        if (fs::exists(crio_.Host(kDropIn))) return std::nullopt;
        return std::string("no ") + kDropIn;
      },
      deadline);
}

// SIGTERM, as kubelet stops the toolkit pod; its cleanup runs.
std::optional<std::string> CrioNvidia::Stop() {
  if (!installer_) return std::nullopt;
  kill(installer_->pid(), SIGTERM);
  for (int i = 0; i < 200 && installer_->Running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const bool hung = installer_->Running();
  const std::string log = installer_->Log();
  installer_.reset();
  if (hung) return "nvidia-ctk-installer did not exit on SIGTERM:\n" + log;
  return std::nullopt;
}

void CrioNvidia::Kill() {
  if (installer_) kill(installer_->pid(), SIGKILL);
  installer_.reset();
}

// The toolkit gone from the node (the operator uninstalled), crio restarted.
std::optional<std::string> CrioNvidia::Remove() {
  std::error_code ec;
  for (const char* f : {kRuntime, kDropIn, kToolkitDir}) fs::remove_all(crio_.Host(f), ec);
  if (ec) return "cannot remove NVIDIA's files: " + ec.message();
  return crio_.Restart();
}

}  // namespace ocirlimit::itest::lifecycle
