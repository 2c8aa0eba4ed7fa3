// File and fd effects used by every entry point. Reads are bounded, writes
// are atomic or single-syscall appends, nothing follows a final symlink.
#pragma once

#include <optional>
#include <string>

#include "config.h"
#include "error.h"

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

// getenv(3), as an EnvLookup.
EnvLookup ProcessEnv();

// Resolves the path (--config, OCI_RLIMIT_CONFIG, default), reads and parses
// it, and applies the environment overrides. A missing default file is "no
// file"; a missing named file is an error.
Result<Config> LoadConfig(const std::optional<std::string>& flag, const EnvLookup& env);

// The *.toml files of a drop-in directory (config.h, DropInDir), sorted by
// name, hidden files skipped; empty when the directory is missing.
Result<std::vector<std::string>> ListDropIns(const std::string& dir);

// LoadConfig's read, parse and overrides for an already resolved path: the
// drop-ins of DropInDir(path) in name order, then the file itself.
Result<Config> LoadConfigFrom(const ConfigPath& where, const EnvLookup& env);

}  // namespace ocirlimit
