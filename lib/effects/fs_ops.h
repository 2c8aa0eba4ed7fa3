// Read-only file access for `oci-rlimit audit` and the heal: listing the
// runtimes' state roots, reading their state files, bundles' config.json and
// /proc/PID/{stat,limits}. Behind an interface so discovery and the heal are
// tested over fake state roots and fake processes.
#pragma once

#include <sys/types.h>

#include <cerrno>
#include <string>
#include <vector>

#include "formats/error.h"

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

  // A file read beneath a directory, and who owns each.
  struct OwnedText {
    std::string text;
    uid_t owner = 0;      // the file's (fstat of what was read)
    uid_t dir_owner = 0;  // the directory's, as opened
  };
  // At most `max_bytes` of the regular file `rel` beneath the directory
  // `dir`, following no symlink: not `dir` itself (O_NOFOLLOW), nor any
  // component of `rel`, nor out of `dir` (openat2 with RESOLVE_BENEATH |
  // RESOLVE_NO_SYMLINKS; where the kernel has no openat2, O_NOFOLLOW on each
  // component). A symlink is an error with err ELOOP (or EXDEV). Audit reads
  // runtime state and bundles this way: only what root owns is trusted
  // (docs/audit.md, "Whom audit trusts").
  virtual Result<OwnedText> ReadBeneath(const std::string& dir, const std::string& rel,
                                        size_t max_bytes) {
    (void)dir, (void)rel, (void)max_bytes;
    return MakeError("read beneath a directory: not supported here", ENOSYS);
  }
};

// opendir(3) and ReadFileBounded.
FsOps& LinuxFsOps();

}  // namespace ocirlimit
