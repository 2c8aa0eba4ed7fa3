// The node installer's record of a node root: what it created (the
// manifest, node_files.h) and the node's mode, under
// HOST/var/lib/oci-rlimit/node-install, and the writes that keep it true:
// every file it creates and every directory it makes is recorded before
// uninstall could need it, files are replaced atomically.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "formats/error.h"
#include "node/host_fs.h"
#include "node/node_files.h"

namespace ocirlimit::node {

class NodeRecord {
 public:
  // The record under `host`; an empty one when nothing is installed. Every
  // read and write goes through `fs` (LinuxHostFs() by default).
  static Result<NodeRecord> Load(const std::string& host);
  static Result<NodeRecord> Load(HostFs& fs, const std::string& host);

  bool installed() const { return installed_; }
  const NodeMode& mode() const { return mode_; }
  const std::vector<ManifestEntry>& entries() const { return entries_; }
  bool Recorded(std::string_view kind, std::string_view path) const;

  // Appends a manifest line (once), making the state directory first.
  Status Record(const std::string& kind, const std::string& path);
  // mkdir -p of a node directory, each one made recorded as "dir".
  Status EnsureDir(const std::string& dir);
  // Puts `content` at node path `path` with `mode`; a new file is recorded
  // as "created" and prints "wrote PATH". True when anything changed.
  Result<bool> Place(const std::string& path, const std::string& content, mode_t mode,
                     std::ostream& out);
  // Creates or atomically replaces `path` (a node path), recording nothing.
  Status Write(const std::string& path, const std::string& content, mode_t mode);
  Status SaveMode(const NodeMode& mode);

  // Uninstall: the manifest becomes `keep`; with nothing kept the state
  // directory and the directories made for it go.
  Status Rewrite(std::vector<ManifestEntry> keep);

  const std::string& host() const { return host_; }
  HostFs& fs() const { return *fs_; }

 private:
  std::string Host(const std::string& path) const { return host_ + path; }
  Status EnsureState();
  Status SaveManifest();

  HostFs* fs_ = nullptr;
  std::string host_;
  bool installed_ = false;
  NodeMode mode_;
  std::vector<ManifestEntry> entries_;
};

}  // namespace ocirlimit::node
