#include "node/node_loop.h"

#include <algorithm>
#include <optional>

#include "adapters/engines/chain.h"
#include "adapters/engines/constants.h"
#include "adapters/engines/nvidia.h"
#include "adapters/engines/systemd.h"
#include "effects/files.h"
#include "formats/text.h"
#include "node/rooted_node_ops.h"

namespace ocirlimit::node {
namespace {

// Whether node path `path` is the wrapper: by the name it resolves to (the
// node model's KindOf), or the same file as the wrapper (a hard link or
// copy under another name).
bool IsWrapper(NodeFiles& fs, const LoopQuery& q, const std::string& path) {
  if (engines::KindOf(fs, path) == engines::ProgramKind::kWrapper) return true;
  auto id = StatFollow(q.host + fs.Resolve(path).value_or(path));
  if (!id) return false;
  for (const std::string& w : {q.host + q.wrapper, q.source_wrapper}) {
    if (w.empty()) continue;
    if (auto wid = StatFollow(w); wid && *wid == *id) return true;
  }
  return false;
}

// The PATHs the engines give the wrapper, and so NVIDIA's runtime after it
// (the node model's: containerd's unit PATH; the installer's CRI-O handler
// sets no monitor_env, so conmon's default).
std::vector<std::string> EnginePaths(NodeFiles& fs, const LoopQuery& q) {
  std::vector<std::string> out;
  const bool crio = std::find(q.engines.begin(), q.engines.end(), "crio") != q.engines.end();
  if (!crio || std::find(q.engines.begin(), q.engines.end(), "containerd") != q.engines.end()) {
    out.push_back(engines::ServicePath(fs, std::string(engines::kContainerdUnit)));
  }
  if (crio) out.emplace_back(engines::kCrioMonitorPath);
  return out;
}

// NVIDIA's runtime execs the first of its config's runtimes (the config the
// node model says that runtime reads) found on the PATH.
Status CheckNvidiasConfig(NodeFiles& fs, const LoopQuery& q, const std::string& runtime,
                          const std::string& path_list) {
  auto config = engines::ReadNvidiaConfig(fs, runtime);
  if (!config) return config.error();
  const std::string conf = engines::NvidiaConfigPathFor(runtime);
  for (const auto& name : config->runtimes) {
    // An absolute entry may not exist yet (the wrapper before its install).
    std::optional<std::string> path = name.starts_with("/") && IsWrapper(fs, q, name)
                                          ? std::optional<std::string>(name)
                                          : fs.WhichIn(name, path_list);
    if (!path) continue;
    if (IsWrapper(fs, q, *path)) {
      return MakeError("NVIDIA's runtime " + Quote(runtime) + " would exec " + Quote(*path) +
                       " (its runtimes in " + conf + "), which is " +
                       std::string(engines::kWrapperName) + ": a loop");
    }
    break;
  }
  return Ok{};
}

}  // namespace

Status CheckNoLoop(const LoopQuery& q) {
  auto fs = RootedNodeOps(q.host.empty() ? "/" : q.host);
  for (size_t i = 0; i < q.runtimes.size(); ++i) {
    const std::string& r = q.runtimes[i];
    const std::string what =
        q.named && i == 0 ? "--nvidia-runtime: " + Quote(r) : "NVIDIA's runtime " + Quote(r);
    if (IsWrapper(*fs, q, r)) {
      return MakeError(what + " is " + std::string(engines::kWrapperName) +
                       " itself: the wrapper would exec itself");
    }
    if (!fs->WhichIn(r, "")) continue;  // not there (yet): nothing it could exec
    for (const auto& path_list : EnginePaths(*fs, q)) {
      if (auto st = CheckNvidiasConfig(*fs, q, r, path_list); !st) return st.error();
    }
  }
  return Ok{};
}

}  // namespace ocirlimit::node
