#include "node/node_record.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "effects/files.h"
#include "formats/text.h"

namespace ocirlimit::node {
namespace {

constexpr size_t kMaxRecordBytes = 1 << 20;

bool IsDir(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string StateFile(const char* name) { return std::string(kStateDir) + "/" + name; }

}  // namespace

Result<NodeRecord> NodeRecord::Load(const std::string& host) {
  NodeRecord r;
  r.host_ = host;
  auto manifest = ReadFileBounded(r.Host(StateFile("manifest")), kMaxRecordBytes);
  if (!manifest && manifest.error().err != ENOENT) return manifest.error();
  if (manifest) {
    r.installed_ = true;
    r.entries_ = ParseManifest(*manifest);
  }
  const std::string mode_path = StateFile("mode.json");
  auto mode = ReadFileBounded(r.Host(mode_path), kMaxRecordBytes);
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
  if (IsDir(Host(state))) return Ok{};
  std::vector<std::string> missing;
  for (std::string d = state; !IsDir(Host(d)); d = Parent(d)) missing.insert(missing.begin(), d);
  for (const auto& d : missing) {
    if (mkdir(Host(d).c_str(), 0755) != 0 && errno != EEXIST) {
      return MakeError("mkdir " + Quote(Host(d)), errno);
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
  if (IsDir(Host(dir))) return Ok{};
  if (auto st = EnsureDir(Parent(dir)); !st) return st;
  // Recorded before it exists: a run cut short leaves at most a line too many.
  if (auto st = Record("dir", dir); !st) return st;
  if (mkdir(Host(dir).c_str(), 0755) != 0 && errno != EEXIST) {
    return MakeError("mkdir " + Quote(Host(dir)), errno);
  }
  return Ok{};
}

Status NodeRecord::Write(const std::string& path, const std::string& content, mode_t mode) {
  // The temp file outside a directory an engine watches (TempDirFor), and a
  // new file linked into place whole: never seen empty or half written.
  const std::string full = Host(path);
  const std::string tmp_dir = TempDirFor(full);
  auto placed = PlaceNewFile(full, content, mode, tmp_dir);
  if (placed || placed.error().err != EEXIST) return placed;
  return AtomicWriteFileVia(full, content, tmp_dir);
}

Result<bool> NodeRecord::Place(const std::string& path, const std::string& content, mode_t mode,
                               std::ostream& out) {
  const std::string full = Host(path);
  struct stat st {};
  const bool exists = lstat(full.c_str(), &st) == 0;
  if (exists) {
    auto now = ReadFileBounded(full, content.size() + 1);
    if (now && *now == content && (st.st_mode & 07777) == mode) return false;
  } else {
    if (auto s = EnsureDir(Parent(path)); !s) return s.error();
    if (auto s = Record("created", path); !s) return s.error();
  }
  if (auto s = Write(path, content, mode); !s) return s.error();
  if (exists && (st.st_mode & 07777) != mode && chmod(full.c_str(), mode) != 0) {
    return MakeError("chmod " + Quote(full), errno);
  }
  out << "wrote " << path << "\n";
  return true;
}

Status NodeRecord::SaveMode(const NodeMode& mode) {
  if (auto st = EnsureState(); !st) return st;
  mode_ = mode;
  // Inside the state directory, which uninstall removes: not in the manifest.
  const std::string text = RenderMode(mode);
  auto now = ReadFileBounded(Host(StateFile("mode.json")), text.size() + 1);
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
    if (unlink(Host(StateFile(name)).c_str()) != 0 && errno != ENOENT) {
      return MakeError("remove " + Quote(Host(StateFile(name))), errno);
    }
  }
  rmdir(Host(std::string(kStateDir)).c_str());
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->kind == "statedir") rmdir(Host(it->path).c_str());
  }
  entries_.clear();
  installed_ = false;
  return Ok{};
}

}  // namespace ocirlimit::node
