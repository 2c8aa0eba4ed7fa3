#include "cli/node_loop.h"

#include <optional>

#include "cli/node_config.h"
#include "core/text.h"
#include "effects/files.h"

namespace ocirlimit::node {
namespace {

constexpr size_t kMaxConfigBytes = 4 << 20;
// Where NVIDIA's runtime reads its config: the operator's toolkit, the packages.
constexpr const char* kNvidiaConfigs[] = {
    "/usr/local/nvidia/toolkit/.config/nvidia-container-runtime/config.toml",
    "/etc/nvidia-container-runtime/config.toml",
};
constexpr const char* kPath[] = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
                                 "/usr/bin",        "/sbin",          "/bin"};

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Whether node path `path` is the wrapper: its name, or the same file.
bool IsWrapper(const LoopQuery& q, const std::string& path) {
  if (Basename(path) == kRuntimeBinaryName) return true;
  auto id = StatFollow(q.host + path);
  if (!id) return false;
  for (const std::string& w : {q.host + q.wrapper, q.source_wrapper}) {
    if (w.empty()) continue;
    if (auto wid = StatFollow(w); wid && *wid == *id) return true;
  }
  return false;
}

// The node path `name` resolves to: itself when absolute, else on PATH.
std::optional<std::string> Resolve(const LoopQuery& q, const std::string& name) {
  if (name.starts_with("/")) {
    if (StatFollow(q.host + name)) return name;
    return std::nullopt;
  }
  for (const char* dir : kPath) {
    std::string p = std::string(dir) + "/" + name;
    if (StatFollow(q.host + p)) return p;
  }
  return std::nullopt;
}

// NVIDIA's runtime execs the first of its config's runtimes that resolves.
Status CheckNvidiasConfig(const LoopQuery& q, const std::string& runtime) {
  for (const char* conf : kNvidiaConfigs) {
    auto text = ReadFileBounded(q.host + conf, kMaxConfigBytes);
    if (!text) continue;
    auto low = NvidiaLowLevelRuntimes(*text, conf);
    if (!low) return low.error();
    for (const auto& name : *low) {
      // An absolute entry may not exist yet (the wrapper before its install).
      std::optional<std::string> path = name.starts_with("/") && IsWrapper(q, name)
                                            ? std::optional<std::string>(name)
                                            : Resolve(q, name);
      if (!path) continue;
      if (IsWrapper(q, *path)) {
        return MakeError("NVIDIA's runtime " + Quote(runtime) + " would exec " + Quote(*path) +
                         " (its runtimes in " + conf + "), which is " +
                         std::string(kRuntimeBinaryName) + ": a loop");
      }
      break;
    }
  }
  return Ok{};
}

}  // namespace

Status CheckNoLoop(const LoopQuery& q) {
  for (size_t i = 0; i < q.runtimes.size(); ++i) {
    const std::string& r = q.runtimes[i];
    const std::string what =
        q.named && i == 0 ? "--nvidia-runtime: " + Quote(r) : "NVIDIA's runtime " + Quote(r);
    if (IsWrapper(q, r)) {
      return MakeError(what + " is " + std::string(kRuntimeBinaryName) +
                       " itself: the wrapper would exec itself");
    }
    if (!StatFollow(q.host + r)) continue;
    if (auto st = CheckNvidiasConfig(q, r); !st) return st.error();
  }
  return Ok{};
}

}  // namespace ocirlimit::node
