#include "cli/doctor.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "adapters/engines/constants.h"
#include "adapters/oci/spec.h"
#include "core/config.h"
#include "core/pattern.h"
#include "core/policy.h"
#include "core/text.h"
#include "core/toml_guard.h"

namespace ocirlimit {
namespace {

constexpr const char* kHook = "oci-rlimit-hook";
constexpr const char* kRuntime = "oci-rlimit-runtime";
constexpr const char* kNri = "oci-rlimit-nri";
constexpr const char* kHelper = "oci-prlimit-helper";
constexpr int kCapSysResource = 24;
constexpr const char* kCriV2 = "io.containerd.grpc.v1.cri";
constexpr const char* kCriV3 = "io.containerd.cri.v1.runtime";

// Unit search order, highest priority first, as systemd reads them.
const std::vector<std::string>& UnitDirs() {
  static const std::vector<std::string> kDirs = {"/etc/systemd/system", "/run/systemd/system",
                                                 "/usr/lib/systemd/system", "/lib/systemd/system"};
  return kDirs;
}

std::string Base(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

class Doctor {
 public:
  explicit Doctor(NodeOps& ops) : ops_(ops) {}

  DoctorReport Run() {
    Runtimes();
    OurPrograms();
    Docker();
    Containerd();
    HooksDirs();
    Capabilities();
    return std::move(report_);
  }

 private:
  void Add(std::string area, CheckStatus s, std::string what, std::string path = "",
           std::string advice = "") {
    report_.checks.push_back(
        {std::move(area), s, std::move(what), std::move(path), std::move(advice)});
  }

  // True when `path` is, or is a symlink chain to, our program `name`.
  bool IsOurs(const std::string& path, const std::string& name) {
    auto real = ops_.Resolve(path);
    return Base(real.value_or(path)) == name;
  }

  std::string VersionOf(const std::string& path) {
    auto out = ops_.Version(path);
    if (!out) return "";
    return VersionNumber(*out);
  }

  void Runtimes() {
    bool any = false;
    for (const std::string name : {"runc", "crun"}) {
      auto path = ops_.Which(name);
      if (!path) {
        Add(name, CheckStatus::kInfo, name + " is not on PATH");
        continue;
      }
      any = true;
      if (IsOurs(*path, kRuntime)) {
        Add(name, CheckStatus::kOk, name + " on PATH is oci-rlimit-runtime (runtime mode)", *path);
        continue;
      }
      std::string version = VersionOf(*path);
      std::string what = name + " " + (version.empty() ? "(version unknown)" : version);
      if (name == "runc") {
        Add(name, CheckStatus::kOk,
            what +
                ": applies the spec's process.rlimits after hooks, so a same-type spec entry "
                "wins over oci-rlimit-hook",
            *path, "for types the spec sets too, use oci-rlimit-runtime (runtime mode)");
      } else {
        Add(name, CheckStatus::kOk,
            what + ": applies the spec's process.rlimits before hooks, so oci-rlimit-hook wins",
            *path);
      }
    }
    if (!any) {
      Add("runtime", CheckStatus::kFail, "neither runc nor crun is on PATH", "",
          "install runc or crun");
    }
  }

  void OurPrograms() {
    for (const std::string name : {kHook, kRuntime, kHelper}) {
      auto path = ops_.Which(name);
      if (path) {
        Add("oci-rlimit", CheckStatus::kOk, name + " is installed", *path);
      } else {
        Add("oci-rlimit", CheckStatus::kInfo, name + " is not on PATH");
      }
    }
    const std::string path(kDefaultConfigPath);
    std::vector<ConfigFile> files;
    const std::string dropin_dir = DropInDir(path);
    for (const auto& name : ops_.ListDir(dropin_dir)) {
      if (name.starts_with(".") || !name.ends_with(".toml")) continue;
      const std::string f = Cat(dropin_dir, "/", name);
      auto t = ops_.ReadFile(f);
      if (!t) {
        Add("config", CheckStatus::kFail, "cannot read: " + t.error().Text(), f);
        return;
      }
      files.push_back({f, *t});
    }
    auto text = ops_.ReadFile(path);
    if (!text && text.error().err == ENOENT && !files.empty()) text = std::string();
    if (!text) {
      if (text.error().err == ENOENT) {
        Add("config", CheckStatus::kWarn, "no config: the hook and the wrapper apply nothing", path,
            "write " + path + " (" + std::string(kDocDir) + "/policy.md)");
      } else {
        Add("config", CheckStatus::kFail, "cannot read: " + text.error().Text(), path);
      }
      return;
    }
    files.push_back({path, *text});
    auto cfg = ParseConfigFiles(files);
    if (!cfg) {
      Add("config", CheckStatus::kFail, cfg.error().Text(), path,
          "fix it: every container start fails closed (oci-rlimit validate)");
      return;
    }
    config_ = *cfg;
    config_ok_ = true;
    std::ostringstream os;
    os << cfg->rlimits.size() << " default limit(s), " << cfg->rules.size() << " rule(s), requests "
       << (cfg->requests.enabled ? "enabled" : "disabled");
    if (files.size() > 1) os << " (" << files.size() - 1 << " drop-in(s) in " << dropin_dir << ")";
    Add("config", CheckStatus::kOk, os.str(), path);
  }

  // A unit file and its drop-ins, in the order systemd applies them.
  std::vector<std::pair<std::string, std::string>> UnitFiles(const std::string& unit) {
    std::vector<std::pair<std::string, std::string>> files;  // path, text
    for (const auto& dir : UnitDirs()) {
      if (auto t = ops_.ReadFile(Cat(dir, "/", unit))) {
        files.emplace_back(Cat(dir, "/", unit), *t);
        break;
      }
    }
    // Drop-ins by file name across all dirs; a name in a higher-priority dir
    // hides the same name in a lower one.
    std::map<std::string, std::string> dropins;
    for (auto dir = UnitDirs().rbegin(); dir != UnitDirs().rend(); ++dir) {
      const std::string d = *dir + "/" + unit + ".d";
      for (const auto& name : ops_.ListDir(d)) {
        if (name.ends_with(".conf")) dropins[name] = Cat(d, "/", name);
      }
    }
    for (const auto& [name, path] : dropins) {
      if (auto t = ops_.ReadFile(path)) files.emplace_back(path, *t);
    }
    return files;
  }

  // The PATH a service runs with: its Environment=PATH=, else systemd's.
  std::string ServicePath(const std::string& unit) {
    std::vector<std::string> texts;
    for (const auto& [path, text] : UnitFiles(unit)) texts.push_back(text);
    return EnvironmentPathFromUnits(texts).value_or(kSystemdDefaultPath);
  }

  // The unit's LimitMEMLOCK and the file that last set it (or the unit file).
  std::pair<std::optional<std::string>, std::string> LimitMemlock(const std::string& unit) {
    auto files = UnitFiles(unit);
    if (files.empty()) return {std::nullopt, ""};
    std::vector<std::string> texts;
    std::optional<std::string> value;
    std::string from = files[0].first;
    for (const auto& [path, text] : files) {
      texts.push_back(text);
      auto now = LimitMemlockFromUnits(texts);
      if (now != value || LimitMemlockFromUnits({text}).has_value()) from = path;
      value = now;
    }
    return {value, from};
  }

  void Systemd(const std::string& area, const std::string& unit) {
    auto [limit, path] = LimitMemlock(unit);
    if (path.empty()) {
      Add(area, CheckStatus::kInfo, "no systemd unit " + unit + " in the unit directories");
      return;
    }
    if (!limit) {
      Add(area, CheckStatus::kInfo,
          unit +
              " sets no LimitMEMLOCK: containers inherit systemd's default (8M on most "
              "systems) unless oci-rlimit sets it",
          path);
    } else if (*limit == "infinity") {
      Add(area, CheckStatus::kWarn,
          unit +
              " has LimitMEMLOCK=infinity: every container of this daemon gets unlimited "
              "memlock, not only those oci-rlimit selects",
          path, "drop LimitMEMLOCK=infinity and let oci-rlimit rules select containers");
    } else {
      Add(area, CheckStatus::kInfo,
          unit + " has LimitMEMLOCK=" + *limit +
              ": containers inherit it unless oci-rlimit sets memlock",
          path);
    }
  }

  void Docker() {
    auto dockerd = ops_.Which("dockerd");
    if (!dockerd) {
      Add("docker", CheckStatus::kInfo, "dockerd is not on PATH");
      return;
    }
    std::string version = VersionOf(*dockerd);
    Add("docker", CheckStatus::kOk, "dockerd " + (version.empty() ? "(version unknown)" : version),
        *dockerd);
    const std::string docker_path = ServicePath("docker.service");
    DaemonJson(docker_path);
    // dockerd looks the hook up on its own PATH, from its unit, not ours.
    auto nvidia = ops_.WhichIn(std::string(engines::kNvidiaHookName), docker_path);
    if (!nvidia) {
      Add("docker", CheckStatus::kInfo,
          "no nvidia-container-runtime-hook on dockerd's PATH (" + docker_path +
              "): docker --gpus fails to start containers",
          "",
          "for docker --gpus, link nvidia-container-runtime-hook to oci-rlimit-hook (chain mode, " +
              std::string(kDocDir) + "/deployment.md)");
    } else if (IsOurs(*nvidia, kHook)) {
      Add("docker", CheckStatus::kOk,
          "nvidia-container-runtime-hook is oci-rlimit-hook: docker --gpus and --runtime nvidia "
          "containers get the limits (chain mode)",
          *nvidia);
      ChainTarget();
    } else {
      Add("docker", CheckStatus::kInfo,
          "nvidia-container-runtime-hook is NVIDIA's, not ours: docker --gpus sets no rlimits",
          *nvidia,
          "put oci-rlimit-hook in front of it (chain mode, " + std::string(kDocDir) +
              "/deployment.md)");
    }
    Systemd("docker", "docker.service");
  }

  // In chain mode the hook execs [hook] chain, or NVIDIA's hook: it must be there.
  void ChainTarget() {
    const std::string target =
        !config_.chain.empty() ? config_.chain : std::string(engines::kNvidiaHookPath);
    const std::string origin = !config_.chain.empty() ? "[hook] chain" : "the default chain target";
    auto found = ops_.WhichIn(target, "");
    if (!found) {
      Add("docker", CheckStatus::kFail,
          origin + " " + Quote(target) +
              " is missing or not executable: docker --gpus containers fail to start",
          target, "install NVIDIA's hook there, or set [hook] chain to where it is");
    } else if (IsOurs(*found, kHook)) {
      Add("docker", CheckStatus::kFail,
          origin + " " + Quote(target) + " is oci-rlimit-hook itself: it would exec itself", target,
          "point [hook] chain at NVIDIA's real nvidia-container-runtime-hook");
    } else {
      Add("docker", CheckStatus::kOk, origin + " " + Quote(target) + " is NVIDIA's hook", target);
    }
  }

  // [runtime] runtimes resolved as oci-rlimit-runtime resolves it when
  // `who` runs it with PATH=`path_list`: the first that exists and is not
  // the wrapper itself.
  void WrapperRuntimes(const std::string& area, const std::string& who,
                       const std::string& path_list) {
    if (!config_ok_) return;
    std::string list;
    for (const auto& r : config_.runtimes) list.append(list.empty() ? "" : ", ").append(Quote(r));
    for (const auto& r : config_.runtimes) {
      auto found = ops_.WhichIn(r, path_list);
      if (!found || IsOurs(*found, kRuntime)) continue;
      Add(area, CheckStatus::kOk,
          Cat("oci-rlimit-runtime under ", who, " execs ", *found, " ([runtime] runtimes [", list,
              "])"),
          *found);
      return;
    }
    Add(area, CheckStatus::kFail,
        "[runtime] runtimes [" + list + "]: none resolves on " + who + "'s PATH (" + path_list +
            "): every container oci-rlimit-runtime starts fails",
        std::string(kDefaultConfigPath), "install the runtime, or list its absolute path");
  }

  void DaemonJson(const std::string& docker_path) {
    const std::string path = "/etc/docker/daemon.json";
    auto text = ops_.ReadFile(path);
    if (!text) {
      Add("docker", CheckStatus::kInfo, "no daemon.json: no extra runtimes", path,
          "add {\"runtimes\":{\"oci-rlimit\":{\"path\":\"/usr/bin/oci-rlimit-runtime\"}}} for "
          "docker run --runtime oci-rlimit");
      return;
    }
    auto json = ParseJsonObject(*text, path);
    if (!json) {
      Add("docker", CheckStatus::kFail, json.error().Text(), path, "dockerd will not start");
      return;
    }
    bool ours = false;
    auto runtimes = json->find("runtimes");
    if (runtimes != json->end() && runtimes->is_object()) {
      for (const auto& [name, rt] : runtimes->items()) {
        std::string rpath = rt.is_object() && rt.contains("path") && rt["path"].is_string()
                                ? rt["path"].get<std::string>()
                                : "";
        if (rpath.empty()) continue;
        std::string full = rpath.starts_with("/") ? rpath : ops_.Which(rpath).value_or(rpath);
        if (IsOurs(full, kRuntime)) {
          if (!ours) WrapperRuntimes("docker", "dockerd", docker_path);
          ours = true;
          Add("docker", CheckStatus::kOk,
              "daemon.json runtime " + Quote(name) +
                  " is oci-rlimit-runtime: docker run --runtime " + name + " gets the limits",
              path);
        } else {
          Add("docker", CheckStatus::kInfo,
              "daemon.json runtime " + Quote(name) + " runs " + Quote(rpath), path);
        }
      }
    }
    if (auto def = json->find("default-runtime"); def != json->end() && def->is_string()) {
      Add("docker", CheckStatus::kInfo, "default-runtime is " + Quote(def->get<std::string>()),
          path);
    }
    if (!ours) {
      Add("docker", CheckStatus::kInfo, "no daemon.json runtime runs oci-rlimit-runtime", path);
    }
  }

  void Containerd() {
    auto bin = ops_.Which("containerd");
    if (!bin) {
      Add("containerd", CheckStatus::kInfo, "containerd is not on PATH");
      return;
    }
    std::string version = VersionOf(*bin);
    Add("containerd", CheckStatus::kOk,
        "containerd " + (version.empty() ? "(version unknown)" : version), *bin);
    const std::string path = "/etc/containerd/config.toml";
    auto text = ops_.ReadFile(path);
    if (!text) {
      Add("containerd", CheckStatus::kInfo,
          "no config.toml: built-in defaults, no runtime handler runs oci-rlimit-runtime", path,
          "add a runtime handler with BinaryName = \"/usr/bin/oci-rlimit-runtime\" (" +
              std::string(kDocDir) + "/deployment.md)");
    } else if (int64_t v = 0; auto handlers = ContainerdHandlers(*text, &v)) {
      Add("containerd", v == 2 || v == 3 ? CheckStatus::kInfo : CheckStatus::kWarn,
          "config version " + std::to_string(v) +
              (v == 3 ? ": handlers under plugins.\"io.containerd.cri.v1.runtime\" (containerd 2.x)"
               : v == 2 ? ": handlers under plugins.\"io.containerd.grpc.v1.cri\" (containerd 1.x; "
                          "2.x migrates it on load)"
                        : ": not 2 or 3; containerd reads no handler table oci-rlimit knows"),
          path);
      ContainerdHandlerChecks(*handlers, path, v);
    } else {
      Add("containerd", CheckStatus::kFail, handlers.error().Text(), path,
          "containerd will not start with this config");
    }
    Systemd("containerd", "containerd.service");
    NriChecks(text ? *text : std::string(), path, version);
  }

  // NRI (docs/nri.md): enabled in containerd's config; an oci-rlimit-nri
  // configured (a pre-registered entry in the plugin dir, or the unit
  // enabled); one running (/proc/PID/comm), and containerd's NRI socket there
  // for it. While no plugin is connected, containerd creates containers
  // unadjusted, so configured-but-not-running is a warning.
  void NriChecks(const std::string& text, const std::string& path, const std::string& version) {
    int major = version.empty() ? 0 : std::atoi(version.c_str());
    size_t dot = version.find('.');
    int minor = dot == std::string::npos ? 0 : std::atoi(version.c_str() + dot + 1);
    if (major == 1 && minor < 7) {
      Add("nri", CheckStatus::kInfo, "containerd " + version + " has no NRI (1.7 or later)", "",
          "oci-rlimit-nri needs containerd 1.7 or later; use the RuntimeClass path here");
      return;
    }
    auto nri = ContainerdNriSettings(text, major);
    if (!nri) return;  // the handler check has reported the broken config
    const std::vector<RunningProcess> running = ops_.ProcessesNamed(kNri);
    std::string pids;
    for (const auto& p : running) pids += (pids.empty() ? "" : ", ") + std::to_string(p.pid);
    if (!nri->enabled) {
      const std::string advice =
          "for oci-rlimit-nri, set disable = false under "
          "[plugins.\"io.containerd.nri.v1.nri\"] (" +
          std::string(kDocDir) + "/nri.md)";
      if (running.empty()) {
        Add("nri", CheckStatus::kInfo, "NRI is disabled in containerd's config", path, advice);
      } else {
        Add("nri", CheckStatus::kWarn,
            "oci-rlimit-nri is running (pid " + pids +
                ") but NRI is disabled in containerd's config: containers are created unadjusted",
            path, advice);
      }
      return;
    }
    Add("nri", CheckStatus::kOk, "NRI is enabled, socket " + nri->socket_path, path);
    bool preregistered = false;
    for (const auto& name : ops_.ListDir(nri->plugin_path)) {
      const std::string entry = nri->plugin_path + "/" + name;
      if (IsOurs(entry, kNri)) {
        preregistered = true;
        Add("nri", CheckStatus::kOk, "oci-rlimit-nri is pre-registered as " + Quote(name), entry);
      }
    }
    const std::string unit = "/etc/systemd/system/multi-user.target.wants/oci-rlimit-nri.service";
    const bool enabled_unit = ops_.ReadFile(unit).ok();
    if (enabled_unit) {
      Add("nri", CheckStatus::kOk, "oci-rlimit-nri.service is enabled (external plugin)", unit);
    }
    NriConnected(*nri, running, pids, preregistered, enabled_unit);
  }

  // Whether a running oci-rlimit-nri can be connected: the socket containerd
  // listens on exists, and a plugin started with --socket dials that socket.
  // One without --socket dials the default or was handed a connection by
  // containerd (pre-registered), which /proc does not tell apart.
  void NriConnected(const ContainerdNri& nri, const std::vector<RunningProcess>& running,
                    const std::string& pids, bool preregistered, bool enabled_unit) {
    constexpr const char* kUnadjusted =
        "containers are created unadjusted while no plugin is connected";
    const std::optional<FileId> socket = ops_.Socket(nri.socket_path);
    if (running.empty()) {
      if (!preregistered && !enabled_unit) {
        Add("nri", CheckStatus::kInfo, "no oci-rlimit NRI plugin is configured or running",
            nri.plugin_path,
            "systemctl enable --now oci-rlimit-nri, or link /usr/bin/oci-rlimit-nri into " +
                nri.plugin_path + " as NN-oci-rlimit (" + std::string(kDocDir) + "/nri.md)");
        return;
      }
      std::string advice = enabled_unit ? "systemctl status oci-rlimit-nri; journalctl -u "
                                          "oci-rlimit-nri"
                                        : "containerd starts pre-registered plugins when it "
                                          "starts: restart containerd and read its log";
      if (!socket) {
        advice += "; containerd's NRI socket does not exist either: is containerd running?";
      }
      Add("nri", CheckStatus::kWarn,
          std::string("oci-rlimit-nri is configured but not running: ") + kUnadjusted,
          nri.socket_path, advice);
      return;
    }
    if (!socket) {
      Add("nri", CheckStatus::kWarn,
          "oci-rlimit-nri is running (pid " + pids +
              ") but containerd's NRI socket does not exist: it is not connected, and " +
              kUnadjusted,
          nri.socket_path,
          "start containerd with NRI enabled; the plugin reconnects with back-off");
      return;
    }
    std::string good;
    for (const auto& p : running) {
      if (DialsSocket(p, *socket)) {
        good += (good.empty() ? "" : ", ") + std::to_string(p.pid);
        continue;
      }
      Add("nri", CheckStatus::kWarn,
          "oci-rlimit-nri (pid " + std::to_string(p.pid) + ") dials " + Quote(Dials(p)) +
              ", not containerd's NRI socket",
          nri.socket_path, "run it with --socket " + nri.socket_path);
    }
    if (!good.empty()) {
      Add("nri", CheckStatus::kOk,
          "oci-rlimit-nri is running (pid " + good + ") and containerd's NRI socket exists",
          nri.socket_path);
    } else {
      Add("nri", CheckStatus::kWarn,
          std::string("no oci-rlimit-nri dials containerd's NRI socket: ") + kUnadjusted,
          nri.socket_path);
    }
  }

  // The socket path a running oci-rlimit-nri dials: its --socket, else the
  // default; "" for one containerd started (pre-registered), which it hands a
  // connection (NRI_PLUGIN_SOCKET) instead.
  static std::string Dials(const RunningProcess& p) {
    if (auto flag = SocketFlag(p.argv)) return *flag;
    return p.parent == "containerd" ? "" : ContainerdNri{}.socket_path;
  }

  // Whether p reaches `socket`: seen from its own root (a DaemonSet's pod
  // mounts the host's socket elsewhere), or on this node's when /proc/PID/root
  // is closed to us.
  bool DialsSocket(const RunningProcess& p, const FileId& socket) {
    const std::string dials = Dials(p);
    if (dials.empty()) return true;
    if (dials.starts_with("/")) {
      if (auto seen = ops_.Socket("/proc/" + std::to_string(p.pid) + "/root" + dials)) {
        return *seen == socket;
      }
    }
    auto here = ops_.Socket(dials);
    return here && *here == socket;
  }

  // The --socket an oci-rlimit-nri was started with, read as nri/args.cc
  // reads its argv: each of its flags takes the next argument unless it has
  // "=VALUE"; the last --socket wins.
  static std::optional<std::string> SocketFlag(const std::vector<std::string>& argv) {
    std::optional<std::string> out;
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& a = argv[i];
      if (a.starts_with("--socket=")) {
        out = a.substr(std::string_view("--socket=").size());
      } else if (a == "--socket" || a == "--config" || a == "--name" || a == "--index") {
        if (i + 1 == argv.size()) break;
        if (a == "--socket") out = argv[i + 1];
        ++i;
      }
    }
    return out;
  }

  void ContainerdHandlerChecks(const std::vector<ContainerdHandler>& handlers,
                               const std::string& path, int64_t version) {
    bool ours = false;
    for (const auto& h : handlers) {
      if (!h.read) {
        const bool v3 = version == 3;
        Add("containerd", CheckStatus::kFail,
            "runtime handler " + Quote(h.name) + " is under plugins." + Quote(h.plugin) +
                ", which a version " + std::to_string(version) +
                " config does not read: containerd ignores it, and pods with runtimeClassName " +
                h.name + " fail (no runtime for " + Quote(h.name) + " is configured)",
            path,
            std::string("move it under plugins.") + Quote(v3 ? kCriV3 : kCriV2) +
                ".containerd.runtimes (oci-rlimit node containerd install does this)");
        continue;
      }
      if (h.binary_name.empty() || !IsOurs(h.binary_name, kRuntime)) {
        Add("containerd", CheckStatus::kInfo,
            "runtime handler " + Quote(h.name) + " (" + h.runtime_type + ")" +
                (h.binary_name.empty() ? "" : " runs " + Quote(h.binary_name)),
            path);
        continue;
      }
      if (!ours) WrapperRuntimes("containerd", "containerd", ServicePath("containerd.service"));
      ours = true;
      Add("containerd", CheckStatus::kOk,
          "runtime handler " + Quote(h.name) +
              " runs oci-rlimit-runtime: pods with runtimeClassName for it get the limits",
          path);
      const std::string key(kRequestAnnotation);
      bool passes = std::any_of(h.pod_annotations.begin(), h.pod_annotations.end(),
                                [&](const std::string& g) { return GlobMatch(g, key, false); });
      if (config_.requests.enabled && !passes) {
        Add("containerd", CheckStatus::kWarn,
            "requests are enabled but handler " + Quote(h.name) +
                " does not pass the pod "
                "annotation " +
                key + " to the spec",
            path, "add pod_annotations = [\"oci-rlimit.io/*\"] to the handler");
      } else if (passes) {
        Add("containerd", CheckStatus::kOk,
            "handler " + Quote(h.name) + " passes the pod annotation " + key + " to the spec",
            path);
      }
    }
    if (!ours) {
      Add("containerd", CheckStatus::kInfo, "no runtime handler runs oci-rlimit-runtime", path);
    }
  }

  // One engine that reads hooks.d files, and the dirs it reads.
  struct HookEngine {
    std::string name;         // "podman", "CRI-O"
    std::string configs;      // its config files, for the text
    std::string config_hint;  // where an admin sets hooks_dir
    HooksDirSetting setting;
    bool found = false;  // runs one of our hooks
  };

  // `paths`, then every file in each of `dirs` (name order) whose name ends
  // with `suffix`: the engine's config files, as it reads them.
  std::vector<EngineConfigFile> ConfigFiles(const std::vector<std::string>& paths,
                                            const std::vector<std::string>& dirs,
                                            const std::string& suffix) {
    std::vector<EngineConfigFile> out;
    auto add = [&](const std::string& path) {
      if (auto text = ops_.ReadFile(path)) out.push_back({path, *text});
    };
    for (const auto& p : paths) add(p);
    for (const auto& d : dirs) {
      for (const auto& name : ops_.ListDir(d)) {
        if (name.ends_with(suffix)) add(Cat(d, "/", name));
      }
    }
    return out;
  }

  HookEngine Engine(std::string name, std::string configs, std::string hint,
                    const std::vector<EngineConfigFile>& files,
                    const std::vector<std::string>& table) {
    HookEngine e{std::move(name), std::move(configs), std::move(hint), {}, false};
    auto setting = HooksDirFromConfigs(files, table);
    if (setting) {
      e.setting = *setting;
    } else {
      Add("hooks.d", CheckStatus::kWarn, setting.error().Text(), "",
          e.name + " refuses to start with it; its default is assumed here");
    }
    std::string dirs;
    for (const auto& d : e.setting.dirs) dirs += (dirs.empty() ? "" : ", ") + d;
    if (e.setting.dirs.empty()) {
      Add("hooks.d", CheckStatus::kWarn, e.name + "'s hooks_dir is empty: it runs no hooks.d file",
          e.setting.source);
    } else {
      Add("hooks.d", CheckStatus::kInfo,
          e.name + " reads hooks from " + dirs +
              (e.setting.source.empty() ? " (its default: no hooks_dir in " + e.configs + ")"
                                        : " (hooks_dir)"),
          e.setting.source);
    }
    return e;
  }

  // Which engines run the hooks.d files: each reads its own hooks_dir list
  // (stock: /usr/share/containers/oci/hooks.d only), and with one file name
  // in two of its dirs the later dir wins.
  void HooksDirs() {
    std::vector<HookEngine> engines;
    if (ops_.Which("podman")) {
      engines.push_back(Engine(
          "podman", "containers.conf", "[engine] hooks_dir in /etc/containers/containers.conf",
          ConfigFiles({"/usr/share/containers/containers.conf", "/etc/containers/containers.conf"},
                      {"/etc/containers/containers.conf.d"}, ".conf"),
          {"engine"}));
    }
    if (ops_.Which("crio")) {
      engines.push_back(Engine("CRI-O", "crio.conf or crio.conf.d",
                               "[crio.runtime] hooks_dir in /etc/crio/crio.conf.d/",
                               ConfigFiles({"/etc/crio/crio.conf"}, {"/etc/crio/crio.conf.d"}, ""),
                               {"crio", "runtime"}));
    }
    if (engines.empty()) {
      Add("hooks.d", CheckStatus::kInfo, "neither podman nor crio is on PATH");
      return;
    }
    // Every dir an engine reads, and the usual admin dir, which stock
    // engines do not read.
    std::vector<std::string> dirs = {kStockHooksDir, "/etc/containers/oci/hooks.d"};
    for (const auto& e : engines) {
      for (const auto& d : e.setting.dirs) {
        if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
      }
    }
    for (const auto& dir : dirs) {
      for (const auto& name : ops_.ListDir(dir)) {
        if (!name.ends_with(".json")) continue;
        HooksFile(engines, dir, name);
      }
    }
    for (const auto& e : engines) {
      if (e.found || e.setting.dirs.empty()) continue;
      std::string dirs_text;
      for (const auto& d : e.setting.dirs) dirs_text += (dirs_text.empty() ? "" : ", ") + d;
      Add("hooks.d", CheckStatus::kInfo,
          "no oci-rlimit hook in the hooks dirs " + e.name + " reads (" + dirs_text + ")", "",
          "install -m 644 " + std::string(kPackagedHooksFile) + " " + e.setting.dirs.front() +
              "/ for " + e.name + " (the oci-rlimit package puts it in the stock dir)");
    }
  }

  // One hooks.d file `dir`/`name`: which engines run it.
  void HooksFile(std::vector<HookEngine>& engines, const std::string& dir,
                 const std::string& name) {
    const std::string file = Cat(dir, "/", name);
    std::vector<HookEngine*> readers;
    std::string masked_by;
    for (auto& e : engines) {
      const auto& d = e.setting.dirs;
      auto at = std::find(d.begin(), d.end(), dir);
      if (at == d.end()) continue;
      // A later dir with the same file name wins.
      std::string later;
      for (auto it = std::next(at); it != d.end(); ++it) {
        if (ops_.ReadFile(Cat(*it, "/", name))) later = Cat(*it, "/", name);
      }
      if (later.empty()) {
        readers.push_back(&e);
      } else {
        masked_by = later;
      }
    }
    std::string users;
    for (size_t i = 0; i < readers.size(); ++i) {
      users += (i == 0 ? "" : i + 1 == readers.size() ? " and " : ", ") + readers[i]->name;
    }
    auto text = ops_.ReadFile(file);
    if (!text) return;
    auto json = ParseJsonObject(*text, file);
    if (!json) {
      if (!readers.empty()) {
        Add("hooks.d", CheckStatus::kWarn, json.error().Text(), file,
            users + " refuses to start containers while a hooks file is invalid");
      }
      return;
    }
    auto hook = json->find("hook");
    if (hook == json->end() || !hook->is_object() || !hook->contains("path") ||
        !(*hook)["path"].is_string()) {
      return;
    }
    const std::string hpath = (*hook)["path"].get<std::string>();
    if (!IsOurs(hpath, kHook) && !IsOurs(hpath, kHelper)) return;
    if (!readers.empty()) {
      std::string stages;
      if (auto st = json->find("stages"); st != json->end() && st->is_array()) {
        for (const auto& s : *st) {
          if (s.is_string()) stages += (stages.empty() ? "" : ",") + s.get<std::string>();
        }
      }
      for (auto* e : readers) e->found = true;
      Add("hooks.d", CheckStatus::kOk, Cat(users, " runs ", Base(hpath), " (stages ", stages, ")"),
          file);
      return;
    }
    if (!masked_by.empty()) {
      Add("hooks.d", CheckStatus::kInfo,
          Cat("this ", Base(hpath), " file does not run: ", masked_by,
              " has its name in a later hooks dir, and the later dir wins"),
          file);
      return;
    }
    std::string engines_text;
    for (size_t i = 0; i < engines.size(); ++i) {
      engines_text += (i == 0 ? "" : " or ") + engines[i].name;
    }
    const HookEngine& first = engines.front();
    Add("hooks.d", CheckStatus::kWarn,
        Cat(Base(hpath), " here never runs: ", dir, " is not a hooks dir ", engines_text, " reads"),
        file,
        first.setting.dirs.empty() ? "set " + first.config_hint
                                   : Cat("move it to ", first.setting.dirs.front(), "/, or add ",
                                         dir, " to ", first.config_hint));
  }

  void Capabilities() {
    const std::string path = "/proc/self/status";
    auto text = ops_.ReadFile(path);
    if (!text) {
      Add("capabilities", CheckStatus::kWarn, "cannot read: " + text.error().Text(), path);
      return;
    }
    auto has = HasCapSysResource(*text);
    if (!has) {
      Add("capabilities", CheckStatus::kWarn, has.error().Text(), path);
    } else if (*has) {
      Add("capabilities", CheckStatus::kOk,
          "CAP_SYS_RESOURCE is effective: hard limits can be raised", path);
    } else {
      Add("capabilities", CheckStatus::kWarn,
          "no CAP_SYS_RESOURCE here: hooks and runtimes started from this context can lower "
          "limits or raise a soft limit up to the hard one, not raise a hard limit",
          path, "run the container daemons with CAP_SYS_RESOURCE (root on a normal host)");
    }
  }

  NodeOps& ops_;
  DoctorReport report_;
  Config config_;
  bool config_ok_ = false;
};

Result<std::string> TomlString(const toml::table& t, const char* key) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::string();
  if (const auto* s = n->as_string()) return s->get();
  return MakeError(std::string(key) + ": must be a string");
}

}  // namespace

