// A node as maps of files, symlinks and executables, for the node model's
// tests (NodeFiles) and doctor's (which extends it).
#pragma once

#include <cerrno>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "adapters/engines/node_files.h"

namespace ocirlimit::testing {

template <class Base = NodeFiles>
class FakeFilesT : public Base {
 public:
  std::map<std::string, std::string> files;
  std::map<std::string, std::string> links;  // path -> target
  std::set<std::string> executables;

  Result<std::string> ReadFile(const std::string& path) override {
    auto it = files.find(Real(path));
    if (it == files.end()) return MakeError(path, ENOENT);
    return it->second;
  }
  std::vector<std::string> ListDir(const std::string& path) override {
    std::vector<std::string> out;
    for (const auto& [p, text] : files) {
      if (p.starts_with(path + "/") && p.find('/', path.size() + 1) == std::string::npos) {
        out.push_back(p.substr(path.size() + 1));
      }
    }
    return out;
  }
  std::optional<std::string> Resolve(const std::string& path) override {
    std::string p = path;
    for (int hop = 0; hop < 40; ++hop) {
      auto it = links.find(p);
      if (it == links.end()) return p;
      p = it->second;
    }
    return std::nullopt;
  }
  std::optional<std::string> WhichIn(const std::string& name,
                                     const std::string& path_list) override {
    if (name.find('/') != std::string::npos) {
      if (!name.starts_with("/") || !IsExe(name)) return std::nullopt;
      return name;
    }
    std::istringstream dirs(path_list);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      if (dir.starts_with("/") && IsExe(dir + "/" + name)) return dir + "/" + name;
    }
    return std::nullopt;
  }
  // Executables are those listed and any link to one.
  virtual bool IsExe(const std::string& path) {
    auto real = Resolve(path);
    return real && executables.count(*real) > 0;
  }
  // A path with linked directories followed, as the kernel follows them.
  std::string Real(const std::string& path) {
    std::string p = Resolve(path).value_or(path);
    for (const auto& [from, to] : links) {
      if (p.starts_with(from + "/")) p = to + p.substr(from.size());
    }
    return p;
  }
};

using FakeFiles = FakeFilesT<>;

}  // namespace ocirlimit::testing
