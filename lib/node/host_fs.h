// The filesystem effects of the node installer's decisions (the record,
// preflight, install and uninstall): whole paths (HOST + node path) in,
// errno or text out, so the decisions hold no syscalls. The real one is
// host_fs_linux.cc; tests use a fake (tests/testing/fake_host_fs.h).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

#include "formats/error.h"

namespace ocirlimit::node {

enum class FileKind { kRegular, kDirectory, kSymlink, kOther };

struct FileStat {
  FileKind kind = FileKind::kOther;
  mode_t mode = 0;  // the 07777 bits
};

class HostFs {
 public:
  virtual ~HostFs() = default;
  // lstat(2) (Lstat) or stat(2) following symlinks (Stat); the error's err
  // is errno (ENOENT: nothing there).
  virtual Result<FileStat> Lstat(const std::string& path) = 0;
  virtual Result<FileStat> Stat(const std::string& path) = 0;
  // access(2) for writing or reading: 0, or errno.
  virtual int CanWrite(const std::string& path) = 0;
  virtual int CanRead(const std::string& path) = 0;
  // At most `max_bytes` of a file (ReadFileBounded).
  virtual Result<std::string> Read(const std::string& path, size_t max_bytes) = 0;
  // A new file holding `content` with exactly `mode`, written whole to a temp
  // file outside a directory an engine watches (TempDirFor) and linked into
  // place (PlaceNewFile): err EEXIST when something is there; nothing left
  // behind on an error, and never seen empty or half written.
  virtual Status Place(const std::string& path, const std::string& content, mode_t mode) = 0;
  // Replaces `path` atomically (AtomicWriteFileVia with TempDirFor: mode and
  // owner kept, the temp file outside a watched directory).
  virtual Status Replace(const std::string& path, const std::string& content) = 0;
  // chmod(2), mkdir(2), unlink(2), rmdir(2): 0, or errno.
  virtual int Chmod(const std::string& path, mode_t mode) = 0;
  virtual int Mkdir(const std::string& path, mode_t mode) = 0;
  virtual int Unlink(const std::string& path) = 0;
  virtual int Rmdir(const std::string& path) = 0;
  // The names of the regular files in directory `dir` (none when it cannot
  // be read).
  virtual std::vector<std::string> RegularFiles(const std::string& dir) = 0;
};

// The real one: this process's view of the filesystem.
HostFs& LinuxHostFs();

}  // namespace ocirlimit::node
