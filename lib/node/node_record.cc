#include "node/node_record.h"

#include <algorithm>
#include <cerrno>

#include "formats/text.h"

namespace ocirlimit::node {
namespace {

constexpr size_t kMaxRecordBytes = 1 << 20;

bool IsDir(HostFs& fs, const std::string& path) {
  auto st = fs.Stat(path);
  return st && st->kind == FileKind::kDirectory;
}

std::string Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string StateFile(const char* name) { return std::string(kStateDir) + "/" + name; }

}  // namespace

Result<NodeRecord> NodeRecord::Load(const std::string& host) { return Load(LinuxHostFs(), host); }

Result<NodeRecord> NodeRecord::Load(HostFs& fs, const std::string& host) {
  NodeRecord r;
  r.fs_ = &fs;
  r.host_ = host;
  auto manifest = fs.Read(r.Host(StateFile("manifest")), kMaxRecordBytes);
  if (!manifest && manifest.error().err != ENOENT) return manifest.error();
  if (manifest) {
    r.installed_ = true;
    r.entries_ = ParseManifest(*manifest);
  }
  const std::string mode_path = StateFile("mode.json");
  auto mode = fs.Read(r.Host(mode_path), kMaxRecordBytes);
  if (!mode && mode.error().err != ENOENT) return mode.error();
  if (mode) {
    auto m = ParseMode(*mode, r.Host(mode_path));
    if (!m) return m.error();
    r.mode_ = std::move(*m);
  }
  return r;
}

bool NodeRecord::Recorded(std::string_view kind, std::string_view path) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const ManifestEntry& e) { return e.kind == kind && e.path == path; });
}

Status NodeRecord::EnsureState() {
  const std::string state(kStateDir);
  if (IsDir(*fs_, Host(state))) return Ok{};
  std::vector<std::string> missing;
  for (std::string d = state; !IsDir(*fs_, Host(d)); d = Parent(d)) {
    missing.insert(missing.begin(), d);
  }
  for (const auto& d : missing) {
    if (int e = fs_->Mkdir(Host(d), 0755); e != 0 && e != EEXIST) {
      return MakeError("mkdir " + Quote(Host(d)), e);
    }
    entries_.push_back({"statedir", d});
  }
  installed_ = true;
  return SaveManifest();
}

Status NodeRecord::SaveManifest() {
  return Write(StateFile("manifest"), RenderManifest(entries_), 0644);
}

Status NodeRecord::Record(const std::string& kind, const std::string& path) {
  if (Recorded(kind, path)) return Ok{};
  if (auto st = EnsureState(); !st) return st;
  entries_.push_back({kind, path});
  return SaveManifest();
}

Status NodeRecord::EnsureDir(const std::string& dir) {
  if (IsDir(*fs_, Host(dir))) return Ok{};
  if (auto st = EnsureDir(Parent(dir)); !st) return st;
  // Recorded before it exists: a run cut short leaves at most a line too many.
  if (auto st = Record("dir", dir); !st) return st;
  if (int e = fs_->Mkdir(Host(dir), 0755); e != 0 && e != EEXIST) {
    return MakeError("mkdir " + Quote(Host(dir)), e);
  }
  return Ok{};
}

Status NodeRecord::Write(const std::string& path, const std::string& content, mode_t mode) {
  // The temp file outside a directory an engine watches (TempDirFor), and a
  // new file linked into place whole: never seen empty or half written.
  const std::string full = Host(path);
  auto placed = fs_->Place(full, content, mode);
  if (placed || placed.error().err != EEXIST) return placed;
  return fs_->Replace(full, content);
}

Result<bool> NodeRecord::Place(const std::string& path, const std::string& content, mode_t mode,
                               std::ostream& out) {
  const std::string full = Host(path);
  auto st = fs_->Lstat(full);
  const bool exists = st.ok();
  if (exists) {
    auto now = fs_->Read(full, content.size() + 1);
    if (now && *now == content && st->mode == mode) return false;
  } else {
    if (auto s = EnsureDir(Parent(path)); !s) return s.error();
    if (auto s = Record("created", path); !s) return s.error();
  }
  if (auto s = Write(path, content, mode); !s) return s.error();
  if (exists && st->mode != mode) {
    if (int e = fs_->Chmod(full, mode); e != 0) return MakeError("chmod " + Quote(full), e);
  }
  out << "wrote " << path << "\n";
  return true;
}

Status NodeRecord::SaveMode(const NodeMode& mode) {
  if (auto st = EnsureState(); !st) return st;
  mode_ = mode;
  // Inside the state directory, which uninstall removes: not in the manifest.
  const std::string text = RenderMode(mode);
  auto now = fs_->Read(Host(StateFile("mode.json")), text.size() + 1);
  if (now && *now == text) return Ok{};
  return Write(StateFile("mode.json"), text, 0644);
}

Status NodeRecord::Rewrite(std::vector<ManifestEntry> keep) {
  const bool any = std::any_of(keep.begin(), keep.end(),
                               [](const ManifestEntry& e) { return e.kind != "statedir"; });
  if (any) {
    entries_ = std::move(keep);
    return SaveManifest();
  }
  for (const char* name : {"manifest", "mode.json", "restart"}) {
    if (int e = fs_->Unlink(Host(StateFile(name))); e != 0 && e != ENOENT) {
      return MakeError("remove " + Quote(Host(StateFile(name))), e);
    }
  }
  fs_->Rmdir(Host(std::string(kStateDir)));
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->kind == "statedir") fs_->Rmdir(Host(it->path));
  }
  entries_.clear();
  installed_ = false;
  return Ok{};
}

}  // namespace ocirlimit::node
