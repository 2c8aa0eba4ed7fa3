#include "node/node_preflight.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "effects/files.h"
#include "formats/text.h"

namespace ocirlimit::node {
namespace {

std::string Parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// The nearest existing ancestor of node path `path` must be a directory
// this process may write.
Status CheckDir(HostFs& fs, const std::string& host, const std::string& path) {
  std::string dir = Parent(path);
  auto st = fs.Lstat(host + dir);
  while (!st && dir != "/") {
    dir = Parent(dir);
    st = fs.Lstat(host + dir);
  }
  const std::string full = host + dir;
  if (!st || st->kind != FileKind::kDirectory) {
    return MakeError(Quote(full) + ": not a directory, so " + path + " cannot be written");
  }
  if (int e = fs.CanWrite(full); e != 0) {
    return MakeError(Quote(full) + ": cannot write " + path + " there", e);
  }
  return Ok{};
}

}  // namespace

Status CheckWritable(HostFs& fs, const std::string& host, const std::vector<std::string>& targets,
                     const std::vector<std::string>& sources) {
  for (const auto& src : sources) {
    if (int e = fs.CanRead(src); e != 0) return MakeError("--source: " + Quote(src), e);
  }
  for (const auto& path : targets) {
    const std::string full = host + path;
    if (auto st = fs.Lstat(full); st) {
      if (st->kind == FileKind::kSymlink) {
        return MakeError(Quote(full) +
                         ": a symlink; oci-rlimit replaces only regular files (point the "
                         "engine at the real file, or remove the link)");
      }
      if (st->kind != FileKind::kRegular) return MakeError(Quote(full) + ": not a regular file");
    } else if (st.error().err != ENOENT) {
      return MakeError(Quote(full), st.error().err);
    }
    if (auto s = CheckDir(fs, host, path); !s) return s;
  }
  return Ok{};
}

bool IsLeftoverTemp(const std::string& name) {
  constexpr std::string_view kPrefix = ".oci-rlimit.";
  if (name.size() != kPrefix.size() + 6 || !name.starts_with(kPrefix)) return false;
  return std::all_of(name.begin() + static_cast<long>(kPrefix.size()), name.end(),
                     [](unsigned char c) { return std::isalnum(c) != 0; });
}

void RemoveLeftoverTemps(HostFs& fs, const std::string& host,
                         const std::vector<std::string>& targets, std::ostream& out) {
  std::vector<std::string> dirs;
  dirs.reserve(targets.size());
  for (const auto& t : targets) {
    dirs.push_back(Parent(t));
    dirs.push_back(TempDirFor(t));  // where temp files of a watched directory go
  }
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  for (const auto& dir : dirs) {
    std::vector<std::string> found;
    for (const auto& name : fs.RegularFiles(host + dir)) {
      if (IsLeftoverTemp(name)) found.push_back(name);
    }
    for (const auto& name : found) {
      const std::string path = (dir == "/" ? "" : dir) + "/" + name;
      if (fs.Unlink(host + path) == 0) {
        out << "removed " << path << " (left by an interrupted run)\n";
      }
    }
  }
}

}  // namespace ocirlimit::node
