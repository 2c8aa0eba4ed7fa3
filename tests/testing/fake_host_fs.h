// The node installer's filesystem (node/host_fs.h) as maps: files with their
// modes, directories, symlinks, and the calls to fail; every call that
// would change the node is logged, so a test can say "nothing was written".
#pragma once

#include <cerrno>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "formats/text.h"
#include "node/host_fs.h"

namespace ocirlimit::testing {

class FakeHostFs : public node::HostFs {
 public:
  struct File {
    std::string content;
    mode_t mode = 0644;
  };
  std::map<std::string, File> files;
  std::set<std::string> dirs = {"/"};
  std::map<std::string, std::string> links;  // path -> target
  std::set<std::string> unwritable;          // directories CanWrite refuses (EACCES)
  // "OP PATH" -> errno for a change that fails, e.g. {"replace /h/x", EIO}.
  std::map<std::string, int> fail;
  std::vector<std::string> changes;  // "OP PATH" of every change tried, in order

  // A directory and every directory above it.
  void AddDir(std::string path) {
    for (path = Norm(path); path != "/"; path = Parent(path)) dirs.insert(path);
  }
  void AddFile(const std::string& path, const std::string& content, mode_t mode = 0644) {
    AddDir(Parent(path));
    files[Norm(path)] = {content, mode};
  }
  bool Has(const std::string& path) const {
    const std::string p = Norm(path);
    return files.count(p) != 0 || dirs.count(p) != 0 || links.count(p) != 0;
  }

  Result<node::FileStat> Lstat(const std::string& path) override {
    const std::string p = Norm(path);
    if (links.count(p) != 0) return node::FileStat{node::FileKind::kSymlink, 0777};
    if (dirs.count(p) != 0) return node::FileStat{node::FileKind::kDirectory, 0755};
    if (auto it = files.find(p); it != files.end()) {
      return node::FileStat{node::FileKind::kRegular, it->second.mode};
    }
    return MakeError(Quote(path), ENOENT);
  }
  Result<node::FileStat> Stat(const std::string& path) override { return Lstat(Follow(path)); }
  int CanWrite(const std::string& path) override {
    if (!Has(path)) return ENOENT;
    return unwritable.count(Norm(path)) != 0 ? EACCES : 0;
  }
  int CanRead(const std::string& path) override { return Has(Follow(path)) ? 0 : ENOENT; }
  Result<std::string> Read(const std::string& path, size_t max_bytes) override {
    const std::string p = Follow(path);
    auto it = files.find(p);
    if (it == files.end()) return MakeError(Quote(path), dirs.count(p) != 0 ? EISDIR : ENOENT);
    if (it->second.content.size() > max_bytes) return MakeError(Quote(path), EFBIG);
    return it->second.content;
  }
  // Logged as "create PATH"; a failing "replace PATH" fails its write too,
  // and nothing is left behind, as PlaceNewFile leaves nothing.
  Status Place(const std::string& path, const std::string& content, mode_t mode) override {
    if (int e = Change("create", path); e != 0) return MakeError("create " + Quote(path), e);
    if (Has(path)) return MakeError("create " + Quote(path), EEXIST);
    if (dirs.count(Parent(path)) == 0) return MakeError("create " + Quote(path), ENOENT);
    if (auto it = fail.find("replace " + Norm(path)); it != fail.end()) {
      return MakeError("write " + Quote(path), it->second);
    }
    files[Norm(path)] = {content, mode};
    return Ok{};
  }
  Status Replace(const std::string& path, const std::string& content) override {
    if (int e = Change("replace", path); e != 0) return MakeError("write " + Quote(path), e);
    if (links.count(Norm(path)) != 0) return MakeError("write " + Quote(path), ELOOP);
    if (dirs.count(Parent(path)) == 0) return MakeError("write " + Quote(path), ENOENT);
    files[Norm(path)].content = content;
    return Ok{};
  }
  int Chmod(const std::string& path, mode_t mode) override {
    if (int e = Change("chmod", path); e != 0) return e;
    auto it = files.find(Follow(path));
    if (it == files.end()) return ENOENT;
    it->second.mode = mode;
    return 0;
  }
  int Mkdir(const std::string& path, mode_t /*mode*/) override {
    if (int e = Change("mkdir", path); e != 0) return e;
    if (Has(path)) return EEXIST;
    if (dirs.count(Parent(path)) == 0) return ENOENT;
    dirs.insert(Norm(path));
    return 0;
  }
  int Unlink(const std::string& path) override {
    if (int e = Change("unlink", path); e != 0) return e;
    const std::string p = Norm(path);
    if (dirs.count(p) != 0) return EISDIR;
    if (files.erase(p) + links.erase(p) == 0) return ENOENT;
    return 0;
  }
  int Rmdir(const std::string& path) override {
    if (int e = Change("rmdir", path); e != 0) return e;
    const std::string p = Norm(path);
    if (dirs.count(p) == 0) return Has(p) ? ENOTDIR : ENOENT;
    auto under = [&](const std::string& q) { return q.starts_with(p + "/"); };
    for (const auto& [f, file] : files) {
      if (under(f)) return ENOTEMPTY;
    }
    for (const auto& [l, target] : links) {
      if (under(l)) return ENOTEMPTY;
    }
    for (const auto& d : dirs) {
      if (under(d)) return ENOTEMPTY;
    }
    dirs.erase(p);
    return 0;
  }
  std::vector<std::string> RegularFiles(const std::string& dir) override {
    std::vector<std::string> out;
    const std::string d = Norm(dir);
    for (const auto& [p, file] : files) {
      if (Parent(p) == d) out.push_back(p.substr(d == "/" ? 1 : d.size() + 1));
    }
    return out;
  }

  static std::string Norm(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return path;
  }
  static std::string Parent(const std::string& path) {
    const std::string p = Norm(path);
    const size_t slash = p.rfind('/');
    return slash == 0 || slash == std::string::npos ? "/" : p.substr(0, slash);
  }

 private:
  // Logs a change and says whether it is to fail (its errno, else 0).
  int Change(const char* op, const std::string& path) {
    const std::string key = std::string(op) + " " + Norm(path);
    changes.push_back(key);
    auto it = fail.find(key);
    return it == fail.end() ? 0 : it->second;
  }
  std::string Follow(const std::string& path) const {
    std::string p = Norm(path);
    for (int hop = 0; hop < 40 && links.count(p) != 0; ++hop) p = Norm(links.at(p));
    return p;
  }
};

}  // namespace ocirlimit::testing
