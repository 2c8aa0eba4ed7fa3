// File and fd effects used by every entry point. Reads are bounded, writes
// are atomic or single-syscall appends, nothing follows a final symlink.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "formats/error.h"

namespace ocirlimit {

// Reads a regular file, refusing directories and anything over max_bytes.
// A missing file is an error with err == ENOENT.
Result<std::string> ReadFileBounded(const std::string& path, size_t max_bytes);

// Reads fd to EOF, failing past max_bytes or when no EOF comes within
// timeout_ms in total (a runtime that never closes our stdin).
Result<std::string> ReadFdBounded(int fd, size_t max_bytes, int timeout_ms);

// The fsync(2) calls that make a replacement durable, behind a seam so a
// test can see that both happen, on which file, and in which order.
class SyncOps {
 public:
  virtual ~SyncOps() = default;
  // fsync(2) of fd; `what` is "file" (the temp file, before the rename) or
  // "directory" (the file's directory, after it).
  virtual Status Fsync(int fd, const char* what) = 0;
};

// The real fsync(2).
SyncOps& LinuxSyncOps();

// Replaces path atomically: temp file in the same directory, owner then
// mode (chown(2) clears setuid/setgid, so they are set after it), content,
// fsync, rename, fsync of the directory. Mode (all 07777 bits) and owner of
// the old file are kept. Refuses when path is a symlink. A failed fsync of
// the temp file leaves the old file in place; a failed fsync of the
// directory is an error too, though the new content is then in place.
Status AtomicWriteFile(const std::string& path, const std::string& content,
                       SyncOps& sync = LinuxSyncOps());
// The same, but the new file's mode is `mode` (the temp file's, set before
// the rename), whatever the umask and the old file's mode: a file others must
// read (audit's textfile for a non-root node_exporter) stays readable.
Status AtomicWriteFileMode(const std::string& path, const std::string& content, mode_t mode,
                           SyncOps& sync = LinuxSyncOps());

// The directory for a temp file that replaces or places `path`: its own, or
// for a directory an engine watches (a name ending in ".d": hooks.d,
// crio.conf.d, containerd's conf.d) the one above it, on the same
// filesystem as a rule, so the engine never reads a half-written
// .oci-rlimit.XXXXXX as it appears (issue 37: crio logged "unexpected end of
// JSON input" for one).
std::string TempDirFor(const std::string& path);

// AtomicWriteFile with the temp file in `tmp_dir` (TempDirFor); where a
// rename from there crosses filesystems (EXDEV), in path's own directory.
Status AtomicWriteFileVia(const std::string& path, const std::string& content,
                          const std::string& tmp_dir, SyncOps& sync = LinuxSyncOps());

// A new file at `path` with `mode`: written whole to a temp file in
// `tmp_dir`, then linked into place, so it never appears empty or half
// written; EEXIST when `path` exists. Where the link crosses filesystems
// (EXDEV), the temp file is in path's own directory.
Status PlaceNewFile(const std::string& path, const std::string& content, mode_t mode,
                    const std::string& tmp_dir);

// One O_APPEND write, so concurrent writers never interleave within a line.
// Opened non-blocking without following a final symlink, and refused unless
// it is a regular file: a FIFO, socket or directory there is an error, never
// a wait. A line is written whole or not at all: its room is reserved first
// (fallocate), and a short write (a full disk, RLIMIT_FSIZE) is cut off
// again, so no torn line without its newline is ever left. A line not
// written is counted (LogLinesDropped) and the error says so.
Status AppendLine(const std::string& path, const std::string& line);

// AppendLine's write of `data` (a line and its newline) to an O_APPEND fd,
// with write(2) as a parameter so a test can make it fall short.
using WriteFn = ssize_t (*)(int fd, const void* buf, size_t n);
Status AppendWhole(int fd, const std::string& path, const std::string& data, WriteFn write_fn);

// Lines AppendLine could not write whole since the process started.
uint64_t LogLinesDropped();

// Writes all of `data` to fd.
Status WriteAll(int fd, const std::string& data);

// The current UTC time as RFC 3339, for log lines ("2026-11-29T14:10:00Z").
std::string Rfc3339Now();

// What stat(2) says about a file. Two FileIds are the same file when device
// and inode agree, whatever symlinks or hard links led to them.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  mode_t mode = 0;
  bool operator==(const FileId& o) const { return dev == o.dev && ino == o.ino; }
};

// stat(2), following symlinks. "/proc/self/exe" gives this program.
Result<FileId> StatFollow(const std::string& path);

}  // namespace ocirlimit
