// Chain mode: after setting the limits, oci-rlimit-hook execs another hook
// with the same argv, environment and state bytes. This is how oci-rlimit
// rides on docker's `--gpus`, where dockerd only ever runs a program named
// nvidia-container-runtime-hook. The stat(2) and exec are effects
// (effects/files.h, hook/chain_exec.h and chain_exec_linux.cc); this is the policy.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "effects/files.h"
#include "formats/error.h"

namespace ocirlimit {

struct ChainTarget {
  std::string path;
  std::string origin;  // where the path came from, for error messages
};

// The hook to exec after ours: `[hook] chain` when set; else NVIDIA's hook
// when we run under its name (the docker shim), so that a shim without a
// config never silently drops the GPU set-up; else none.
std::optional<ChainTarget> ResolveChain(const std::string& configured, std::string_view argv0);

// Refuses a target that stat(2) failed on, that is not an executable regular
// file, or that is this very program (same device and inode as
// /proc/self/exe, whatever symlinks lead there): that would exec forever.
Status CheckChainTarget(const ChainTarget& target, const Result<FileId>& target_id,
                        const FileId& self);

}  // namespace ocirlimit
