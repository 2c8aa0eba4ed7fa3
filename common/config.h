// oci-rlimit's TOML configuration, shared by the hook, the runtime wrapper
// and the admin CLI. Parsing here is pure: the caller reads the file and the
// environment (see config_load.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "error.h"
#include "rlimit.h"

namespace ocirlimit {

inline constexpr std::string_view kDefaultConfigPath = "/etc/oci-rlimit/config.toml";
inline constexpr std::string_view kConfigEnv = "OCI_RLIMIT_CONFIG";
inline constexpr std::string_view kRlimitsEnv = "OCI_RLIMIT_RLIMITS";
inline constexpr std::string_view kNvidiaRlimitsEnv = "NVIDIA_CONTAINER_RUNTIME_RLIMITS";

enum class OnError { kFail, kWarn };

struct Config {
  std::vector<Rlimit> rlimits;
  OnError on_error = OnError::kFail;
  std::string log_file;  // empty: no log
  // [runtime] runtimes: low-level runtimes tried in order by oci-rlimit-runtime.
  std::vector<std::string> runtimes = {"runc", "crun"};
  std::string chain;   // [hook] chain: a hook exec'd after ours
  std::string source;  // the file it came from, or empty
};

// Parses a config file's text. `source` names the file in errors.
Result<Config> ParseConfig(std::string_view toml_text, const std::string& source);

using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;

// Applies OCI_RLIMIT_RLIMITS and NVIDIA_CONTAINER_RUNTIME_RLIMITS: their
// entries override file entries of the same type (ours over NVIDIA's).
Result<Config> ApplyEnvOverrides(Config config, const EnvLookup& env);

struct ConfigPath {
  std::string path;
  bool must_exist;  // named by flag or environment, not the built-in default
};

// --config beats OCI_RLIMIT_CONFIG beats the default path.
ConfigPath ResolveConfigPath(const std::optional<std::string>& flag, const EnvLookup& env);

}  // namespace ocirlimit
