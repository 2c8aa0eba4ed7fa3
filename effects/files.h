// File and fd effects used by every entry point. Reads are bounded, writes
// are atomic or single-syscall appends, nothing follows a final symlink.
#pragma once

#include <sys/types.h>

#include <string>

#include "core/error.h"

namespace ocirlimit {

// Reads a regular file, refusing directories and anything over max_bytes.
// A missing file is an error with err == ENOENT.
Result<std::string> ReadFileBounded(const std::string& path, size_t max_bytes);

// Reads fd to EOF, failing past max_bytes or when no EOF comes within
// timeout_ms in total (a runtime that never closes our stdin).
Result<std::string> ReadFdBounded(int fd, size_t max_bytes, int timeout_ms);

// Replaces path atomically: temp file in the same directory, fsync, rename,
// fsync of the directory. Mode and owner of the old file are kept. Refuses
// when path is a symlink.
Status AtomicWriteFile(const std::string& path, const std::string& content);

// One O_APPEND write, so concurrent writers never interleave within a line.
Status AppendLine(const std::string& path, const std::string& line);

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
