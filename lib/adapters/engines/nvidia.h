// NVIDIA's container runtime as configured on this node: which config.toml
// a given nvidia-container-runtime reads, and the low-level runtimes it
// execs (`[nvidia-container-runtime] runtimes`, looked up on its PATH in
// order). The GPU Operator installs the toolkit under
// /usr/local/nvidia/toolkit/ with its own config beside it.
#pragma once

#include <string>
#include <vector>

#include "adapters/engines/node_files.h"
#include "formats/error.h"

namespace ocirlimit::engines {

// True for NVIDIA's runtime by file name (nvidia-container-runtime and its
// .cdi and .legacy modes).
bool IsNvidiaRuntimeName(const std::string& file_name);

struct NvidiaConfig {
  std::vector<std::string> runtimes;  // in order
  std::string source;                 // the file, or "" for the toolkit's defaults
  bool runtimes_set = false;          // the file sets runtimes
  // accept-nvidia-visible-devices-envvar-when-unprivileged (the toolkit's
  // default: true). False: NVIDIA ignores NVIDIA_VISIBLE_DEVICES in an
  // unprivileged container, so the variable injects no device there.
  bool envvar_when_unprivileged = true;
};

inline constexpr std::string_view kNvidiaEnvvarUnprivilegedKey =
    "accept-nvidia-visible-devices-envvar-when-unprivileged";

[[nodiscard]] Result<NvidiaConfig> ParseNvidiaConfig(std::string_view text,
                                                     const std::string& source);

// The config a runtime at node path `binary` reads: the operator's for one
// under /usr/local/nvidia/toolkit/, else /etc/nvidia-container-runtime/.
std::string NvidiaConfigPathFor(const std::string& binary);

// Reads that config; a missing file is the toolkit's defaults.
[[nodiscard]] Result<NvidiaConfig> ReadNvidiaConfig(NodeFiles& fs, const std::string& binary);

// Why this node cannot back the `nvidia-runtime` CDI injector ([cdi]
// injectors): NVIDIA's runtime runs in no handler's chain (`nvidia_runtimes`,
// the node paths of those that run in one, is empty), or the config one of
// them reads ignores the variable in unprivileged containers, or cannot be
// read. One line each; empty when it can.
[[nodiscard]] std::vector<std::string> NvidiaInjectorGaps(
    NodeFiles& fs, const std::vector<std::string>& nvidia_runtimes);

}  // namespace ocirlimit::engines
