#include "nri/flow.h"

#include <google/protobuf/stubs/logging.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/policy_digest.h"
#include "core/version.h"
#include "effects/config_loader.h"
#include "effects/config_watch.h"
#include "effects/decisions.h"
#include "effects/files.h"
#include "nri/args.h"
#include "nri/decision/runtime_peer.h"
#include "nri/heal.h"
#include "nri/metrics.h"
#include "nri/metrics/metrics_http.h"
#include "nri/metrics/metrics_server_linux.h"
#include "nri/plugin.h"
#include "nri/serve.h"
#include "nri/serve_linux.h"

namespace ocirlimit::nri {
namespace {

constexpr const char* kUsage =
    "usage: oci-rlimit-nri [--config PATH] [--socket PATH] [--name NAME] [--index NN]\n"
    "                      [--status-file PATH] [--metrics-address ADDR] [--node-name NAME]\n"
    "       oci-rlimit-nri --help | --version\n"
    "\n"
    "An NRI plugin: containerd (1.7 with NRI enabled, 2.x) and CRI-O call it for every\n"
    "container they create, and it answers with the rlimits oci-rlimit's policy gives\n"
    "that container, which the runtime writes into the spec's process.rlimits.\n"
    "\n"
    "  --config PATH  else $OCI_RLIMIT_CONFIG, else /etc/oci-rlimit/config.toml\n"
    "  --socket PATH  the runtime's NRI socket (default /var/run/nri/nri.sock)\n"
    "  --name NAME    plugin name (default oci-rlimit)\n"
    "  --index NN     two digits; plugins are called in ascending order (default 10)\n"
    "  --status-file PATH  its last (re)connect and heals, for doctor\n"
    "                 (default /run/oci-rlimit/nri.status)\n"
    "  --metrics-address ADDR  serve Prometheus metrics on GET /metrics at\n"
    "                 127.0.0.1:PORT, [::1]:PORT, :PORT (every IPv4 address) or\n"
    "                 unix:/PATH (default: off)\n"
    "  --node-name NAME  the `node` label of every metric (default $NODE_NAME,\n"
    "                 else the host name)\n"
    "\n"
    "Started by containerd from its plugin dir (/opt/nri/plugins/NN-oci-rlimit), it\n"
    "takes the socket, name and index from NRI_PLUGIN_SOCKET, NRI_PLUGIN_NAME and\n"
    "NRI_PLUGIN_IDX. SIGHUP reloads the config, and so does a change of its files\n"
    "(seen within 2 s: a ConfigMap kubelet updates); a bad one is refused, the old\n"
    "one stays. On exit it removes its status file. While no plugin is connected,\n"
    "the runtime creates containers unadjusted; at each (re)connect it heals the\n"
    "running containers' init processes that lack their limits (the runtime's\n"
    "Synchronize; it needs the host's PID namespace).\n"
    "\n"
    "Exit status: 0 on SIGTERM/SIGINT; 1 when a pre-registered connection ends;\n"
    "2 usage or config error (before connecting).\n";

// How often the config's files are looked at (a few stat calls).
constexpr int64_t kConfigWatchMs = 2000;

void Say(const std::string& msg) { std::cerr << "oci-rlimit-nri: " << msg << "\n"; }

// Loads `config` again from `where` (a bad one is refused and the old one
// stays); `why` names what asked: SIGHUP, or the watch that saw the files change.
void Reload(const ConfigPath& where, const EnvLookup& env, std::unique_ptr<Config>& config,
            Output& out, NriMetrics* metrics, const std::string& why) {
  std::vector<std::string> warnings;
  auto next = LoadConfigFrom(where, env, &warnings);
  for (const auto& w : warnings) out.Say("warning: " + w);
  if (metrics != nullptr) metrics->ConfigReloaded(next.ok());
  if (!next) {
    out.Say("reload refused, the old config stays in force: " + next.error().Text());
    return;
  }
  config = std::make_unique<Config>(std::move(*next));
  if (metrics != nullptr) metrics->SetPolicyDigest(PolicyDigest(*config));
  out.Say("config reloaded from " + where.path + " (" + why + ")");
}

// The signals that came: true to stop; SIGHUP reloads.
bool OnSignals(const ConfigPath& where, const EnvLookup& env, std::unique_ptr<Config>& config,
               Output& out, NriMetrics* metrics) {
  PendingSignals p = TakeSignals();
  if (p.stop) return true;
  if (p.reload) Reload(where, env, config, out, metrics, "SIGHUP");
  return false;
}

// This host's name (uname's nodename): the `node` label when neither
// --node-name nor NODE_NAME gives one.
std::string HostName() {
  struct utsname u {};
  return uname(&u) == 0 ? std::string(u.nodename) : "";
}

// On the way out (SIGTERM): the unix metrics socket bound, if it is still a
// socket, so no stale one is left for the next start or a scraper.
void RemoveMetricsSocket(const std::string& address) {
  auto addr = ParseMetricsAddress(address);
  if (address.empty() || !addr || addr->kind != MetricsAddress::Kind::kUnix) return;
  struct stat st {};
  if (lstat(addr->path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) unlink(addr->path.c_str());
}

// On the way out: the status file, if it is still a regular file, so doctor
// finds no stale one and an uninstall leaves nothing on the node.
void RemoveStatusFile(const std::string& path) {
  struct stat st {};
  if (!path.empty() && lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) unlink(path.c_str());
}

int64_t MonotonicMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Serves the runtime (the socket or the inherited connection of `args`)
// with `config` until stopped; the exit status of Serve.
int ServeWith(const NriArgs& args, const ConfigPath& where, const EnvLookup& env,
              std::unique_ptr<Config> config, ConfigWatch& watch, NriMetrics* metrics) {
  StderrOutput out;
  ServeOptions opt;
  opt.say = [&](const std::string& m) { out.Say(m); };
  // A container's line waits for its reply's fate: a reply not written, or
  // too late, is logged as not applied.
  opt.before_replies = [&] { out.HoldLogLines(); };
  opt.after_replies = [&](const ReplyFate& fate) {
    if (metrics != nullptr && (!fate.sent || fate.late))
      metrics->RepliesGivenUp(static_cast<uint64_t>(fate.answered), fate.sent);
    out.ReleaseLogLines(fate);
  };
  opt.on_signal = [&] { return OnSignals(where, env, config, out, metrics); };
  opt.on_tick = [&] {
    if (watch.Changed()) Reload(where, env, config, out, metrics, "its files changed");
  };
  if (metrics != nullptr) opt.on_disconnect = [metrics] { metrics->SetConnected(false); };
  const std::string name = args.name;
  const std::string index = args.index;
  std::unique_ptr<NriPlugin> plugin;
  const std::unique_ptr<HealOps> heal_ops = LinuxHealOps(args.status_file);
  Healer healer(*heal_ops);
  const std::unique_ptr<DecisionStore> decisions =
      LinuxDecisionStore(LinuxFsOps(), DecisionsDir(env(kDecisionsDirEnv)));
  healer.SetDecisions(decisions.get());
  std::optional<RuntimeLimits> runtime;
  opt.on_connect = [&runtime](const Conn& conn) {
    const auto peer = conn.Peer();
    runtime = peer ? ReadRuntimeLimits(peer->pid, peer->uid) : std::nullopt;
  };
  opt.new_session = [&] {
    plugin = std::make_unique<NriPlugin>([&]() -> const Config& { return *config; }, out,
                                         Rfc3339Now, &healer, metrics);
    plugin->SetRuntime(runtime);
    plugin->SetDecisions(decisions.get());
    return std::make_unique<Session>(*plugin, NriPlugin::RegisterPayload(name, index));
  };
  std::unique_ptr<Connector> connector;
  if (args.socket_fd) {
    opt.reconnect = false;
    connector = InheritedConnector(*args.socket_fd);
  } else {
    connector = UnixConnector(args.socket);
  }
  out.Say(std::string("starting as ") + index + "-" + name +
          (args.socket_fd ? " (pre-registered, fd " + std::to_string(*args.socket_fd) + ")"
                          : " on " + args.socket));
  return Serve(*connector, opt);
}

}  // namespace

int RunNriPlugin(const std::vector<std::string>& arguments) {
  const EnvLookup env = ProcessEnv();
  auto args = ParseNriArgs(arguments, env);
  if (!args) {
    Say(args.error().Text());
    return 2;
  }
  if (args->mode == NriMode::kHelp) {
    std::cout << kUsage;
    return 0;
  }
  if (args->mode == NriMode::kVersion) {
    std::cout << "oci-rlimit-nri " << kVersion << "\n";
    return 0;
  }
  const ConfigPath where = ResolveConfigPath(args->config, env);
  // Seen before the load: a change while loading is a change still to read.
  ConfigWatch watch([path = where.path] { return ConfigFilesSnapshot(path); }, MonotonicMs,
                    kConfigWatchMs);
  std::vector<std::string> load_warnings;
  auto loaded = LoadConfigFrom(where, env, &load_warnings);
  if (!loaded) {
    Say(loaded.error().Text());
    return 2;
  }
  for (const auto& w : load_warnings) Say("warning: " + w);
  auto config = std::make_unique<Config>(std::move(*loaded));
  // A message protobuf refuses (invalid UTF-8 a pod author put in an
  // annotation) is answered as undecodable; protobuf's own log line about it
  // would only be noise on stderr.
  google::protobuf::SetLogHandler(nullptr);
  if (auto st = InstallSignals(); !st) {
    Say(st.error().Text());
    return 1;
  }
  NriMetrics metrics(UnixNow);
  metrics.SetNode(args->node_name.empty() ? HostName() : args->node_name);
  metrics.SetPolicyDigest(PolicyDigest(*config));
  std::unique_ptr<MetricsServer> server;
  if (!args->metrics_address.empty()) {
    auto addr = ParseMetricsAddress(args->metrics_address);
    auto started = addr ? StartMetricsServer(
                              *addr, [&metrics] { return metrics.Text(); },
                              [&metrics] { return metrics.Connected(); })
                        : Result<std::unique_ptr<MetricsServer>>(addr.error());
    if (!started) {
      Say(started.error().Text());
      return 2;
    }
    server = std::move(*started);
    Say("serving metrics on " + args->metrics_address + "/metrics");
  }
  const int rc =
      ServeWith(*args, where, env, std::move(config), watch, server ? &metrics : nullptr);
  server.reset();
  RemoveMetricsSocket(args->metrics_address);
  RemoveStatusFile(args->status_file);
  return rc;
}

}  // namespace ocirlimit::nri