const char* StatusName(CheckStatus s) {
  switch (s) {
    case CheckStatus::kOk:
      return "ok";
    case CheckStatus::kInfo:
      return "info";
    case CheckStatus::kWarn:
      return "warn";
    case CheckStatus::kFail:
      return "FAIL";
  }
  return "?";
}

bool DoctorReport::ok() const {
  return std::none_of(checks.begin(), checks.end(),
                      [](const Check& c) { return c.status == CheckStatus::kFail; });
}

DoctorReport RunDoctor(NodeOps& ops) { return Doctor(ops).Run(); }

std::string DoctorText(const DoctorReport& report) {
  std::ostringstream os;
  for (const auto& c : report.checks) {
    std::string status = StatusName(c.status);
    std::string area = c.area;
    status.resize(6, ' ');
    area.resize(std::max<size_t>(area.size() + 1, 13), ' ');
    os << status << area << c.what << "\n";
    if (!c.path.empty()) os << std::string(19, ' ') << "path: " << c.path << "\n";
    if (!c.advice.empty()) os << std::string(19, ' ') << "fix: " << c.advice << "\n";
  }
  os << (report.ok() ? "doctor: no failures\n" : "doctor: FAILED checks above\n");
  return os.str();
}

Json DoctorJson(const DoctorReport& report) {
  Json checks = Json::array();
  for (const auto& c : report.checks) {
    checks.push_back({{"area", c.area},
                      {"status", StatusName(c.status)},
                      {"what", c.what},
                      {"path", c.path},
                      {"advice", c.advice}});
  }
  return {{"ok", report.ok()}, {"checks", checks}};
}

