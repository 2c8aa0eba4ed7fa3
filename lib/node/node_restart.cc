#include "node/node_restart.h"

#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "adapters/engines/constants.h"
#include "formats/text.h"
#include "node/rooted_node_ops.h"

namespace ocirlimit::node {
namespace {

// /proc/stat's btime: the boot's epoch seconds, or -1.
int64_t BootTime(NodeOps& ops) {
  auto text = ops.ReadFile("/proc/stat");
  if (!text) return -1;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.starts_with("btime ")) return std::atoll(line.c_str() + 6);
  }
  return -1;
}

// /proc/PID/stat's starttime (field 22) in epoch seconds, or -1.
int64_t StartTime(NodeOps& ops, int pid, int64_t boot) {
  auto stat = ops.ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat || boot < 0) return -1;
  const size_t close = stat->rfind(')');
  if (close == std::string::npos || close + 2 > stat->size()) return -1;
  std::istringstream fields(stat->substr(close + 2));
  std::string f;
  for (int i = 3; i < 22 && fields >> f; ++i) {
  }
  long long ticks = 0;
  if (!(fields >> ticks)) return -1;
  return boot + ticks / sysconf(_SC_CLK_TCK);
}

// A containerd started with another config file than the node's.
bool OtherConfig(const std::vector<std::string>& argv) {
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if ((argv[i] == "--config" || argv[i] == "-c") && argv[i + 1] != engines::kContainerdConfig)
      return true;
  }
  return std::any_of(argv.begin(), argv.end(), [](const std::string& a) {
    return a.starts_with("--config=") && a.substr(9) != engines::kContainerdConfig;
  });
}

}  // namespace

std::vector<PendingRestart> ParsePending(std::string_view text) {
  std::vector<PendingRestart> out;
  std::istringstream lines{std::string(text)};
  PendingRestart p;
  while (lines >> p.engine >> p.since) out.push_back(p);
  return out;
}

std::string RenderPending(const std::vector<PendingRestart>& pending) {
  std::string out;
  for (const auto& p : pending) out += p.engine + " " + std::to_string(p.since) + "\n";
  return out;
}

std::vector<int64_t> EngineStartTimes(NodeOps& ops, const std::string& engine) {
  const int64_t boot = BootTime(ops);
  std::vector<int64_t> out;
  for (const auto& p : ops.ProcessesNamed(engine)) {
    if (!ServesNode(p)) continue;  // a user's, or one in a container or a pod
    if (engine == "containerd" && OtherConfig(p.argv)) continue;
    out.push_back(StartTime(ops, p.pid, boot));
  }
  return out;
}

std::vector<int64_t> EngineStartTimes(const std::string& host, const std::string& engine) {
  auto ops = RootedNodeOps(host.empty() ? "/" : host);
  return EngineStartTimes(*ops, engine);
}

std::vector<PendingRestart> StillPending(const std::string& host,
                                         std::vector<PendingRestart> pending,
                                         const std::vector<std::string>& changed, int64_t now) {
  for (const auto& e : changed) {
    auto it = std::find_if(pending.begin(), pending.end(),
                           [&](const PendingRestart& p) { return p.engine == e; });
    if (it == pending.end()) {
      pending.push_back({e, now});
    } else {
      it->since = now;
    }
  }
  // Done: every process of the engine started after the write. With none to
  // see, this run's own restart is still asked for (the node's /proc may not
  // show it); an earlier one is taken as done (the engine reads the config
  // when it starts).
  std::erase_if(pending, [&](const PendingRestart& p) {
    const std::vector<int64_t> starts = EngineStartTimes(host, p.engine);
    if (starts.empty()) return std::find(changed.begin(), changed.end(), p.engine) == changed.end();
    return std::all_of(starts.begin(), starts.end(), [&](int64_t s) { return s >= p.since; });
  });
  return pending;
}

}  // namespace ocirlimit::node
