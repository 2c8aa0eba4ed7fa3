// `oci-rlimit node uninstall` (node_install.h): the handlers first, then the
// files, keeping the wrapper while containers created through it remain.
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "adapters/oci/runtime_state.h"
#include "cli/node_config.h"
#include "cli/node_install.h"
#include "cli/node_live.h"
#include "cli/node_record.h"
#include "core/text.h"
#include "effects/files.h"

namespace ocirlimit::node {
namespace {

constexpr size_t kMaxConfigBytes = 4 << 20;

struct Removal {
  std::vector<std::string> restart;
  std::vector<std::string> roots;
};

// containerd's handler out of its config; its runc roots into `r`.
Status RemoveContainerdHandler(const NodeRecord& rec, Removal* r, std::ostream& out) {
  const std::string path(kContainerdConfig);
  const std::string full = rec.host() + path;
  auto text = ReadFileBounded(full, kMaxConfigBytes);
  if (!text) return text.error().err == ENOENT ? Status(Ok{}) : Status(text.error());
  auto roots = WrapperRoots(*text, path, "oci-rlimit");
  if (!roots) return roots.error();
  for (const auto& root : *roots) {
    if (!root.empty()) r->roots.push_back(root);
  }
  auto edit = UninstallHandler(*text, path, "oci-rlimit", rec.mode().ctd_added_default);
  if (!edit) return edit.error();
  if (rec.Recorded("ctdcreated", path) && edit->only_version) {
    if (unlink(full.c_str()) != 0) return MakeError("remove " + Quote(full), errno);
    out << "removed " << path << "\n";
    r->restart.emplace_back("containerd");
  } else if (edit->changed) {
    if (auto st = AtomicWriteFile(full, edit->text); !st) return st;
    out << "wrote " << path << " (handler oci-rlimit removed)\n";
    r->restart.emplace_back("containerd");
  }
  return Ok{};
}

// The CRI-O handler's drop-in, before anything else of ours goes.
Status RemoveCrioHandler(const NodeRecord& rec, Removal* r, std::ostream& out) {
  const std::string path(kCrioHandler);
  if (!rec.Recorded("created", path)) return Ok{};
  if (unlink((rec.host() + path).c_str()) != 0 && errno != ENOENT) {
    return MakeError("remove " + Quote(rec.host() + path), errno);
  }
  out << "removed " << path << "\n";
  r->restart.emplace_back("crio");
  return Ok{};
}

std::string Joined(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Removes the recorded files and directories, newest first, but `keep`;
// returns the manifest that is left.
std::vector<ManifestEntry> RemoveFiles(const NodeRecord& rec, const std::vector<std::string>& keep,
                                       std::ostream& err) {
  std::vector<ManifestEntry> left;
  const auto& e = rec.entries();
  for (auto it = e.rbegin(); it != e.rend(); ++it) {
    const std::string full = rec.host() + it->path;
    bool kept = false;
    if (it->kind == "created") {
      kept = std::find(keep.begin(), keep.end(), it->path) != keep.end();
      if (!kept) unlink(full.c_str());
    } else if (it->kind == "dir") {
      kept = rmdir(full.c_str()) != 0 && errno != ENOENT;
      if (kept && keep.empty()) err << "oci-rlimit node: kept " << it->path << ": not empty\n";
    } else if (it->kind == "statedir") {
      kept = true;
    }
    if (kept) left.insert(left.begin(), *it);
  }
  return left;
}

}  // namespace

int RunUninstall(const UninstallArgs& a, std::ostream& out, std::ostream& err) {
  auto rec = NodeRecord::Load(a.host);
  if (!rec) {
    err << "oci-rlimit node: " << rec.error().Text() << "\n";
    return 1;
  }
  if (!rec->installed()) {
    out << "nothing installed under " << (a.host.empty() ? "/" : a.host) << "\n";
    return 0;
  }
  Removal r;
  if (auto st = RemoveContainerdHandler(*rec, &r, out); !st) {
    err << "oci-rlimit node: " << st.error().Text() << ", nothing removed\n";
    return 1;
  }
  if (auto st = RemoveCrioHandler(*rec, &r, out); !st) {
    err << "oci-rlimit node: " << st.error().Text() << "\n";
    return 1;
  }
  const std::string prefix = rec->mode().prefix.empty() ? "/usr/local" : rec->mode().prefix;
  // The roots an earlier, partial uninstall read from the handler it removed.
  for (const auto& e : rec->entries()) {
    if (e.kind == "root") r.roots.push_back(e.path);
  }
  LiveQuery q{a.host, r.roots, prefix + "/bin/" + std::string(kRuntimeBinaryName), {"oci-rlimit"}};
  // Where runc and crun keep state when nobody passes --root (containerd's
  // runc shim, CRI-O's handlers without runtime_root), as audit looks.
  const auto& defaults = DefaultStateRoots();
  q.roots.insert(q.roots.end(), defaults.begin(), defaults.end());
  std::vector<std::string> ids;
  for (const auto& c : ContainersThroughWrapper(q)) ids.push_back(c.id);
  std::vector<std::string> keep;
  if (!ids.empty() && !a.force) keep = {q.wrapper, std::string(kDropin)};
  std::vector<ManifestEntry> left = RemoveFiles(*rec, keep, err);
  if (!keep.empty()) {
    for (const auto& root : r.roots) {
      ManifestEntry e{"root", root};
      if (std::find(left.begin(), left.end(), e) == left.end()) left.push_back(e);
    }
  }
  if (auto st = rec->Rewrite(left); !st) {
    err << "oci-rlimit node: " << st.error().Text() << "\n";
    return 1;
  }
  out << "plan restart=" << Joined(r.restart, " ") << "\n";
  if (!keep.empty()) {
    err << "oci-rlimit node: kept " << q.wrapper << " and " << kDropin << ": " << ids.size()
        << " container(s) created through it still exist (" << Joined(ids, ", ")
        << "), and stopping, exec and removing them run it; drain them (docs/deployment.md), "
           "then run --uninstall again, or pass --force\n";
    return 3;
  }
  if (!ids.empty()) {
    err << "oci-rlimit node: --force: removed " << q.wrapper << " while " << ids.size()
        << " container(s) created through it still exist (" << Joined(ids, ", ") << ")\n";
  }
  out << "uninstalled from " << (a.host.empty() ? "/" : a.host) << "\n";
  return 0;
}

}  // namespace ocirlimit::node