std::string VersionNumber(const std::string& version_output) {
  std::string first = version_output.substr(0, version_output.find('\n'));
  // The first word that starts with a digit and has a dot: "1.1.5", "20.10.24,".
  std::istringstream words(first);
  std::string w;
  while (words >> w) {
    if (!w.empty() && w.front() == 'v') w.erase(0, 1);
    while (!w.empty() && !std::isalnum(static_cast<unsigned char>(w.back()))) w.pop_back();
    if (!w.empty() && std::isdigit(static_cast<unsigned char>(w.front())) &&
        w.find('.') != std::string::npos) {
      return w;
    }
  }
  return "";
}

namespace {

// Calls `on_value` with the value of each `KEY=value` line in a [Service]
// section, in the order systemd reads them (unit, then drop-ins).
template <class OnValue>
void ForEachServiceAssignment(const std::vector<std::string>& unit_texts, std::string_view key,
                              const OnValue& on_value) {
  for (const auto& text : unit_texts) {
    std::istringstream lines(text);
    std::string line;
    bool in_service = false;
    while (std::getline(lines, line)) {
      std::string_view l = Trim(line);
      if (l.starts_with("[")) {
        in_service = l == "[Service]";
        continue;
      }
      if (!in_service || !l.starts_with(key)) continue;
      std::string_view rest = Trim(l.substr(key.size()));
      if (!rest.starts_with("=")) continue;
      on_value(Trim(rest.substr(1)));
    }
  }
}

}  // namespace

