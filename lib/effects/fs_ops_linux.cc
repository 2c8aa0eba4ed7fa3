#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "effects/files.h"
#include "effects/fs_ops.h"
#include "effects/unique_fd.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

constexpr int kReadFlags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;

// Without openat2 (before Linux 5.6): each component opened with
// O_NOFOLLOW beneath the last; ".." and absolute paths refused.
int OpenNoFollowWalk(int dirfd, const std::string& rel) {
  if (rel.empty() || rel.front() == '/') {
    errno = EXDEV;
    return -1;
  }
  int at = dirfd;
  int owned = -1;
  size_t pos = 0;
  for (;;) {
    const size_t slash = rel.find('/', pos);
    const std::string part = rel.substr(pos, slash == std::string::npos ? rel.npos : slash - pos);
    if (part == "..") {
      if (owned >= 0) close(owned);
      errno = EXDEV;
      return -1;
    }
    const bool last = slash == std::string::npos;
    const int fd = openat(at, part.c_str(),
                          last ? kReadFlags | O_NOFOLLOW : O_PATH | O_DIRECTORY | O_NOFOLLOW);
    const int err = errno;
    if (owned >= 0) close(owned);
    if (fd < 0 || last) {
      errno = err;
      return fd;
    }
    owned = at = fd;
    pos = slash + 1;
  }
}

int OpenBeneath(int dirfd, const std::string& rel) {
  struct open_how how {};
  how.flags = kReadFlags;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const long fd = syscall(SYS_openat2, dirfd, rel.c_str(), &how, sizeof how);
  if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
  return OpenNoFollowWalk(dirfd, rel);
}

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
  Result<OwnedText> ReadBeneath(const std::string& dir, const std::string& rel,
                                size_t max_bytes) override {
    const std::string path = dir + "/" + rel;
    UniqueFd d(open(dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (d.get() < 0) return MakeError("open directory " + Quote(dir), errno);
    struct stat st {};
    if (fstat(d.get(), &st) != 0) return MakeError("stat " + Quote(dir), errno);
    OwnedText out;
    out.dir_owner = st.st_uid;
    UniqueFd f(OpenBeneath(d.get(), rel));
    if (f.get() < 0) return MakeError("open " + Quote(path) + " (no symlinks)", errno);
    if (fstat(f.get(), &st) != 0) return MakeError("stat " + Quote(path), errno);
    if (!S_ISREG(st.st_mode)) return MakeError(Quote(path) + " is not a regular file");
    out.owner = st.st_uid;
    auto text = ReadFdBounded(f.get(), max_bytes, 1000);
    if (!text) return text.error().Wrap("read " + Quote(path));
    out.text = std::move(*text);
    return out;
  }
};

}  // namespace

FsOps& LinuxFsOps() {
  static LinuxFs fs;
  return fs;
}

}  // namespace ocirlimit
