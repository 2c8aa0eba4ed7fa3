// `oci-rlimit node uninstall` (node_install.h): the handlers first (a version 3
// containerd handler stays while its pods run: containerd 2.x execs through it), then the
// files, keeping the wrapper while containers created through it remain.
#include <algorithm>
#include <cerrno>

#include "adapters/engines/crio.h"
#include "adapters/oci/runtime_state.h"
#include "formats/text.h"
#include "node/node_config.h"
#include "node/node_crio_pods.h"
#include "node/node_ctd_plan.h"
#include "node/node_install.h"
#include "node/node_live.h"
#include "node/node_preflight.h"
#include "node/node_record.h"
#include "node/rooted_node_ops.h"

namespace ocirlimit::node {
namespace {

constexpr size_t kMaxConfigBytes = 4 << 20;

struct Removal {
  std::vector<std::string> restart;
  std::vector<std::string> roots;
  bool kept_handler = false;            // containerd's handler stayed for its running pods
  std::vector<std::string> kept_files;  // our containerd drop-in, kept with the handler
  std::string copy_in;             // a file containerd still reads our handler from (NVIDIA's copy)
  std::vector<CrioPod> crio_pods;  // CRI-O's pods of handler oci-rlimit (node_crio_pods.h)
};

bool IsOurDropin(const ManifestEntry& e) {
  return e.kind == "created" && e.path.starts_with("/etc/containerd/") &&
         e.path.ends_with("/" + std::string(kContainerdDropinName));
}

// Our containerd drop-in (node_ctd_plan.h), unless kept for running pods.
Status RemoveContainerdDropin(const NodeRecord& rec, bool keep, Removal* r, std::ostream& out) {
  for (const auto& e : rec.entries()) {
    if (!IsOurDropin(e)) continue;
    if (keep) {
      r->kept_files.push_back(e.path);
      r->kept_handler = true;
      out << "kept " << e.path
          << " (version 3: containerd 2.x needs its handler to exec into the pods that still "
             "use it)\n";
      continue;
    }
    if (int rc = rec.fs().Unlink(rec.host() + e.path); rc != 0 && rc != ENOENT) {
      return MakeError("remove " + Quote(rec.host() + e.path), rc);
    }
    out << "removed " << e.path << "\n";
    r->restart.emplace_back("containerd");
  }
  return Ok{};
}

// The version our containerd drop-in holds (0 when there is none).
int64_t DropinVersion(const NodeRecord& rec) {
  for (const auto& e : rec.entries()) {
    if (!IsOurDropin(e)) continue;
    auto text = rec.fs().Read(rec.host() + e.path, kMaxConfigBytes);
    if (text && text->starts_with("version = 3")) return 3;
    if (text) return 2;
  }
  return 0;
}

// After the removal, containerd must read no handler oci-rlimit that runs the
// wrapper: NVIDIA's toolkit copies every handler into its drop-in.
Status CheckContainerdForgets(const NodeRecord& rec, Removal* r) {
  if (r->kept_handler) return Ok{};
  auto fs = RootedNodeOps(rec.host().empty() ? "/" : rec.host());
  auto source = WrapperHandlerSource(*fs, NodeContainerdMajor(rec.host()), "oci-rlimit");
  if (!source) return source.error();
  r->copy_in = *source;
  return Ok{};
}

// The runc roots containerd's handler `oci-rlimit` passes, into `r`.
Status ReadContainerdRoots(const NodeRecord& rec, Removal* r) {
  const std::string path(kContainerdConfig);
  auto text = rec.fs().Read(rec.host() + path, kMaxConfigBytes);
  if (!text) return text.error().err == ENOENT ? Status(Ok{}) : Status(text.error());
  auto roots = WrapperRoots(*text, path, "oci-rlimit");
  if (!roots) return roots.error();
  for (const auto& root : *roots) {
    if (!root.empty()) r->roots.push_back(root);
  }
  return Ok{};
}

// containerd's handler out of its config. With `live` (containers created
// through the wrapper still exist, and no --force) a version 3 config keeps
// it: containerd 2.x looks a pod's runtime up by its handler's name for exec,
// so a removed handler strands exec into those pods after a restart (1.6 and
// 1.7 keep what they need in the sandbox's own record).
Status RemoveContainerdHandler(const NodeRecord& rec, bool live, Removal* r, std::ostream& out) {
  if (r->kept_handler) return Ok{};  // our drop-in stayed for running pods
  const std::string path(kContainerdConfig);
  const std::string full = rec.host() + path;
  auto text = rec.fs().Read(full, kMaxConfigBytes);
  if (!text) return text.error().err == ENOENT ? Status(Ok{}) : Status(text.error());
  auto edit = UninstallHandler(*text, path, "oci-rlimit", rec.mode().ctd_added_default);
  if (!edit) return edit.error();
  if (live && edit->changed && edit->version >= 3) {
    r->kept_handler = true;
    out << "kept handler oci-rlimit in " << path
        << " (version 3: containerd 2.x needs it to exec into the pods that still use it)\n";
    return Ok{};
  }
  if (rec.Recorded("ctdcreated", path) && edit->only_version) {
    if (int e = rec.fs().Unlink(full); e != 0) return MakeError("remove " + Quote(full), e);
    out << "removed " << path << "\n";
    r->restart.emplace_back("containerd");
  } else if (edit->changed) {
    if (auto st = rec.fs().Replace(full, edit->text); !st) return st;
    out << "wrote " << path << " (handler oci-rlimit removed)\n";
    r->restart.emplace_back("containerd");
  }
  return Ok{};
}

// The CRI-O handler's drop-in, before anything else of ours goes; kept while
// CRI-O's pods of the handler remain (`keep`): crio stops, execs into and
// removes them through the handler it looks up by name.
Status RemoveCrioHandler(const NodeRecord& rec, bool keep, Removal* r, std::ostream& out) {
  for (std::string_view p : {kCrioHandler, kOldCrioHandler}) {
    const std::string path(p);
    if (!rec.Recorded("created", path)) continue;
    if (keep) {
      r->kept_files.push_back(path);
      out << "kept " << path << " (CRI-O needs handler oci-rlimit for the pods that use it)\n";
      continue;
    }
    if (int e = rec.fs().Unlink(rec.host() + path); e != 0) {
      if (e == ENOENT) continue;
      return MakeError("remove " + Quote(rec.host() + path), e);
    }
    out << "removed " << path << "\n";
    r->restart.emplace_back("crio");
  }
  return Ok{};
}

// Container ids as audit's table shows them (TableCell): a directory name
// with a newline cannot forge a line of the message.
std::vector<std::string> Cells(const std::vector<std::string>& ids) {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (const auto& id : ids) out.push_back(TableCell(id));
  return out;
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
      if (!kept) rec.fs().Unlink(full);
    } else if (it->kind == "dir") {
      const int e = rec.fs().Rmdir(full);
      kept = e != 0 && e != ENOENT;
      if (kept && keep.empty()) err << "oci-rlimit node: kept " << it->path << ": not empty\n";
    } else if (it->kind == "statedir") {
      kept = true;
    }
    if (kept) left.insert(left.begin(), *it);
  }
  return left;
}