std::optional<std::string> LimitMemlockFromUnits(const std::vector<std::string>& unit_texts) {
  std::optional<std::string> value;
  ForEachServiceAssignment(unit_texts, "LimitMEMLOCK", [&](std::string_view v) {
    if (v.empty()) {
      value.reset();
    } else {
      value = std::string(v);
    }
  });
  return value;
}

std::optional<std::string> EnvironmentPathFromUnits(const std::vector<std::string>& unit_texts) {
  std::optional<std::string> value;
  ForEachServiceAssignment(unit_texts, "Environment", [&](std::string_view rest) {
    if (rest.empty()) {  // Environment= resets the list
      value.reset();
      return;
    }
    // Space-separated assignments, each optionally in double quotes.
    size_t i = 0;
    while (i < rest.size()) {
      while (i < rest.size() && rest[i] == ' ') ++i;
      std::string word;
      bool quoted = i < rest.size() && rest[i] == '"';
      if (quoted) ++i;
      while (i < rest.size() && (quoted ? rest[i] != '"' : rest[i] != ' ')) word += rest[i++];
      if (quoted && i < rest.size()) ++i;
      if (word.starts_with("PATH=")) value = word.substr(5);
    }
  });
  return value;
}

Result<std::vector<ContainerdHandler>> ContainerdHandlers(const std::string& toml_text,
                                                          int64_t* version) {
  const std::string where = "containerd config";
  if (auto guard = CheckTomlSafeText(toml_text); !guard) return guard.error().Wrap(where);
  toml::table root;
  try {
    root = toml::parse(toml_text);
  } catch (const toml::parse_error& err) {
    std::ostringstream os;
    os << where << ": line " << err.source().begin.line << ": " << OneLine(err.description());
    return MakeError(os.str());
  }
  std::vector<ContainerdHandler> out;
  const int64_t v = root["version"].value_or(int64_t{1});
  if (version != nullptr) *version = v;
  // version 2 (containerd 1.x) and version 3 (containerd 2.x) keep the
  // handlers under different CRI plugin names.
  for (const char* plugin : {kCriV2, kCriV3}) {
    // at_path() cannot spell the quoted, dotted plugin names.
    const toml::node* runtimes = root["plugins"][plugin]["containerd"]["runtimes"].node();
    if (runtimes == nullptr || !runtimes->is_table()) continue;
    for (const auto& [name, node] : *runtimes->as_table()) {
      const toml::table* t = node.as_table();
      std::string at = where + ": runtime " + Quote(name.str());
      if (t == nullptr) return MakeError(at + ": must be a table");
      ContainerdHandler h;
      h.plugin = plugin;
      h.read = (v == 2 && plugin == std::string_view(kCriV2)) ||
               (v == 3 && plugin == std::string_view(kCriV3));
      h.name = std::string(name.str());
      auto type = TomlString(*t, "runtime_type");
      if (!type) return type.error().Wrap(at);
      h.runtime_type = *type;
      if (const toml::node* opts = t->get("options"); opts != nullptr && opts->is_table()) {
        auto bin = TomlString(*opts->as_table(), "BinaryName");
        if (!bin) return bin.error().Wrap(at + ": options");
        h.binary_name = *bin;
      }
      if (const toml::node* pa = t->get("pod_annotations"); pa != nullptr) {
        const toml::array* arr = pa->as_array();
        if (arr == nullptr) return MakeError(at + ": pod_annotations: must be an array");
        for (const auto& e : *arr) {
          if (const auto* s = e.as_string()) h.pod_annotations.push_back(s->get());
        }
      }
      out.push_back(std::move(h));
    }
  }
  return out;
}

