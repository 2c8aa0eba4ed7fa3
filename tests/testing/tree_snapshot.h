// One snapshot of a directory tree, for the tests that check what a program
// left on disk (the bad-input catalogue, the Kubernetes installer): every
// entry under a root, the root itself as ".", with its kind, a regular file's
// bytes or a link's target, and its lstat facts. TreeDifferences lists what
// changed between two snapshots, by the facts a test cares about.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace ocirlimit::testsupport {

struct TreeEntry {
  std::string kind;     // "file", "dir", "link", "other" (a FIFO, a socket); "unreadable"
  std::string content;  // a regular file's bytes, a link's target
  mode_t mode = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  ino_t ino = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
};
// By path relative to the root; the root itself is ".".
using Tree = std::map<std::string, TreeEntry>;

inline TreeEntry DescribeTreeEntry(const std::filesystem::path& p) {
  TreeEntry e;
  struct stat st {};
  if (lstat(p.c_str(), &st) != 0) {
    e.kind = "unreadable";
    return e;
  }
  e.mode = st.st_mode;
  e.uid = st.st_uid;
  e.gid = st.st_gid;
  e.ino = st.st_ino;
  e.mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
  e.ctime_ns = st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
  if (S_ISDIR(st.st_mode)) {
    e.kind = "dir";
  } else if (S_ISLNK(st.st_mode)) {
    e.kind = "link";
    std::error_code ec;
    e.content = std::filesystem::read_symlink(p, ec).string();
  } else if (S_ISREG(st.st_mode)) {
    e.kind = "file";
    std::ifstream in(p, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    e.content = bytes.str();
  } else {
    e.kind = "other";  // never opened: a FIFO would block the read
  }
  return e;
}

inline Tree SnapshotTree(const std::string& root) {
  namespace fs = std::filesystem;
  Tree out;
  out["."] = DescribeTreeEntry(root);
  // A walk that fails throws: a test never compares half a tree.
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    out[fs::relative(e.path(), root).string()] = DescribeTreeEntry(e.path());
  }
  return out;
}

// The facts a comparison looks at, besides the kind and the content (always).
// Times count for files, links and the rest, never for directories: a
// directory's change whenever an entry is made and removed in it, and its
// entries are compared one by one anyway.
struct TreeFacts {
  bool mode = true;
  bool owner = true;  // uid and gid
  bool inode = true;  // the same inode: not replaced, even by the same bytes
  bool mtime = true;
  bool ctime = true;
};

// "gone: P", "new: P" and "changed: P (what)", in path order; none when the
// two trees agree on `facts`.
inline std::vector<std::string> TreeDifferences(const Tree& before, const Tree& after,
                                                const TreeFacts& facts = {}) {
  std::vector<std::string> out;
  for (const auto& [path, a] : before) {
    auto it = after.find(path);
    if (it == after.end()) {
      out.push_back("gone: " + path);
      continue;
    }
    const TreeEntry& b = it->second;
    const bool times = a.kind != "dir" || b.kind != "dir";
    std::string what;
    auto differs = [&](bool check, bool same, const char* name) {
      if (check && !same) what += (what.empty() ? "" : ", ") + std::string(name);
    };
    differs(true, a.kind == b.kind, "kind");
    differs(true, a.content == b.content, "content");
    differs(facts.mode, a.mode == b.mode, "mode");
    differs(facts.owner, a.uid == b.uid && a.gid == b.gid, "owner");
    differs(facts.inode, a.ino == b.ino, "inode");
    differs(facts.mtime && times, a.mtime_ns == b.mtime_ns, "mtime");
    differs(facts.ctime && times, a.ctime_ns == b.ctime_ns, "ctime");
    if (!what.empty()) out.push_back("changed: " + path + " (" + what + ")");
  }
  for (const auto& [path, entry] : after) {
    if (before.count(path) == 0) out.push_back("new: " + path);
  }
  return out;
}

}  // namespace ocirlimit::testsupport
