// oci-rlimit's TOML configuration, shared by the hook, the runtime wrapper
// and the admin CLI. Parsing here is pure: the caller reads the file and the
// environment (effects/config_loader.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/pattern.h"
#include "formats/error.h"
#include "formats/rlimit.h"

namespace ocirlimit {

inline constexpr std::string_view kDefaultConfigPath = "/etc/oci-rlimit/config.toml";
inline constexpr std::string_view kConfigEnv = "OCI_RLIMIT_CONFIG";
inline constexpr std::string_view kRlimitsEnv = "OCI_RLIMIT_RLIMITS";
inline constexpr std::string_view kNvidiaRlimitsEnv = "NVIDIA_CONTAINER_RUNTIME_RLIMITS";

enum class OnError { kFail, kWarn };

// RuleMatch's regexes, compiled once when the config is parsed (a daemon
// decides many containers with one config; 50k annotations must not mean
// 50k compiles per pattern).
struct CompiledMatch {
  std::vector<std::pair<Regex, Regex>> annotations;
  std::vector<Regex> env_values;  // one per RuleMatch::env_values entry
};

// `rootless`: what a caller outside the initial user namespace (a rootless
// engine) does with a limit it cannot set (core/unprivileged.h).
enum class Rootless {
  kDegrade,  // soft limits up to the caller's hard one, lowering applies; one warning
  kFail,     // the container fails, as for a rootful engine
};

// When a rule applies (docs/policy.md). Kinds that are set must all hold; a
// kind holds when any one of its entries does. Patterns are checked at parse.
struct RuleMatch {
  bool always = false;
  // key ERE -> value ERE, both matched against the whole text.
  std::vector<std::pair<std::string, std::string>> annotations;
  // Set, and not empty, "void" or "none" (NVIDIA_VISIBLE_DEVICES' no-GPU values).
  std::vector<std::string> env;
  // NAME -> value ERE.
  std::vector<std::pair<std::string, std::string>> env_values;
  // fnmatch(3) globs over linux.devices[].path.
  std::vector<std::string> devices;
  // fnmatch(3) globs over qualified CDI device names ("nvidia.com/gpu=*"),
  // as named to an injector the node runs ([cdi] injectors; ContainerFacts::cdi_devices).
  std::vector<std::string> cdi;
  // fnmatch(3) globs over the Kubernetes namespace and pod name, as the
  // runtime states them (ContainerFacts::pod_namespace, pod_name).
  std::vector<std::string> namespaces;
  std::vector<std::string> pods;
  // Set by ParseConfig (CompileRuleMatch); a hand-built RuleMatch without it
  // is compiled on each match.
  std::shared_ptr<const CompiledMatch> compiled;
};

// The compiled regexes of m's patterns.
std::shared_ptr<const CompiledMatch> CompileRuleMatch(const RuleMatch& m);

// One [[rule]] table.
struct Rule {
  std::string name;  // given, or "rule[N]"
  std::vector<Rlimit> rlimits;
  RuleMatch match;
};

enum class OverCeiling { kClamp, kReject };

// Where a container's request comes from (docs/policy.md, "Requests"); every
// one is the author's, so each is a request under the ceilings, never a fact.
enum class RequestSource {
  kOciRlimit,       // the annotation oci-rlimit.io/rlimits
  kUlimitAdjuster,  // the NRI sample's ulimits.noderesource.dev/container.NAME
  kSpec,            // the spec's own process.rlimits (securityContext.ulimits, --ulimit)
};
// "oci-rlimit", "ulimit-adjuster", "spec"; nullopt for any other name.
const char* RequestSourceName(RequestSource s);
std::optional<RequestSource> FindRequestSource(std::string_view name);

// [requests]: what a container may ask for, and through which sources.
struct Requests {
  bool enabled = false;
  std::vector<Rlimit> ceilings;  // types not listed here cannot be requested
  OverCeiling over_ceiling = OverCeiling::kClamp;
  // In this order: a later source's entry replaces an earlier one's of the same type.
  std::vector<RequestSource> sources = {RequestSource::kOciRlimit};
};
// requests.sources (`at` names it in errors): a non-empty list of source
// names, each once, into req.sources.
Status SetRequestSources(const std::vector<std::string>& names, const std::string& at,
                         Requests& req);

// Who turns a CDI device name into a device on this node ([cdi] injectors):
// only names given to an injector listed here count for a rule's cdi match.
inline constexpr std::string_view kCdiInjectorNvidiaNri = "nvidia-nri";
inline constexpr std::string_view kCdiInjectorNvidiaRuntime = "nvidia-runtime";

struct Config {
  // Top-level rlimits: every container, before the rules (docs/policy.md).
  std::vector<Rlimit> rlimits;
  std::vector<Rule> rules;  // in file order; a later match wins per type
  Requests requests;
  OnError on_error = OnError::kFail;
  Rootless rootless = Rootless::kDegrade;
  std::string log_file;  // empty: no log
  // [runtime] runtimes: low-level runtimes tried in order by oci-rlimit-runtime.
  std::vector<std::string> runtimes = {"runc", "crun"};
  std::string chain;                       // [hook] chain: a hook exec'd after ours
  std::vector<std::string> cdi_injectors;  // [cdi] injectors: kCdiInjector*
  std::string source;                      // the file it came from, or empty
};

// Parses a config file's text. `source` names the file in errors.
Result<Config> ParseConfig(std::string_view toml_text, const std::string& source);

// One file of a config: its path (for errors) and its text.
struct ConfigFile {
  std::string path;
  std::string text;
};

// Parses several files as one config (docs/policy.md, "Drop-ins"): files
// are merged in the order given, tables key by key, [[rule]] tables
// appended, any other key replaced by the later file. Each file must be
// valid TOML on its own; the merged result is then checked as one config.
Result<Config> ParseConfigFiles(const std::vector<ConfigFile>& files);

// The drop-in directory of a config file: "/etc/oci-rlimit/config.toml" ->
// "/etc/oci-rlimit/config.d" (".toml" replaced by ".d", else ".d" appended).
// Its *.toml files, in name order, are read before the file itself, so the
// file has the last word (an installer owns a drop-in, the admin the file).
std::string DropInDir(std::string_view config_path);

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