Result<ContainerdNri> ContainerdNriSettings(const std::string& toml_text, int containerd_major) {
  ContainerdNri out;
  out.enabled = containerd_major >= 2;
  if (toml_text.empty()) return out;
  const std::string where = "containerd config";
  if (auto guard = CheckTomlSafeText(toml_text); !guard) return guard.error().Wrap(where);
  toml::table root;
  try {
    root = toml::parse(toml_text);
  } catch (const toml::parse_error& err) {
    return MakeError(where + ": " + OneLine(err.description()));
  }
  const toml::node* nri = root["plugins"]["io.containerd.nri.v1.nri"].node();
  if (nri == nullptr || !nri->is_table()) return out;
  const toml::table& t = *nri->as_table();
  if (const toml::node* d = t.get("disable"); d != nullptr) {
    if (!d->is_boolean()) return MakeError(where + ": nri disable: must be true or false");
    out.enabled = !d->as_boolean()->get();
  }
  for (auto [key, field] :
       {std::pair{"socket_path", &out.socket_path}, std::pair{"plugin_path", &out.plugin_path}}) {
    auto v = TomlString(t, key);
    if (!v) return v.error().Wrap(where + ": nri");
    if (!v->empty()) *field = *v;
  }
  return out;
}

Result<HooksDirSetting> HooksDirFromConfigs(const std::vector<EngineConfigFile>& files,
                                            const std::vector<std::string>& table) {
  HooksDirSetting out;
  std::string key = "[";
  for (const auto& t : table) key += (key.size() > 1 ? "." : "") + t;
  key += "] hooks_dir";
  for (const auto& f : files) {
    if (auto guard = CheckTomlSafeText(f.text); !guard) return guard.error().Wrap(f.path);
    toml::table root;
    try {
      root = toml::parse(f.text);
    } catch (const toml::parse_error& err) {
      std::ostringstream os;
      os << f.path << ": line " << err.source().begin.line << ": " << OneLine(err.description());
      return MakeError(os.str());
    }
    const toml::node* n = &root;
    for (const auto& t : table) n = n->is_table() ? n->as_table()->get(t) : nullptr;
    if (n == nullptr || !n->is_table()) continue;
    const toml::node* dirs = n->as_table()->get("hooks_dir");
    if (dirs == nullptr) continue;
    const toml::array* arr = dirs->as_array();
    if (arr == nullptr || (!arr->empty() && !arr->is_homogeneous<std::string>())) {
      return MakeError(f.path + ": " + key + ": must be an array of strings");
    }
    out.dirs.clear();
    for (const auto& d : *arr) out.dirs.push_back(d.as_string()->get());
    out.source = f.path;
  }
  return out;
}

Result<bool> HasCapSysResource(const std::string& proc_status) {
  std::istringstream lines(proc_status);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with("CapEff:")) continue;
    std::string hex(Trim(std::string_view(line).substr(7)));
    if (hex.empty() || hex.size() > 16 ||
        !std::all_of(hex.begin(), hex.end(), [](unsigned char c) { return std::isxdigit(c); })) {
      return MakeError("CapEff: " + Quote(hex) + " is not a hex mask");
    }
    uint64_t mask = std::stoull(hex, nullptr, 16);
    return ((mask >> kCapSysResource) & 1U) != 0;
  }
  return MakeError("no CapEff line");
}

}  // namespace ocirlimit
