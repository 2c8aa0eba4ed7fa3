#include "node/node_live.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>

#include "adapters/oci/runtime_state.h"
#include "adapters/oci/spec.h"
#include "effects/container_proof.h"
#include "effects/fs_ops.h"
#include "formats/text.h"

namespace ocirlimit::node {
namespace {
namespace fs = std::filesystem;

// CRI-O's annotation naming the handler a container was created for.
constexpr const char* kCrioHandlerAnnotation = "io.kubernetes.cri-o.RuntimeHandler";

// A file of a bundle root's state names, read only as root wrote it: never
// a FIFO, a device or a symlink, never a file a user could write.
std::optional<std::string> Read(const std::string& host, const std::string& bundle,
                                const char* name) {
  auto text = LinuxFsOps().ReadTrusted(host + bundle, {name}, 0, kMaxRuntimeStateBytes);
  if (!text) return std::nullopt;
  return std::move(text->text);
}

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Whether the container whose bundle is `bundle` (a node path) went through
// the wrapper.
bool Ours(const LiveQuery& q, const std::string& bundle) {
  if (auto runtime = Read(q.host, bundle, "runtime")) {
    std::string bin(Trim(*runtime));
    return bin == q.wrapper || Basename(bin) == Basename(q.wrapper);
  }
  auto config = Read(q.host, bundle, "config.json");
  if (!config) return false;
  auto spec = ParseJsonObject(*config, "config.json");
  if (!spec || !spec->contains("annotations") || !(*spec)["annotations"].is_object()) return false;
  const Json& a = (*spec)["annotations"];
  if (!a.contains(kCrioHandlerAnnotation) || !a[kCrioHandlerAnnotation].is_string()) return false;
  const std::string handler = a[kCrioHandlerAnnotation].get<std::string>();
  return std::find(q.crio_handlers.begin(), q.crio_handlers.end(), handler) !=
         q.crio_handlers.end();
}

// The bundle of the container in directory ROOT/DIRS... (host paths), when
// its runtime state is root's (the state root's one owner owns all of it:
// ReadTrusted). A user's state proves nothing to root (Distrust): it is
// neither followed nor counted, whatever it names.
std::optional<std::string> BundleIn(const std::string& root, const std::vector<std::string>& dirs) {
  for (std::string_view name : {kRuncStateFile, kCrunStateFile}) {
    std::vector<std::string> path = dirs;
    path.emplace_back(name);
    auto read = LinuxFsOps().ReadTrusted(root, path, std::nullopt, kMaxRuntimeStateBytes);
    if (!read) continue;
    if (Distrust(InitRecord{read->owner, std::nullopt, ""}, geteuid())) return std::nullopt;
    return RecordedBundle(read->text);
  }
  return std::nullopt;
}

std::vector<std::string> Subdirs(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) out.push_back(it->path().filename());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The node paths `pattern` names under `host`: a "*" component stands for
// every subdirectory there (DefaultStateRoots' patterns).
std::vector<std::string> Expand(const std::string& host, const std::string& pattern) {
  std::vector<std::string> done = {""};
  size_t pos = 1;
  while (pos <= pattern.size()) {
    size_t slash = pattern.find('/', pos);
    if (slash == std::string::npos) slash = pattern.size();
    const std::string part = pattern.substr(pos, slash - pos);
    pos = slash + 1;
    if (part.empty()) continue;
    std::vector<std::string> next;
    for (const auto& d : done) {
      if (part != "*") {
        next.push_back(Cat(d, "/", part));
        continue;
      }
      for (const auto& sub : Subdirs(host + (d.empty() ? "/" : d)))
        next.push_back(Cat(d, "/", sub));
    }
    done = std::move(next);
  }
  return done;
}

}  // namespace

std::vector<LiveContainer> ContainersThroughWrapper(const LiveQuery& q) {
  std::vector<std::string> roots;
  for (const auto& pattern : q.roots) {
    for (auto& r : Expand(q.host, pattern)) roots.push_back(std::move(r));
  }
  std::vector<LiveContainer> out;
  std::vector<std::string> seen_roots;
  for (const auto& root : roots) {
    if (std::find(seen_roots.begin(), seen_roots.end(), root) != seen_roots.end()) continue;
    seen_roots.push_back(root);
    for (const auto& entry : Subdirs(q.host + root)) {
      const std::string dir = Cat(root, "/", entry);
      if (auto bundle = BundleIn(q.host + root, {entry})) {
        if (Ours(q, *bundle)) out.push_back({entry, root});
        continue;
      }
      // A namespace directory (containerd's runc shim: ROOT/NAMESPACE/ID).
      for (const auto& id : Subdirs(q.host + dir)) {
        auto bundle2 = BundleIn(q.host + root, {entry, id});
        if (bundle2 && Ours(q, *bundle2)) out.push_back({id, dir});
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const LiveContainer& a, const LiveContainer& b) { return a.id < b.id; });
  return out;
}

}  // namespace ocirlimit::node
