// Read-only file access for `oci-rlimit audit` and the heal: listing the
// runtimes' state roots, reading their state files, bundles' config.json and
// /proc/PID/{stat,limits}. Behind an interface so discovery and the heal are
// tested over fake state roots and fake processes.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"

namespace ocirlimit {

class FsOps {
 public:
  struct Entry {
    std::string name;
    bool dir = false;  // a directory, not followed through a symlink
  };
  virtual ~FsOps() = default;
  // The entries of `dir` without "." and "..", in no particular order. A
  // missing directory is an error with err ENOENT.
  virtual Result<std::vector<Entry>> ListDir(const std::string& dir) = 0;
  // At most `max_bytes` of a regular file (more is an error); never blocks
  // on a FIFO (effects/files.h ReadFileBounded).
  virtual Result<std::string> ReadFile(const std::string& path, size_t max_bytes) = 0;
};

// opendir(3) and ReadFileBounded.
FsOps& LinuxFsOps();

}  // namespace ocirlimit
