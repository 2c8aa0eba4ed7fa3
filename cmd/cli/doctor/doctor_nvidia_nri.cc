// NVIDIA's NRI plugin beside ours (docs/policy.md, "GPU pods by CDI
// device"). The engine's NRI socket has no list of connected plugins, so
// doctor believes a running NVIDIA installer (nvidia-ctk-installer; comm
// "nvidia-ctk-inst") only when it is what it says, as NotInstalled judges
// our own (its executable root's and so named, run by root in the host's
// PID and mount namespaces), and reads from its argv whether its NRI plugin
// is on (--enable-nri-plugin); ENABLE_NRI_PLUGIN in its environment alone is
// not visible here, and doctor says so. It exits when the socket is missing,
// so a believed one on a node whose socket exists is connected.
#include <algorithm>
#include <string>
#include <vector>

#include "cli/doctor/doctor_context.h"
#include "formats/text.h"

namespace ocirlimit::doctor {
namespace {

constexpr std::string_view kInstaller = "nvidia-ctk-installer";
constexpr std::string_view kInstallerComm = "nvidia-ctk-inst";  // comm: 15 bytes

bool NriPluginOn(const RunningProcess& p) {
  return std::any_of(p.argv.begin(), p.argv.end(), [](const std::string& a) {
    return a == "--enable-nri-plugin" || a == "--enable-nri-plugin=true";
  });
}

bool Listed(Context& c) {
  if (c.config().state != engines::OurConfigState::kParsed) return false;
  const auto& inj = c.config().config.cdi_injectors;
  return std::find(inj.begin(), inj.end(), kCdiInjectorNvidiaNri) != inj.end();
}

// What each GPU path gives, once NVIDIA's plugin is known to be connected.
void GpuPaths(Context& c, const NriEndpoint& nri, int pid) {
  const std::string path = c.config().path;
  c.Add("nri", CheckStatus::kOk,
        Cat("NVIDIA's NRI plugin (", kInstaller, ", pid ", std::to_string(pid),
            ") is connected to ", nri.engine, "'s NRI socket"),
        nri.socket_path);
  c.Add("nri", CheckStatus::kInfo,
        Cat("GPUs the device plugin allocates by CDI (cdi-cri, cdi-annotations) are resolved by ",
            nri.engine, " before NRI: a devices rule (\"/dev/nvidia*\") matches them"),
        path);
  if (Listed(c)) {
    c.Add(
        "nri", CheckStatus::kOk,
        "GPUs NVIDIA's NRI plugin injects (pod annotations nvidia.cdi.k8s.io/...) are resolved "
        "after oci-rlimit-nri answers: a cdi rule matches them ([cdi] injectors lists nvidia-nri)",
        path);
    return;
  }
  c.Add("nri", CheckStatus::kWarn,
        "GPUs NVIDIA's NRI plugin injects (pod annotations nvidia.cdi.k8s.io/...) are resolved "
        "after oci-rlimit-nri answers, so no device rule sees them, and [cdi] injectors does not "
        "list nvidia-nri: no rule matches those pods",
        path,
        "add injectors = [\"nvidia-nri\"] to [cdi] and write a cdi = [\"nvidia.com/gpu=*\"] rule");
}

}  // namespace

void CheckNvidiaNri(Context& c, const NriEndpoint& nri) {
  bool seen = false;
  for (const auto& p : c.ops().ProcessesNamed(std::string(kInstallerComm))) {
    const std::string why = NotInstalled(p, kInstaller);
    const std::string pid = std::to_string(p.pid);
    if (!why.empty()) {
      c.Add("nri", CheckStatus::kWarn,
            Cat("a process named ", kInstaller, " (pid ", pid, ") is not believed: ", why), "",
            Cat("ps -o user,pid,args -p ", pid));
    } else if (!NriPluginOn(p)) {
      c.Add("nri", CheckStatus::kInfo,
            Cat(kInstaller, " runs (pid ", pid,
                ") without --enable-nri-plugin in its argv; whether ENABLE_NRI_PLUGIN is set in "
                "its environment doctor cannot tell"),
            "", Cat("tr '\\0' '\\n' < /proc/", pid, "/environ | grep NRI"));
    } else if (!seen && c.ops().Socket(nri.socket_path)) {
      seen = true;
      GpuPaths(c, nri, p.pid);
    }
  }
  if (!seen && Listed(c)) {
    c.Add(
        "nri", CheckStatus::kWarn,
        Cat("[cdi] injectors lists nvidia-nri, but doctor sees no NVIDIA NRI plugin connected to ",
            nri.engine, ": CDI names in pod annotations are then the author's word alone"),
        c.config().path,
        "enable NVIDIA's NRI plugin (the GPU Operator's cdi.nriPluginEnabled), or remove "
        "nvidia-nri from [cdi] injectors");
  }
}

}  // namespace ocirlimit::doctor
