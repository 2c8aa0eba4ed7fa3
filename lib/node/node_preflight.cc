#include "node/node_preflight.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

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
Status CheckDir(const std::string& host, const std::string& path) {
  std::string dir = Parent(path);
  struct stat st {};
  while (lstat((host + dir).c_str(), &st) != 0 && dir != "/") dir = Parent(dir);
  const std::string full = host + dir;
  if (!S_ISDIR(st.st_mode)) {
    return MakeError(Quote(full) + ": not a directory, so " + path + " cannot be written");
  }
  if (access(full.c_str(), W_OK) != 0) {
    return MakeError(Quote(full) + ": cannot write " + path + " there", errno);
  }
  return Ok{};
}

}  // namespace

Status CheckWritable(const std::string& host, const std::vector<std::string>& targets,
                     const std::vector<std::string>& sources) {
  for (const auto& src : sources) {
    if (access(src.c_str(), R_OK) != 0) return MakeError("--source: " + Quote(src), errno);
  }
  for (const auto& path : targets) {
    const std::string full = host + path;
    struct stat st {};
    if (lstat(full.c_str(), &st) == 0) {
      if (S_ISLNK(st.st_mode)) {
        return MakeError(Quote(full) +
                         ": a symlink; oci-rlimit replaces only regular files (point the "
                         "engine at the real file, or remove the link)");
      }
      if (!S_ISREG(st.st_mode)) return MakeError(Quote(full) + ": not a regular file");
    } else if (errno != ENOENT) {
      return MakeError(Quote(full), errno);
    }
    if (auto s = CheckDir(host, path); !s) return s;
  }
  return Ok{};
}

bool IsLeftoverTemp(const std::string& name) {
  constexpr std::string_view kPrefix = ".oci-rlimit.";
  if (name.size() != kPrefix.size() + 6 || !name.starts_with(kPrefix)) return false;
  return std::all_of(name.begin() + static_cast<long>(kPrefix.size()), name.end(),
                     [](unsigned char c) { return std::isalnum(c) != 0; });
}

void RemoveLeftoverTemps(const std::string& host, const std::vector<std::string>& targets,
                         std::ostream& out) {
  std::vector<std::string> dirs;
  dirs.reserve(targets.size());
  for (const auto& t : targets) {
    dirs.push_back(Parent(t));
    dirs.push_back(TempDirFor(t));  // where temp files of a watched directory go
  }
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  for (const auto& dir : dirs) {
    DIR* d = opendir((host + dir).c_str());
    if (d == nullptr) continue;
    std::vector<std::string> found;
    while (const dirent* e = readdir(d)) {
      if (e->d_type == DT_REG && IsLeftoverTemp(e->d_name)) found.emplace_back(e->d_name);
    }
    closedir(d);
    for (const auto& name : found) {
      const std::string path = (dir == "/" ? "" : dir) + "/" + name;
      if (unlink((host + path).c_str()) == 0) {
        out << "removed " << path << " (left by an interrupted run)\n";
      }
    }
  }
}

}  // namespace ocirlimit::node
