// NRI (docs/nri.md), for each engine that serves it: enabled in the
// engine's config; an oci-rlimit-nri configured (a pre-registered entry in
// the plugin dir, or the unit enabled); one running (/proc/PID/comm), and
// the engine's NRI socket there for it. While no plugin is connected, the
// engine creates containers unadjusted, so configured-but-not-running is a
// warning.
#include <algorithm>
#include <optional>

#include "adapters/engines/constants.h"
#include "cli/doctor/doctor_context.h"
#include "cli/doctor/doctor_nri_status.h"
#include "effects/decisions.h"
#include "effects/nri_trust.h"
#include "formats/argv.h"
#include "formats/nri_status.h"
#include "formats/text.h"

namespace ocirlimit::doctor {
namespace {

constexpr const char* kUnadjusted =
    "containers are created unadjusted while no plugin is connected";
constexpr const char* kEnabledUnit =
    "/etc/systemd/system/multi-user.target.wants/oci-rlimit-nri.service";

// The value of `flag` a running oci-rlimit-nri was started with, read with
// the plugin's own flag table (formats/nri_status.h), as it read its argv.
std::optional<std::string> PluginFlag(const RunningProcess& p, std::string_view flag) {
  if (p.argv.empty()) return std::nullopt;
  return LastFlagValue({p.argv.begin() + 1, p.argv.end()}, kNriFlags, flag);
}

// The socket path a running oci-rlimit-nri dials: its --socket, else the
// default; "" for one the engine started (pre-registered), which it hands a
// connection (NRI_PLUGIN_SOCKET) instead.
std::string Dials(const RunningProcess& p) {
  if (auto flag = PluginFlag(p, "--socket")) return *flag;
  return p.parent == "containerd" || p.parent == "crio" ? "" : std::string(engines::kNriSocket);
}

// Whether p reaches `socket`: seen from its own root (a DaemonSet's pod
// mounts the host's socket elsewhere), or on this node's when /proc/PID/root
// is closed to us.
bool DialsSocket(NodeOps& ops, const RunningProcess& p, const FileId& socket) {
  const std::string dials = Dials(p);
  if (dials.empty()) return true;
  if (dials.starts_with("/")) {
    if (auto seen = ops.Socket("/proc/" + std::to_string(p.pid) + "/root" + dials)) {
      return *seen == socket;
    }
  }
  auto here = ops.Socket(dials);
  return here && *here == socket;
}

std::string Pids(const std::vector<RunningProcess>& running) {
  std::string pids;
  for (const auto& p : running) pids += (pids.empty() ? "" : ", ") + std::to_string(p.pid);
  return pids;
}

void NotRunning(Context& c, const NriEndpoint& nri, bool configured, bool unit, bool socket) {
  if (!configured) {
    c.Add("nri", CheckStatus::kInfo, "no oci-rlimit NRI plugin is configured or running",
          nri.plugin_path,
          "systemctl enable --now oci-rlimit-nri, or link /usr/bin/oci-rlimit-nri into " +
              nri.plugin_path + " as NN-oci-rlimit (" + std::string(kDocDir) + "/nri.md)");
    return;
  }
  std::string advice = unit ? "systemctl status oci-rlimit-nri; journalctl -u oci-rlimit-nri"
                            : Cat(nri.engine,
                                  " starts pre-registered plugins when it starts: restart it and "
                                  "read its log");
  if (!socket) {
    advice +=
        Cat("; ", nri.engine, "'s NRI socket does not exist either: is ", nri.engine, " running?");
  }
  c.Add("nri", CheckStatus::kWarn,
        std::string("oci-rlimit-nri is configured but not running: ") + kUnadjusted,
        nri.socket_path, advice);
}

// Whether a running oci-rlimit-nri can be connected: the socket the engine
// listens on exists, and a plugin started with --socket dials that socket.
// The installer's handler beside the plugin on this engine: one decides
// (docs/nri.md, "A node with both the NRI plugin and the RuntimeClass handler").
void WhoDecides(Context& c, const NriEndpoint& nri) {
  if (!c.installer_mode) return;
  const std::string engine = nri.engine == "CRI-O" ? "crio" : nri.engine;
  const auto& r = c.installer_mode->runtimes;
  if (std::find(r.begin(), r.end(), engine) == r.end()) return;
  c.Add("nri", CheckStatus::kInfo,
        Cat("oci-rlimit-nri and the installer's handler both serve ", nri.engine,
            ": the plugin decides at CreateContainer and records it; oci-rlimit-runtime applies "
            "that record (create and exec), not its own config"),
        std::string(kDecisionsDir));
}

void Connected(Context& c, const NriEndpoint& nri, const std::vector<RunningProcess>& running) {
  const std::optional<FileId> socket = c.ops().Socket(nri.socket_path);
  if (!socket) {
    c.Add("nri", CheckStatus::kWarn,
          Cat("oci-rlimit-nri is running (pid ", Pids(running), ") but ", nri.engine,
              "'s NRI socket does not exist: it is not connected, and ", kUnadjusted),
          nri.socket_path,
          Cat("start ", nri.engine, " with NRI enabled; the plugin reconnects with back-off"));
    return;
  }
  std::string good;
  for (const auto& p : running) {
    if (DialsSocket(c.ops(), p, *socket)) {
      good += (good.empty() ? "" : ", ") + std::to_string(p.pid);
      continue;
    }
    c.Add("nri", CheckStatus::kWarn,
          Cat("oci-rlimit-nri (pid ", std::to_string(p.pid), ") dials ", Quote(Dials(p)), ", not ",
              nri.engine, "'s NRI socket"),
          nri.socket_path, "run it with --socket " + nri.socket_path);
  }
  if (!good.empty()) {
    c.Add(
        "nri", CheckStatus::kOk,
        Cat("oci-rlimit-nri is running (pid ", good, ") and ", nri.engine, "'s NRI socket exists"),
        nri.socket_path);
    WhoDecides(c, nri);
  } else {
    c.Add("nri", CheckStatus::kWarn,
          Cat("no oci-rlimit-nri dials ", nri.engine, "'s NRI socket: ", kUnadjusted),
          nri.socket_path);
  }
}

// What the plugin said of its last (re)connect and heal (its --status-file,
// else the default; cli/doctor_nri_status.h).
void StatusLines(Context& c, const std::vector<RunningProcess>& running) {
  std::string path(kNriStatusPath);
  for (const auto& p : running) {
    if (auto flag = PluginFlag(p, "--status-file")) path = *flag;
  }
  auto text = c.ops().ReadFile(path);
  auto runs = WriterRunsIn([&c](const std::string& p) { return c.ops().ReadFile(p); });
  for (auto& check : NriStatusChecks(text ? std::optional<std::string>(*text) : std::nullopt, path,
                                     !running.empty(), runs)) {
    c.report().checks.push_back(std::move(check));
  }
}

// The processes named oci-rlimit-nri that are the installed plugin
// (NotInstalled); each other one is a warning, and otherwise ignored.
std::vector<RunningProcess> Plugins(Context& c) {
  std::vector<RunningProcess> out;
  for (auto& p : c.ops().ProcessesNamed(std::string(engines::kNriName))) {
    const std::string why = NotInstalled(p, engines::kNriName);
    if (why.empty()) {
      out.push_back(std::move(p));
      continue;
    }
    c.Add("nri", CheckStatus::kWarn,
          Cat("a process named oci-rlimit-nri (pid ", std::to_string(p.pid),
              ") is not the installed plugin: ", why, "; not believed"),
          "", Cat("ps -o user,pid,args -p ", std::to_string(p.pid)));
  }
  return out;
}

}  // namespace

// Only the installed plugin (Plugins, NotInstalled) is believed here too:
// an impostor's --status-file is never opened.
void RunningNriWithoutEndpoint(Context& c, const std::string& why) {
  const std::vector<RunningProcess> running = Plugins(c);
  if (running.empty()) return;
  c.Add("nri", CheckStatus::kWarn,
        Cat("oci-rlimit-nri is running (pid ", Pids(running), ") but ", why,
            ": another engine (not on PATH) may serve it, whose socket doctor cannot check"),
        "", "oci-rlimit-nri --help; check which containerd runs (systemctl status containerd)");
  StatusLines(c, running);
}

void CheckNri(Context& c, const NriEndpoint& nri) {
  const std::vector<RunningProcess> running = Plugins(c);
  if (!nri.enabled) {
    const std::string what = Cat("NRI is disabled in ", nri.engine, "'s config");
    if (running.empty()) {
      c.Add("nri", CheckStatus::kInfo, what, nri.config_path, nri.enable_advice);
    } else {
      c.Add("nri", CheckStatus::kWarn,
            Cat("oci-rlimit-nri is running (pid ", Pids(running), ") but ", what,
                ": containers are created unadjusted"),
            nri.config_path, nri.enable_advice);
    }
    return;
  }
  c.nri_engines.push_back(nri.engine);
  c.Add("nri", CheckStatus::kOk,
        Cat("NRI is enabled in ", nri.engine, ", socket ", nri.socket_path), nri.config_path);
  bool preregistered = false;
  for (const auto& name : c.ops().ListDir(nri.plugin_path)) {
    const std::string entry = nri.plugin_path + "/" + name;
    if (c.IsOurs(entry, engines::kNriName)) {
      preregistered = true;
      c.Add("nri", CheckStatus::kOk, "oci-rlimit-nri is pre-registered as " + Quote(name), entry);
    }
  }
  const bool unit = c.ops().ReadFile(kEnabledUnit).ok();
  if (unit) {
    c.Add("nri", CheckStatus::kOk, "oci-rlimit-nri.service is enabled (external plugin)",
          kEnabledUnit);
  }
  if (running.empty()) {
    NotRunning(c, nri, preregistered || unit, unit, c.ops().Socket(nri.socket_path).has_value());
    StatusLines(c, running);
    return;
  }
  Connected(c, nri, running);
  StatusLines(c, running);
  CheckNvidiaNri(c, nri);
}

}  // namespace ocirlimit::doctor
