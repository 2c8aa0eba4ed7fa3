#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "effects/files.h"
#include "effects/fs_ops.h"
#include "effects/trusted_read_linux.h"
#include "effects/unique_fd.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

constexpr int kPathFlags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
constexpr int kReadFlags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC;

std::string Whose(uid_t uid) { return uid == 0 ? "root" : "uid " + std::to_string(uid); }

// `name` beneath the directory `dir`, never through a symlink: openat2 with
// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, or openat with O_NOFOLLOW where the
// kernel has no openat2 (before 5.6; a plain name has nothing else to
// resolve). With O_PATH a symlink opens as itself, and is refused by Check.
int OpenBeneath(int dir, const std::string& name, int flags) {
  struct open_how how {};
  how.flags = static_cast<uint64_t>(flags);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const long fd = syscall(SYS_openat2, dir, name.c_str(), &how, sizeof how);
  if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
  return openat(dir, name.c_str(), flags);
}

// What was opened at `path` is of `kind` (S_IFDIR, S_IFREG), owned by
// `owner` and writable by nobody else.
Status Check(const struct stat& st, const std::string& path, mode_t kind, uid_t owner) {
  if (S_ISLNK(st.st_mode)) {
    return MakeError(Quote(path) + " is a symlink, and no symlinks are followed");
  }
  if ((st.st_mode & S_IFMT) != kind) {
    return MakeError(Quote(path) +
                     (kind == S_IFDIR ? " is not a directory" : " is not a regular file"));
  }
  if (st.st_uid != owner) {
    return MakeError(Cat(Quote(path), " is owned by uid ", std::to_string(st.st_uid), ", not ",
                         Whose(owner), ": not trusted"));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return MakeError(Quote(path) + " is writable by group or others: not trusted");
  }
  return Ok{};
}

// `out`: an O_PATH descriptor of `name` beneath `dir`, and `st` what it
// is, checked as Check does.
Status OpenChecked(int dir, const std::string& name, const std::string& path, mode_t kind,
                   uid_t owner, UniqueFd& out, struct stat& st) {
  out.reset(OpenBeneath(dir, name, kPathFlags));
  if (out.get() < 0) return MakeError("open " + Quote(path), errno);
  if (fstat(out.get(), &st) != 0) return MakeError("stat " + Quote(path), errno);
  return Check(st, path, kind, owner);
}

// `st`: what the file `name` in `dir` is, its symlink not followed (a
// plain name has nothing else to resolve), checked as Check does; one
// syscall where an O_PATH descriptor takes three. ReadIfStillChecked then
// reads it only if it is still what was checked.
Status StatChecked(int dir, const std::string& name, const std::string& path, uid_t owner,
                   struct stat& st) {
  if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return MakeError("open " + Quote(path), errno);
  }
  return Check(st, path, S_IFREG, owner);
}

}  // namespace

Result<std::string> ReadIfStillChecked(int dir, const std::string& name, const std::string& path,
                                       const struct stat& checked, size_t max_bytes) {
  if (static_cast<uint64_t>(checked.st_size) > max_bytes) {
    return MakeError(Cat(Quote(path), " is larger than ", std::to_string(max_bytes), " bytes"));
  }
  UniqueFd fd(OpenBeneath(dir, name, kReadFlags));
  if (fd.get() < 0) return MakeError("open " + Quote(path), errno);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return MakeError("stat " + Quote(path), errno);
  if (st.st_dev != checked.st_dev || st.st_ino != checked.st_ino || !S_ISREG(st.st_mode)) {
    return MakeError(Quote(path) + " was replaced while it was read: not trusted");
  }
  // A regular file never blocks: read at once into a buffer one byte larger
  // than fstat said, where a short read is its end (audit reads two files
  // per container: no poll, and no read that returns 0).
  std::string text(std::min(static_cast<size_t>(st.st_size), max_bytes) + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return MakeError("read " + Quote(path), errno);
    if (n == 0) break;
    got += static_cast<size_t>(n);
    if (got > max_bytes) {
      return MakeError(Cat(Quote(path), " is larger than ", std::to_string(max_bytes), " bytes"));
    }
    if (got < text.size()) break;                           // short: the end
    text.resize(std::min(text.size() * 2, max_bytes + 1));  // it grew since fstat
  }
  text.resize(got);
  return text;
}

// ROOT opened and checked (ReadTrusted's first step): its descriptor and
// the one owner, `owner` or ROOT's.
struct CheckedRoot {
  explicit CheckedRoot(int fd) : fd(fd) {}
  UniqueFd fd;
  uid_t owner = 0;
};

