// Loading the config from disk and the environment. The parse itself is
// pure (core/config.h); this file is the only effects code that reaches the
// TOML parser, so programs that load no config (oci-prlimit-helper) link none.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "formats/error.h"

namespace ocirlimit {

// getenv(3), as an EnvLookup.
EnvLookup ProcessEnv();

// Resolves the path (--config, OCI_RLIMIT_CONFIG, default), reads and parses
// it, and applies the environment overrides. A missing default file is "no
// file"; a missing named file is an error.
// A drop-in that vanished between listing its directory and opening it (an
// admin's rename, a package upgrade) is skipped with one line in `warnings`.
Result<Config> LoadConfig(const std::optional<std::string>& flag, const EnvLookup& env,
                          std::vector<std::string>* warnings = nullptr);

// A config and what loading it had to excuse.
struct LoadedConfig {
  Config config;
  std::vector<std::string> warnings;
};

// LoadConfig for a program that touches containers (hook, wrapper): when
// `unprivileged` (not the initial user namespace: a rootless engine), a file
// it may not read (EACCES, a 0600 admin config) is no file plus one warning
// (core/unprivileged.h). Everything else fails as in LoadConfig.
[[nodiscard]] Result<LoadedConfig> LoadConfigAs(const std::optional<std::string>& flag,
                                                const EnvLookup& env, bool unprivileged);

// The *.toml files of a drop-in directory (core/config.h, DropInDir), sorted
// by name, hidden files skipped; empty when the directory is missing.
Result<std::vector<std::string>> ListDropIns(const std::string& dir);

// LoadConfig's read, parse and overrides for an already resolved path: the
// drop-ins of DropInDir(path) in name order, then the file itself.
// A drop-in gone by the time it is opened (ENOENT) is skipped, with one
// line in `warnings`.
Result<Config> LoadConfigFrom(const ConfigPath& where, const EnvLookup& env,
                              std::vector<std::string>* warnings = nullptr);

}  // namespace ocirlimit