// The containers created through the wrapper that still exist (their IDs),
// and the wrapper's path.
std::vector<std::string> LiveIds(const NodeRecord& rec, const UninstallArgs& a, Removal* r,
                                 std::string* wrapper) {
  // The roots an earlier, partial uninstall read from the handler it removed.
  for (const auto& e : rec.entries()) {
    if (e.kind == "root") r->roots.push_back(e.path);
  }
  const std::string prefix = rec.mode().prefix.empty() ? "/usr/local" : rec.mode().prefix;
  LiveQuery q{a.host, r->roots, prefix + "/bin/" + std::string(kRuntimeBinaryName), {"oci-rlimit"}};
  // Where runc and crun keep state when nobody passes --root (containerd's
  // runc shim, CRI-O's handlers without runtime_root), as audit looks.
  const auto& defaults = DefaultStateRoots();
  q.roots.insert(q.roots.end(), defaults.begin(), defaults.end());
  std::vector<std::string> ids;
  for (const auto& c : ContainersThroughWrapper(q)) ids.push_back(c.id);
  *wrapper = q.wrapper;
  return ids;
}

// CRI-O's pods of handler oci-rlimit, from its storage where its config puts it.
std::vector<CrioPod> CrioPodsOf(const std::string& host) {
  auto fs = RootedNodeOps(host.empty() ? "/" : host);
  auto cfg = engines::ParseCrioConfigs(engines::CrioConfigFiles(*fs));
  const std::string root = cfg ? cfg->storage_root : std::string(engines::kCrioStorageRoot);
  return CrioHandlerPods(LinuxFsOps(), host, root, {"oci-rlimit"});
}

// The engines' handlers go first (nothing else is removed when one cannot),
// then containerd must read none that runs the wrapper.
Status RemoveHandlers(const NodeRecord& rec, bool live, Removal* r, std::ostream& out) {
  if (auto st = RemoveContainerdDropin(rec, live && DropinVersion(rec) >= 3, r, out); !st) {
    return MakeError(st.error().Text() + ", nothing removed");
  }
  if (auto st = RemoveContainerdHandler(rec, live, r, out); !st) {
    return MakeError(st.error().Text() + ", nothing removed");
  }
  if (auto st = CheckContainerdForgets(rec, r); !st) return st;
  return RemoveCrioHandler(rec, live && !r->crio_pods.empty(), r, out);
}

// Which engines still serve what this run removed: the engine's own memory
// outlives the record, which is gone after a full uninstall.
void SayRestarts(const std::vector<std::string>& engines, std::ostream& out) {
  for (const auto& e : engines) {
    out << e << " must restart: until then it still serves the removed handler oci-rlimit, "
        << "whose new pods fail (systemctl restart " << e << ")\n";
  }
}

