// What the running engine serves, beside what its files say: an engine that
// started before its config last changed still serves the handlers it read
// then. Told by the engine's start time against the files' and directories'
// mtimes (a file removed from a .d directory changes the directory), so it
// needs no record: after an uninstall the record is gone while crio still
// serves the removed handler. And the running pods of a handler that fails.
#include <ctime>

#include "adapters/engines/crio.h"
#include "adapters/oci/runtime_state.h"
#include "cli/doctor/doctor_context.h"
#include "effects/fs_ops.h"
#include "formats/text.h"
#include "node/node_crio_pods.h"
#include "node/node_live.h"
#include "node/node_restart.h"

namespace ocirlimit::doctor {
namespace {

std::string Utc(int64_t t) {
  const auto secs = static_cast<time_t>(t);
  tm parts{};
  char buf[32];
  if (gmtime_r(&secs, &parts) == nullptr ||
      strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &parts) == 0) {
    return std::to_string(t);
  }
  return buf;
}

std::vector<int64_t> Starts(Context& c, const std::string& engine) {
  if (c.options().engine_starts) return c.options().engine_starts(engine);
  if (c.options().rooted) return {};  // a copy's engine is not running
  return node::EngineStartTimes(c.ops(), engine);
}

// The real lookup: CRI-O's storage for its pods of the handler, or the
// runtimes' state for containers through the wrapper (containerd).
std::vector<std::string> NodePods(Context& c, const std::string& area, const Handler& h,
                                  const engines::Chain& ch) {
  if (c.options().handler_pods) return c.options().handler_pods(area, h.name);
  if (c.options().rooted) return {};
  std::vector<std::string> out;
  if (area == "CRI-O") {
    auto cfg = engines::ParseCrioConfigs(engines::CrioConfigFiles(c.ops()));
    const std::string root = cfg ? cfg->storage_root : std::string(engines::kCrioStorageRoot);
    for (const auto& p : node::CrioHandlerPods(LinuxFsOps(), "", root, {h.name})) {
      out.push_back(node::CrioPodList({p}));
    }
    return out;
  }
  for (const auto& step : ch.steps) {
    if (step.kind != engines::ProgramKind::kWrapper) continue;
    for (const auto& live :
         node::ContainersThroughWrapper({"", DefaultStateRoots(), step.path, {}})) {
      out.push_back(TableCell(live.id));
    }
    break;
  }
  return out;
}

}  // namespace

void CheckEngineReadsItsConfig(Context& c, const std::string& area, const std::string& engine,
                               const std::string& file, const std::string& dir) {
  if (RestartPendingSince(c, engine)) return;  // the installer's record says it already
  std::vector<std::string> paths = {file, dir};
  for (const auto& name : c.ops().ListDir(dir)) paths.push_back(Cat(dir, "/", name));
  std::optional<int64_t> newest;
  std::string newest_path;
  for (const auto& p : paths) {
    auto m = c.ops().ModifiedAt(p);
    if (m && (!newest || *m > *newest)) {
      newest = m;
      newest_path = p;
    }
  }
  if (!newest) return;
  for (int64_t start : Starts(c, engine)) {
    if (start < 0 || start >= *newest) continue;
    c.Add(
        area, CheckStatus::kFail,
        Cat(engine, " started at ", Utc(start), ", before its config last changed (", Utc(*newest),
            "): until it restarts it serves the handlers it read then, so a "
            "handler removed since (as by oci-rlimit's uninstall) still takes pods, which fail, "
            "and one added since takes none; the checks below read the files, not what it runs"),
        newest_path, Cat("systemctl restart ", engine));
    return;
  }
}

std::string RunningPodsAdvice(Context& c, const std::string& area, const Handler& h,
                              const engines::Chain& ch) {
  const std::vector<std::string> pods = NodePods(c, area, h, ch);
  if (pods.empty()) return "";
  std::string list;
  for (const auto& p : pods) list += (list.empty() ? "" : ", ") + p;
  return Cat("; ", std::to_string(pods.size()), " still run (", list, ")",
             ch.wrapper ? ": oci-rlimit-runtime stops and removes them through runc or crun, "
                          "so drain them (kubectl delete pod), or put the missing runtime back "
                          "(or rerun oci-rlimit node install --no-nvidia) to exec into them"
                        : ": put the missing runtime back to stop, exec into and remove them");
}

}  // namespace ocirlimit::doctor
