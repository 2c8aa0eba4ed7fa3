// oci-rlimit-runtime --oci-rlimit-help: what the wrapper does, in runc's argv.
#pragma once

namespace ocirlimit {

inline constexpr const char* kUsage =
    "usage: oci-rlimit-runtime [--config PATH] [RUNTIME-FLAGS] COMMAND [ARGS...]\n"
    "       oci-rlimit-runtime [--config PATH] --oci-rlimit-help\n"
    "       oci-rlimit-runtime --version\n"
    "\n"
    "A runc-compatible wrapper. On create and run it merges the configured rlimits into\n"
    "process.rlimits of the bundle's config.json, on exec into the --process file; then\n"
    "it execs the real runtime with the same argv, less its own --config. Every other\n"
    "command, --help included, goes to the real runtime unchanged. --version prints\n"
    "this version line, then the runtime's (exit 1 when no runtime is found).\n"
    "\n"
    "Config: --config PATH (first, before runc's flags: docker's runtimeArgs), else\n"
    "$OCI_RLIMIT_CONFIG, else /etc/oci-rlimit/config.toml. $OCI_RLIMIT_RLIMITS and\n"
    "$NVIDIA_CONTAINER_RUNTIME_RLIMITS (\"memlock=unlimited,...\") override file entries\n"
    "of the same type.\n"
    "Runtime: the first of [runtime] runtimes (default \"runc\", \"crun\") found on PATH,\n"
    "or an absolute path; never this wrapper itself.\n"
    "Exit status: the runtime's; 1 when the wrapper failed before exec'ing it (then it\n"
    "changed nothing and ran nothing).\n";

}  // namespace ocirlimit
