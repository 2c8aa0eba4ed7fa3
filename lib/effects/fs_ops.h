// Read-only file access for `oci-rlimit audit`, the heals and the
// installer's live scan: listing the runtimes' state roots, reading their
// state files, bundles' config.json (ReadTrusted) and /proc/PID/{stat,limits}. Behind an interface
// so discovery and the heal are tested over fake state roots and fake processes.
#pragma once

#include <sys/types.h>

#include <cerrno>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats/error.h"

namespace ocirlimit {

struct CheckedRoot;  // the real reader's open, checked ROOT (fs_ops_linux.cc)

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
  // At most `max_bytes` of a file the kernel writes, /proc/PID/stat or
  // limits: as ReadFile, in fewer syscalls (no fstat) and copies.
  virtual Result<std::string> ReadProcFile(const std::string& path, size_t max_bytes) {
    return ReadFile(path, max_bytes);
  }

  // What ReadTrusted read, and the one uid that owns all of it.
  struct TrustedText {
    std::string text;
    uid_t owner = 0;
  };
  // The one trusted-file reader (DEVELOPERS.md, "Trust"): at most
  // `max_bytes` of the regular file ROOT/C1/.../CN, a file only `owner`
  // can have written. ROOT, each directory below it and the file must be
  // owned by that one uid and writable by neither group nor others; with
  // no `owner` given, the uid that owns ROOT is the one (a user's rootless
  // state root: then nothing read is a node fact). Each component is one
  // plain name (IsPlainName), and no symlink is followed: not ROOT itself
  // (its last component; the admin's path above it is), nor any component
  // (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where the kernel has it,
  // O_NOFOLLOW otherwise). The file is checked (fstatat, its symlink not
  // followed) before it is opened to read (O_NONBLOCK), and read only if the
  // file opened is the one checked, so a FIFO or a device is never opened.
  // The error names the path and what failed ("is owned by uid 1000, not
  // root: not trusted", "is a symlink, and no symlinks are followed"); err
  // is ENOENT when a component does not exist, ELOOP for a symlink.
  [[nodiscard]] virtual Result<TrustedText> ReadTrusted(const std::string& root,
                                                        const std::vector<std::string>& components,
                                                        std::optional<uid_t> owner,
                                                        size_t max_bytes) {
    (void)root, (void)components, (void)owner, (void)max_bytes;
    return MakeError("trusted read: not supported here", ENOSYS);
  }

  // ROOT for many ReadTrustedIn calls: `handle` holds it open once checked as
  // ReadTrusted checks ROOT (audit reads a thousand containers' state under
  // one root), or is empty where it could not be (each read then checks ROOT
  // anew and fails as ReadTrusted does). Hold it only for one pass: a
  // directory renamed over ROOT later is not seen through it.
  struct TrustedRoot {
    std::string path;
    std::optional<uid_t> owner;
    std::shared_ptr<const CheckedRoot> handle;
  };
  [[nodiscard]] virtual TrustedRoot OpenTrustedRoot(const std::string& root,
                                                    std::optional<uid_t> owner) {
    return {root, owner, nullptr};
  }
  // ReadTrusted(root.path, components, root.owner, max_bytes), beneath the
  // directory already checked where `root` holds one.
  [[nodiscard]] virtual Result<TrustedText> ReadTrustedIn(
      const TrustedRoot& root, const std::vector<std::string>& components, size_t max_bytes) {
    return ReadTrusted(root.path, components, root.owner, max_bytes);
  }
};

// opendir(3), ReadFileBounded and the trusted reader.
FsOps& LinuxFsOps();

// Not empty, ".", ".." and without '/' or NUL.
[[nodiscard]] bool IsPlainName(const std::string& name);

}  // namespace ocirlimit
