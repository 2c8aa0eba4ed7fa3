// oci-rlimit-runtime --oci-rlimit-help: what the wrapper does, in runc's argv.
#pragma once

namespace ocirlimit {

inline constexpr const char* kUsage =
    "usage: oci-rlimit-runtime [RUNTIME-FLAGS] COMMAND [ARGS...]   (runc's argv)\n"
    "       oci-rlimit-runtime --oci-rlimit-help\n"
    "       oci-rlimit-runtime --version\n"
    "\n"
    "A runc-compatible wrapper. On create and run it merges the configured rlimits into\n"
    "process.rlimits of the bundle's config.json, on exec into the --process file; then\n"
    "it execs the real runtime with the same argv. Every other command, --help included,\n"
    "goes to the real runtime unchanged. --version prints this version line, then the\n"
    "runtime's (exit 1 when no runtime is found).\n"
    "\n"
    "Config: $OCI_RLIMIT_CONFIG, else /etc/oci-rlimit/config.toml (there is no --config:\n"
    "the argv is runc's). $OCI_RLIMIT_RLIMITS and $NVIDIA_CONTAINER_RUNTIME_RLIMITS\n"
    "(\"memlock=unlimited,...\") override file entries of the same type.\n"
    "Runtime: the first of [runtime] runtimes (default \"runc\", \"crun\") found on PATH,\n"
    "or an absolute path; never this wrapper itself.\n"
    "Exit status: the runtime's; 1 when the wrapper failed before exec'ing it (then it\n"
    "changed nothing and ran nothing).\n";

}  // namespace ocirlimit
