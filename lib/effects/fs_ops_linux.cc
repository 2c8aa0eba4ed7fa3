#include <dirent.h>

#include <cerrno>
#include <cstring>

#include "effects/files.h"
#include "effects/fs_ops.h"

namespace ocirlimit {
namespace {

class LinuxFs : public FsOps {
 public:
  Result<std::vector<Entry>> ListDir(const std::string& dir) override {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return MakeError("open directory " + dir, errno);
    std::vector<Entry> out;
    errno = 0;
    while (const dirent* e = readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      // DT_UNKNOWN (a file system without d_type): listed as a directory,
      // whose listing then fails if it is none.
      out.push_back({e->d_name, e->d_type == DT_DIR || e->d_type == DT_UNKNOWN});
    }
    const int err = errno;
    closedir(d);
    if (err != 0) return MakeError("read directory " + dir, err);
    return out;
  }
  Result<std::string> ReadFile(const std::string& path, size_t max_bytes) override {
    return ReadFileBounded(path, max_bytes);
  }
};

}  // namespace

FsOps& LinuxFsOps() {
  static LinuxFs fs;
  return fs;
}

}  // namespace ocirlimit