// What stays for whom, on stderr; the exit status (0: nothing kept).
int Kept(const Removal& r, bool live, const std::string& wrapper,
         const std::vector<std::string>& ids, std::ostream& err) {
  if (!r.copy_in.empty()) {
    err << "oci-rlimit node: kept " << wrapper << ": containerd still reads handler "
        << "\"oci-rlimit\" from " << r.copy_in
        << " (a copy another tool made, as NVIDIA's toolkit does); remove the handler there "
           "by hand, then run --uninstall again. The GPU Operator's toolkit pod rebuilds that file "
           "from `containerd config dump` at each start, copying the handler back unless it was "
           "stopped gracefully (SIGTERM deletes the file): stop it first. On a node set up with "
           "nvidia-ctk alone nothing rebuilds it: delete the file, run --uninstall, then "
           "`nvidia-ctk runtime configure --runtime=containerd` and restart containerd to write "
           "NVIDIA's again\n";
    return 1;
  }
  if (live && !r.crio_pods.empty()) {
    err << "oci-rlimit node: kept " << wrapper << " and " << kDropin << " and " << kCrioHandler
        << ": " << r.crio_pods.size() << " CRI-O pod(s) of handler oci-rlimit still exist ("
        << CrioPodList(r.crio_pods)
        << "), and crio stops, execs into and removes them through that handler; delete them "
           "(kubectl delete pod, or drain the node), then run the same --uninstall again: "
           "everything else it installed stays until then\n";
    return 3;
  }
  if (live) {
    err << "oci-rlimit node: kept " << wrapper << " and " << kDropin
        << (r.kept_handler ? std::string(" and containerd's handler oci-rlimit") : std::string())
        << ": " << ids.size() << " container(s) created through it still exist ("
        << Joined(Cells(ids), ", ")
        << "), and stopping, exec and removing them run it; everything else it installed "
           "stays too: drain them (docs/deployment.md), then run the same --uninstall again, or "
           "pass --force\n";
    return 3;
  }
  if (!ids.empty()) {
    err << "oci-rlimit node: --force: removed " << wrapper << " while " << ids.size()
        << " container(s) created through it still exist (" << Joined(Cells(ids), ", ") << ")\n";
  }
  return 0;
}

// The files that stay: the handler's, kept for its pods; the wrapper and its
// drop-in while anything needs them; with `live` (refused) every file, so the
// same command (the CLI, the record) finishes it later.
std::vector<std::string> KeptFiles(const NodeRecord& rec, const Removal& r, bool live,
                                   const std::string& wrapper) {
  std::vector<std::string> keep = r.kept_files;
  if (live) {
    for (const auto& e : rec.entries()) {
      if (e.kind == "created") keep.push_back(e.path);
    }
  }
  if (live || !r.copy_in.empty()) {
    keep.push_back(wrapper);
    keep.emplace_back(kDropin);
    keep.emplace_back(kNodeConfig);  // placed by --policy: the wrapper reads it too
  }
  return keep;
}

}  // namespace

int RunUninstall(const UninstallArgs& a, std::ostream& out, std::ostream& err) {
  return RunUninstall(LinuxHostFs(), a, out, err);
}

int RunUninstall(HostFs& fs, const UninstallArgs& a, std::ostream& out, std::ostream& err) {
  auto rec = NodeRecord::Load(fs, a.host);
  if (!rec) {
    err << "oci-rlimit node: " << rec.error().Text() << "\n";
    return 1;
  }
  if (!rec->installed()) {
    out << "nothing installed under " << (a.host.empty() ? "/" : a.host) << "\n";
    return 0;
  }
  std::vector<std::string> written = {std::string(kContainerdConfig),
                                      std::string(kStateDir) + "/manifest"};
  for (const auto& e : rec->entries()) written.push_back(e.path);
  RemoveLeftoverTemps(fs, a.host, written, out);
  Removal r;
  if (auto st = ReadContainerdRoots(*rec, &r); !st) {
    err << "oci-rlimit node: " << st.error().Text() << ", nothing removed\n";
    return 1;
  }
  std::string wrapper;
  std::vector<std::string> ids = LiveIds(*rec, a, &r, &wrapper);
  r.crio_pods = CrioPodsOf(a.host);
  const bool live = (!ids.empty() || !r.crio_pods.empty()) && !a.force;
  if (auto st = RemoveHandlers(*rec, live, &r, out); !st) {
    err << "oci-rlimit node: " << st.error().Text() << "\n";
    return 1;
  }
  const std::vector<std::string> keep = KeptFiles(*rec, r, live, wrapper);
  std::vector<ManifestEntry> left = RemoveFiles(*rec, keep, err);
  if (r.kept_handler) {
    for (const auto& e : rec->entries()) {
      if (e.kind.rfind("ctd", 0) == 0) left.push_back(e);
    }
  }
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
  std::sort(r.restart.begin(), r.restart.end());
  r.restart.erase(std::unique(r.restart.begin(), r.restart.end()), r.restart.end());
  out << "plan restart=" << Joined(r.restart, " ") << "\n";
  SayRestarts(r.restart, out);
  if (int rc = Kept(r, live, wrapper, ids, err); rc != 0) return rc;
  out << "uninstalled from " << (a.host.empty() ? "/" : a.host) << "\n";
  return 0;
}

}  // namespace ocirlimit::node
