#include "effects/files.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include "effects/unique_fd.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

std::atomic<uint64_t> g_dropped{0};

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

Result<std::string> ReadFileBounded(const std::string& path, size_t max_bytes) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) return MakeError("open " + Quote(path), errno);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return MakeError("stat " + Quote(path), errno);
  if (!S_ISREG(st.st_mode)) return MakeError(Quote(path) + " is not a regular file");
  std::string out;
  // Sized up front: growing by doubling copies the text once more, and that
  // copy was the hook's peak RSS on a 1 MiB config.json (docs/performance.md).
  out.reserve(std::min(static_cast<size_t>(st.st_size), max_bytes) + 1);
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return MakeError("read " + Quote(path), errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      return MakeError(Quote(path) + " is larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  return out;
}

Result<std::string> ReadFdBounded(int fd, size_t max_bytes, int timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string out;
  char buf[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    struct pollfd p {
      fd, POLLIN, 0
    };
    int r = poll(&p, 1, left.count() > 0 ? static_cast<int>(left.count()) : 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      return MakeError("poll", errno);
    }
    if (r == 0) {
      return MakeError("no end of input after " + std::to_string(timeout_ms) + " ms");
    }
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return MakeError("read", errno);
    }
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      return MakeError("input is larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
}

Status WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return MakeError("write", errno);
    }
    done += static_cast<size_t>(n);
  }
  return Ok{};
}

// AtomicWriteFileMode's mode for "the old file's".
constexpr mode_t kKeepMode = ~mode_t{0};

SyncOps& LinuxSyncOps() {
  struct Linux final : SyncOps {
    Status Fsync(int fd, const char* what) override {
      if (fsync(fd) != 0) return MakeError(std::string("fsync ") + what, errno);
      return Ok{};
    }
  };
  static Linux ops;
  return ops;
}

std::string TempDirFor(const std::string& path) {
  std::string dir = DirName(path);
  if (!dir.ends_with(".d")) return dir;
  std::string up = DirName(dir);
  return up.empty() ? dir : up;
}

namespace {

// A temp file in `dir` holding `content` with `mode` (uid/gid when given),
// fsynced and closed; its path in `tmp`.
Status WriteTemp(const std::string& dir, const std::string& content, mode_t mode,
                 const struct stat* owner, SyncOps& sync, std::string* tmp) {
  *tmp = dir + "/.oci-rlimit.XXXXXX";
  UniqueFd fd(mkostemp(tmp->data(), O_CLOEXEC));
  if (fd.get() < 0) return MakeError("create temp file in " + Quote(dir), errno);
  auto fail = [&](const std::string& what) {
    Error e = MakeError(what + " " + Quote(*tmp), errno);
    unlink(tmp->c_str());
    return e;
  };
  // Owner first: chown(2) clears setuid and setgid, so fchmod must come after.
  if (owner != nullptr && fchown(fd.get(), owner->st_uid, owner->st_gid) != 0) {
    return fail("chown");
  }
  if (fchmod(fd.get(), mode & 07777) != 0) return fail("chmod");
  if (auto w = WriteAll(fd.get(), content); !w) {
    errno = w.error().err;
    return fail("write");
  }
  if (auto s = sync.Fsync(fd.get(), "file"); !s) {
    errno = s.error().err;
    return fail("fsync");
  }
  if (close(fd.release()) != 0) return fail("close");
  return Ok{};
}

Status SyncDir(const std::string& dir, SyncOps& sync) {
  UniqueFd d(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (d.get() < 0) return MakeError("open directory " + Quote(dir), errno);
  if (auto s = sync.Fsync(d.get(), "directory"); !s) return s.error().Wrap(Quote(dir));
  return Ok{};
}

}  // namespace

Status PlaceNewFile(const std::string& path, const std::string& content, mode_t mode,
                    const std::string& tmp_dir) {
  const std::string context = "create " + Quote(path);
  std::string tmp;
  for (const std::string& dir : {tmp_dir, DirName(path)}) {
    if (auto s = WriteTemp(dir, content, mode, nullptr, LinuxSyncOps(), &tmp); !s) {
      return s.error().Wrap(context);
    }
    const int rc = link(tmp.c_str(), path.c_str());
    const int err = errno;
    unlink(tmp.c_str());
    if (rc == 0) {
      if (auto s = SyncDir(DirName(path), LinuxSyncOps()); !s) return s.error().Wrap(context);
      return Ok{};
    }
    if (err != EXDEV || dir == DirName(path)) return MakeError(context, err);
  }
  return MakeError(context, EXDEV);
}

namespace {

// Replaces path with `content` through a temp file in `tmp_dir` (or path's own
// directory where that crosses filesystems), with `mode` or, for kKeepMode,
// the old file's.
Status ReplaceVia(const std::string& path, const std::string& content, const std::string& tmp_dir,
                  mode_t mode, SyncOps& sync) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return MakeError("stat " + Quote(path), errno);
  if (S_ISLNK(st.st_mode)) return MakeError(Quote(path) + " is a symlink; refusing to replace it");
  if (!S_ISREG(st.st_mode)) return MakeError(Quote(path) + " is not a regular file");

