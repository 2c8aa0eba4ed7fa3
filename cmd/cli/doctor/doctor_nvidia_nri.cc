// NVIDIA's NRI plugin beside ours (docs/policy.md, "GPU pods by CDI
// device"). The engine's NRI socket has no list of connected plugins, so
// doctor reads a running NVIDIA installer (nvidia-ctk-installer; comm
// "nvidia-ctk-inst") as NVIDIA's v1.20.0 source reads its own flags: the
// plugin is on by --enable-nri-plugin[=BOOL] or -p[=BOOL] in its argv, else
// ENABLE_NRI_PLUGIN in its environment; its socket is --nri-socket, else
// NRI_SOCKET, else NRI's default. A process is proof only when it is what it
// says, as NotInstalled judges our own. One in its own mount namespace (the
// GPU Operator's toolkit pod) is what a pod could also run: seen, unproven.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "cli/doctor/doctor_context.h"
#include "formats/text.h"

namespace ocirlimit::doctor {
namespace {

constexpr std::string_view kInstaller = "nvidia-ctk-installer";
constexpr std::string_view kInstallerComm = "nvidia-ctk-inst";  // comm: 15 bytes
constexpr std::string_view kDefaultSocket = "/var/run/nri/nri.sock";

// Go's strconv.ParseBool, which urfave/cli uses for flags and variables.
std::optional<bool> GoBool(std::string_view v) {
  for (std::string_view t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (v == t) return true;
  }
  for (std::string_view f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (v == f) return false;
  }
  return std::nullopt;
}

// What the plugin's flags and environment say; unset where neither does.
struct PluginSettings {
  std::optional<bool> on;
  std::string on_from;  // "--enable-nri-plugin", "ENABLE_NRI_PLUGIN", ...
  std::string socket;
  std::string socket_from;
};

// urfave/cli: -name and --name alike, a bool's value only after "=".
void ReadArgv(const std::vector<std::string>& argv, PluginSettings& s) {
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view a = argv[i];
    if (a == "--") break;
    if (!a.starts_with("-")) continue;  // another flag's value
    a.remove_prefix(a.starts_with("--") ? 2 : 1);
    const size_t eq = a.find('=');
    const std::string_view name = a.substr(0, eq);
    if (name == "enable-nri-plugin" || name == "p") {
      s.on = eq == std::string_view::npos ? std::optional<bool>(true) : GoBool(a.substr(eq + 1));
      s.on_from = argv[i];
    } else if (name == "nri-socket") {
      if (eq != std::string_view::npos) {
        s.socket = std::string(a.substr(eq + 1));
      } else if (i + 1 < argv.size()) {
        s.socket = argv[++i];
      }
      s.socket_from = "--nri-socket";
    }
  }
}

// The variables a flag left unset, from /proc/PID/environ (root's process
// only: its environment is what it runs with). False when unreadable.
bool ReadEnviron(Context& c, const RunningProcess& p, PluginSettings& s) {
  if (!p.root_uid) return false;
  auto env = c.ops().ReadFile(Cat("/proc/", std::to_string(p.pid), "/environ"));
  if (!env) return false;
  std::string_view rest = *env;
  while (!rest.empty()) {
    const size_t nul = rest.find('\0');
    const std::string_view kv = rest.substr(0, nul);
    if (s.on_from.empty() && kv.starts_with("ENABLE_NRI_PLUGIN=")) {
      s.on = GoBool(kv.substr(18));
      s.on_from = std::string(kv);
    } else if (s.socket_from.empty() && kv.starts_with("NRI_SOCKET=")) {
      s.socket = std::string(kv.substr(11));
      s.socket_from = "NRI_SOCKET";
    }
    if (nul == std::string_view::npos) break;
    rest.remove_prefix(nul + 1);
  }
  return true;
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

enum class Seen { kNone, kConnected, kUnproven };

// One process with its plugin on: whether it reaches this engine's socket.
// A socket is the same when its file is (FileId); a process in its own mount
// namespace sees its socket through /proc/PID/root.
Seen OnePlugin(Context& c, const NriEndpoint& nri, const RunningProcess& p, const PluginSettings& s,
               bool own_mounts) {
  const std::string pid = std::to_string(p.pid);
  std::string socket = s.socket.empty() ? std::string(kDefaultSocket) : s.socket;
  // /var/run is a symlink to /run, which through /proc/PID/root would
  // resolve in doctor's own root.
  if (socket.starts_with("/var/run/")) socket.erase(0, 4);
  const auto theirs = c.ops().Socket(own_mounts ? Cat("/proc/", pid, "/root", socket) : socket);
  const auto engine = c.ops().Socket(nri.socket_path);
  if (!theirs || !engine || !(*theirs == *engine)) {
    c.Add("nri", CheckStatus::kInfo,
          Cat(kInstaller, " (pid ", pid, ") runs NVIDIA's NRI plugin on the socket ", socket,
              s.socket_from.empty() ? " (NRI's default)" : Cat(" (", s.socket_from, ")"),
              theirs ? Cat(", which is not ", nri.engine, "'s NRI socket")
                     : Cat(", which doctor does not find",
                           own_mounts ? " in its mount namespace" : ""),
              ": it is not connected to ", nri.engine),
          nri.socket_path);
    return Seen::kNone;
  }
  if (own_mounts) {
    c.Add("nri", CheckStatus::kWarn,
          Cat(kInstaller, " (pid ", pid, ") runs NVIDIA's NRI plugin (", s.on_from, ") on ",
              nri.engine,
              "'s NRI socket from its own mount namespace, as in the GPU Operator's toolkit pod: "
              "seen, unproven (a pod could run such a process): doctor cannot tell that the "
              "GPUs it injects are NVIDIA's"),
          nri.socket_path,
          Cat("check that pid ", pid,
              " is the GPU Operator's toolkit pod: kubectl get pods -A -o wide | grep "
              "nvidia-container-toolkit"));
    return Seen::kUnproven;
  }
  return Seen::kConnected;
}

// One nvidia-ctk-installer process: what doctor makes of it.
Seen OneInstaller(Context& c, const NriEndpoint& nri, const RunningProcess& p) {
  const std::string pid = std::to_string(p.pid);
  const bool own_mounts = p.host_pid_namespace && !p.host_namespaces;
  RunningProcess judged = p;
  judged.host_namespaces = judged.host_namespaces || own_mounts;
  if (const std::string why = NotInstalled(judged, kInstaller); !why.empty()) {
    c.Add("nri", CheckStatus::kWarn,
          Cat("a process named ", kInstaller, " (pid ", pid, ") is not believed: ", why), "",
          Cat("ps -o user,pid,args -p ", pid));
    return Seen::kNone;
  }
  PluginSettings s;
  ReadArgv(p.argv, s);
  const bool env_read = ReadEnviron(c, p, s);
  if (!s.on.value_or(false)) {
    const std::string what =
        !env_read && !s.on.has_value()
            ? " without --enable-nri-plugin or -p in its argv, and doctor cannot read its "
              "environment (ENABLE_NRI_PLUGIN): whether its NRI plugin is on it cannot tell"
        : s.on_from.empty() ? " with its NRI plugin off (no --enable-nri-plugin, -p or "
                              "ENABLE_NRI_PLUGIN)"
                            : Cat(" with its NRI plugin off (", s.on_from, ")");
    c.Add("nri", CheckStatus::kInfo, Cat(kInstaller, " runs (pid ", pid, ")", what), "",
          Cat("tr '\\0' '\\n' < /proc/", pid, "/environ | grep NRI"));
    return Seen::kNone;
  }
  return OnePlugin(c, nri, p, s, own_mounts);
}

}  // namespace

void CheckNvidiaNri(Context& c, const NriEndpoint& nri) {
  Seen seen = Seen::kNone;
  for (const auto& p : c.ops().ProcessesNamed(std::string(kInstallerComm))) {
    const Seen one = OneInstaller(c, nri, p);
    // One connected plugin is enough to judge the GPU paths by.
    if (one == Seen::kConnected && seen != Seen::kConnected) GpuPaths(c, nri, p.pid);
    if (one != Seen::kNone && seen != Seen::kConnected) seen = one;
  }
  if (seen == Seen::kNone && Listed(c)) {
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
