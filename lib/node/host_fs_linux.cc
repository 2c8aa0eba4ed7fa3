// HostFs (host_fs.h) on the real filesystem.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "effects/files.h"
#include "formats/text.h"
#include "node/host_fs.h"

namespace ocirlimit::node {
namespace {

FileStat FromStat(const struct stat& st) {
  FileStat out;
  if (S_ISREG(st.st_mode)) {
    out.kind = FileKind::kRegular;
  } else if (S_ISDIR(st.st_mode)) {
    out.kind = FileKind::kDirectory;
  } else if (S_ISLNK(st.st_mode)) {
    out.kind = FileKind::kSymlink;
  }
  out.mode = st.st_mode & 07777;
  return out;
}

int Errno(int rc) { return rc == 0 ? 0 : errno; }

class LinuxFs : public HostFs {
 public:
  Result<FileStat> Lstat(const std::string& path) override {
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) return MakeError(Quote(path), errno);
    return FromStat(st);
  }
  Result<FileStat> Stat(const std::string& path) override {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) return MakeError(Quote(path), errno);
    return FromStat(st);
  }
  int CanWrite(const std::string& path) override { return Errno(access(path.c_str(), W_OK)); }
  int CanRead(const std::string& path) override { return Errno(access(path.c_str(), R_OK)); }
  Result<std::string> Read(const std::string& path, size_t max_bytes) override {
    return ReadFileBounded(path, max_bytes);
  }
  Status Place(const std::string& path, const std::string& content, mode_t mode) override {
    return PlaceNewFile(path, content, mode, TempDirFor(path));
  }
  Status Replace(const std::string& path, const std::string& content) override {
    return AtomicWriteFileVia(path, content, TempDirFor(path));
  }
  int Chmod(const std::string& path, mode_t mode) override {
    return Errno(chmod(path.c_str(), mode));
  }
  int Mkdir(const std::string& path, mode_t mode) override {
    return Errno(mkdir(path.c_str(), mode));
  }
  int Unlink(const std::string& path) override { return Errno(unlink(path.c_str())); }
  int Rmdir(const std::string& path) override { return Errno(rmdir(path.c_str())); }
  std::vector<std::string> RegularFiles(const std::string& dir) override {
    std::vector<std::string> out;
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return out;
    while (const dirent* e = readdir(d)) {
      if (e->d_type == DT_REG) out.emplace_back(e->d_name);
    }
    closedir(d);
    return out;
  }
};

}  // namespace

HostFs& LinuxHostFs() {
  static LinuxFs fs;
  return fs;
}

}  // namespace ocirlimit::node