  // Errors past this point name the file being replaced, not only the temp file.
  const std::string context = "replace " + Quote(path);
  std::string tmp;
  for (const std::string& dir : {tmp_dir, DirName(path)}) {
    const mode_t m = mode == kKeepMode ? st.st_mode : mode;
    if (auto s = WriteTemp(dir, content, m, &st, sync, &tmp); !s) {
      return s.error().Wrap(context);
    }
    if (rename(tmp.c_str(), path.c_str()) == 0) break;
    const int err = errno;
    unlink(tmp.c_str());
    if (err != EXDEV || dir == DirName(path)) {
      return MakeError("rename to " + Quote(path) + " from " + Quote(tmp), err).Wrap(context);
    }
  }
  // The rename is durable only once the directory entry is.
  if (auto s = SyncDir(DirName(path), sync); !s) return s.error().Wrap(context);
  return Ok{};
}

}  // namespace

Status AtomicWriteFile(const std::string& path, const std::string& content, SyncOps& sync) {
  return ReplaceVia(path, content, DirName(path), kKeepMode, sync);
}

Status AtomicWriteFileMode(const std::string& path, const std::string& content, mode_t mode,
                           SyncOps& sync) {
  return ReplaceVia(path, content, DirName(path), mode, sync);
}

Status AtomicWriteFileVia(const std::string& path, const std::string& content,
                          const std::string& tmp_dir, SyncOps& sync) {
  return ReplaceVia(path, content, tmp_dir, kKeepMode, sync);
}

Status AppendLine(const std::string& path, const std::string& line) {
  // O_NONBLOCK: a FIFO with no reader fails (ENXIO) instead of blocking the
  // container's start until one comes; a socket fails too (ENXIO), a
  // directory with EISDIR. Whatever opens is then checked to be a regular
  // file, on which writes never block.
  UniqueFd fd(open(path.c_str(),
                   O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK,
                   0640));
  if (fd.get() < 0) return MakeError("open log " + Quote(path), errno);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return MakeError("stat log " + Quote(path), errno);
  if (!S_ISREG(st.st_mode)) return MakeError("log " + Quote(path) + " is not a regular file");
  return AppendWhole(fd.get(), path, line + "\n", write);
}

uint64_t LogLinesDropped() { return g_dropped.load(); }

Status AppendWhole(int fd, const std::string& path, const std::string& data, WriteFn write_fn) {
  const auto dropped = [&](const std::string& why, int err) {
    g_dropped.fetch_add(1);
    return MakeError("log " + Quote(path) + ": a line of " + std::to_string(data.size()) +
                         " bytes dropped, nothing written (" + why + ")",
                     err);
  };
  // Room first: a full disk (ENOSPC), a quota or RLIMIT_FSIZE (EFBIG) then
  // refuses the line before a byte of it is written. Filesystems without
  // fallocate(2) go on to the write, whose shortfall is cut off below.
  struct stat st {};
  if (fstat(fd, &st) == 0 &&
      fallocate(fd, FALLOC_FL_KEEP_SIZE, st.st_size, static_cast<off_t>(data.size())) != 0 &&
      (errno == ENOSPC || errno == EFBIG || errno == EDQUOT)) {
    return dropped(std::strerror(errno), errno);
  }
  ssize_t n = write_fn(fd, data.data(), data.size());
  if (n < 0) return dropped(std::strerror(errno), errno);
  if (static_cast<size_t>(n) == data.size()) return Ok{};
  // A short write: cut our part off again, unless a writer appended after it.
  const int err = errno;
  const off_t end = lseek(fd, 0, SEEK_CUR);
  struct stat now {};
  if (end >= n && fstat(fd, &now) == 0 && now.st_size == end) {
    [[maybe_unused]] int cut = ftruncate(fd, end - n);
  }
  return dropped("short write of " + std::to_string(n) + " bytes", err);
}

std::string Rfc3339Now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Result<FileId> StatFollow(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return MakeError("stat " + Quote(path), errno);
  return FileId{st.st_dev, st.st_ino, st.st_mode};
}

}  // namespace ocirlimit
