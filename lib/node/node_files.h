// The node installer's own files, rendered by real serializers (toml++ and
// nlohmann JSON, never by pasting strings), and the installer's record of a
// node (`oci-rlimit node install|uninstall`, node_install.h). Pure: values
// in, text out, text in, values out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "adapters/engines/constants.h"
#include "adapters/engines/crio.h"
#include "formats/error.h"
#include "formats/rlimit.h"

namespace ocirlimit::node {

// Where the installer keeps what it did and the node's mode.
inline constexpr std::string_view kStateDir = "/var/lib/oci-rlimit/node-install";
inline constexpr std::string_view kDropin = "/etc/oci-rlimit/config.d/50-installer.toml";
// Where --policy puts the fleet's file: read after every drop-in, so it wins.
inline constexpr std::string_view kNodeConfig = "/etc/oci-rlimit/config.toml";
inline constexpr std::string_view kContainerdConfig = engines::kContainerdConfig;
// In the one hooks dir stock CRI-O reads (engines::kStockHooksDir), and in
// CRI-O's drop-in dir (engines::kCrioConfDir).
inline constexpr std::string_view kCrioHook = "/usr/share/containers/oci/hooks.d/oci-rlimit.json";
// CRI-O reads crio.conf.d in name order, a later file winning per key: ours
// sorts after NVIDIA's 99-nvidia.conf (toolkit 1.19+), which may hold a copy
// of our handler. Installs before that wrote kOldCrioHandler.
inline constexpr std::string_view kCrioHandler = "/etc/crio/crio.conf.d/99-oci-rlimit.conf";
inline constexpr std::string_view kOldCrioHandler = "/etc/crio/crio.conf.d/50-oci-rlimit.conf";
// NVIDIA's runtime where the GPU Operator puts it, then where the toolkit's
// packages do: the wrapper takes the first that exists when a pod starts,
// so a node installed before the operator still finds the operator's.
const std::vector<std::string>& NvidiaRuntimeCandidates();

// What a node was installed as, remembered across runs: a rerun without
// --nvidia keeps NVIDIA in the chain (only --no-nvidia removes it).
struct NodeMode {
  std::string prefix;                 // the programs are in PREFIX/bin
  std::vector<std::string> runtimes;  // "containerd", "crio"
  bool nvidia = false;
  std::string nvidia_runtime;  // --nvidia-runtime PATH, or "" (the candidates)
  // The bare default handler install had to declare in containerd's config
  // (node_config.h), which uninstall may remove again; "" for none.
  std::string ctd_added_default;
  bool operator==(const NodeMode&) const = default;
};
std::string RenderMode(const NodeMode& mode);
Result<NodeMode> ParseMode(std::string_view text, const std::string& source);

// One line of the manifest: "created PATH", "dir PATH", "statedir PATH",
// "ctdcreated PATH" (node paths, in the order they were made).
struct ManifestEntry {
  std::string kind;
  std::string path;
  bool operator==(const ManifestEntry&) const = default;
};
std::vector<ManifestEntry> ParseManifest(std::string_view text);
std::string RenderManifest(const std::vector<ManifestEntry>& entries);

// --rlimits checked with the rlimit language every program reads: one
// error naming the entry, e.g. `--rlimits: "memlok=unlimited": ...`.
Result<std::vector<std::string>> CheckRlimits(std::string_view csv);

// A node path given on the command line (--prefix, --nvidia-runtime):
// absolute, no control characters, no "." or ".." components.
Status CheckNodePath(std::string_view flag, std::string_view path);

// config.d/50-installer.toml: `rlimits` (none when empty: a fleet file
// sets them), and with NVIDIA `[runtime] runtimes`. The result is parsed
// back with core's config parser.
Result<std::string> RenderDropin(const std::vector<std::string>& rlimits,
                                 const std::vector<std::string>& nvidia_runtimes);
// The CRI-O hooks.d file: PREFIX/bin/oci-rlimit-hook at createRuntime, for
// containers annotated oci-rlimit.io/enable=true.
std::string RenderCrioHook(const std::string& prefix);
// crio.conf.d/99-oci-rlimit.conf: the runtime handler oci-rlimit, with the
// base handler's monitor_path, monitor_cgroup and monitor_env (as NVIDIA's
// installer copies them): crio judges every handler's monitor fields at start.
std::string RenderCrioHandler(const std::string& prefix, const engines::CrioRuntime* base);

}  // namespace ocirlimit::node