namespace {

Status PlainComponents(const std::string& root, const std::vector<std::string>& components) {
  if (components.empty()) return MakeError("read beneath " + Quote(root) + ": no file named");
  for (const auto& c : components) {
    if (!IsPlainName(c)) return MakeError("not a plain file name: " + Quote(c));
  }
  return Ok{};
}

Result<std::shared_ptr<const CheckedRoot>> OpenRoot(const std::string& root,
                                                    std::optional<uid_t> owner) {
  auto out = std::make_shared<CheckedRoot>(open(root.c_str(), kPathFlags));
  if (out->fd.get() < 0) return MakeError("open " + Quote(root), errno);
  struct stat st {};
  if (fstat(out->fd.get(), &st) != 0) return MakeError("stat " + Quote(root), errno);
  out->owner = owner.value_or(st.st_uid);
  if (Status s = Check(st, root, S_IFDIR, out->owner); !s) return s.error();
  return std::shared_ptr<const CheckedRoot>(std::move(out));
}

// The rest of ReadTrusted, beneath `root` (checked, at `root_path`).
Result<FsOps::TrustedText> ReadBeneath(const CheckedRoot& root, const std::string& root_path,
                                       const std::vector<std::string>& components,
                                       size_t max_bytes) {
  if (Status s = PlainComponents(root_path, components); !s) return s.error();
  std::string path = root_path;
  UniqueFd held(-1);  // the last directory opened below the root
  int dir = root.fd.get();
  struct stat st {};
  for (size_t i = 0; i + 1 < components.size(); ++i) {
    path += "/" + components[i];
    UniqueFd next(-1);
    Status s = OpenChecked(dir, components[i], path, S_IFDIR, root.owner, next, st);
    if (!s) return s.error();
    held.reset(next.release());
    dir = held.get();
  }
  path += "/" + components.back();
  if (Status s = StatChecked(dir, components.back(), path, root.owner, st); !s) return s.error();
  auto text = ReadIfStillChecked(dir, components.back(), path, st, max_bytes);
  if (!text) return text.error();
  return FsOps::TrustedText{std::move(*text), root.owner};
}

Result<FsOps::TrustedText> ReadTrustedFile(const std::string& root,
                                           const std::vector<std::string>& components,
                                           std::optional<uid_t> owner, size_t max_bytes) {
  if (Status s = PlainComponents(root, components); !s) return s.error();
  auto checked = OpenRoot(root, owner);
  if (!checked) return checked.error();
  return ReadBeneath(**checked, root, components, max_bytes);
}

// A procfs file: no fstat (the kernel writes it, never a FIFO), read into
// the string itself until a read returns 0 (a seq_file of many records,
// /proc/PID/maps, returns short reads before its end).
Result<std::string> ReadProc(const std::string& path, size_t max_bytes) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) return MakeError("open " + Quote(path), errno);
  std::string text(std::min<size_t>(4096, max_bytes + 1), '\0');
  size_t got = 0;
  for (;;) {
    const ssize_t n = read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return MakeError("read " + Quote(path), errno);
    got += static_cast<size_t>(n);
    if (got > max_bytes) {
      return MakeError(Cat(Quote(path), " is larger than ", std::to_string(max_bytes), " bytes"));
    }
    if (n == 0) break;
    if (got == text.size()) text.resize(std::min(text.size() * 2, max_bytes + 1));
  }
  text.resize(got);
  return text;
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
  Result<TrustedText> ReadTrusted(const std::string& root,
                                  const std::vector<std::string>& components,
                                  std::optional<uid_t> owner, size_t max_bytes) override {
    return ReadTrustedFile(root, components, owner, max_bytes);
  }
  Result<std::string> ReadProcFile(const std::string& path, size_t max_bytes) override {
    return ReadProc(path, max_bytes);
  }
  TrustedRoot OpenTrustedRoot(const std::string& root, std::optional<uid_t> owner) override {
    auto checked = OpenRoot(root, owner);
    if (!checked) return {root, owner, nullptr};
    return {root, owner, std::move(*checked)};
  }
  Result<TrustedText> ReadTrustedIn(const TrustedRoot& root,
                                    const std::vector<std::string>& components,
                                    size_t max_bytes) override {
    if (!root.handle) return ReadTrusted(root.path, components, root.owner, max_bytes);
    return ReadBeneath(*root.handle, root.path, components, max_bytes);
  }
};

}  // namespace

bool IsPlainName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

FsOps& LinuxFsOps() {
  static LinuxFs fs;
  return fs;
}

}  // namespace ocirlimit
