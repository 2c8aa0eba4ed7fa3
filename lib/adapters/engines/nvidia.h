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
};

[[nodiscard]] Result<NvidiaConfig> ParseNvidiaConfig(std::string_view text,
                                                     const std::string& source);

// The config a runtime at node path `binary` reads: the operator's for one
// under /usr/local/nvidia/toolkit/, else /etc/nvidia-container-runtime/.
std::string NvidiaConfigPathFor(const std::string& binary);

// Reads that config; a missing file is the toolkit's defaults.
[[nodiscard]] Result<NvidiaConfig> ReadNvidiaConfig(NodeFiles& fs, const std::string& binary);

}  // namespace ocirlimit::engines
