// Programs kept xz-compressed beside the clone (../shared/cluster: CRI-O;
// ../shared/nvidia: NVIDIA's toolkit), unpacked for a suite and checked
// against the sha256 their README gives.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ocirlimit::itest {

struct Pinned {
  const char* name;
  const char* sha256;  // of the uncompressed file
};

// Unpacks `xz` into `out` (through a temp file, mode 0755) unless `out`
// already holds the pinned bytes. An error text, or nullopt.
std::optional<std::string> UnpackPinned(const std::string& xz, const std::string& out,
                                        const std::string& sha256);

// NVIDIA Container Toolkit v1.20.0, built from its release source
// (../shared/nvidia/README.md), from the directory this variable names.
inline constexpr const char* kNvidiaDirVar = "OCI_RLIMIT_NVIDIA_DIR";
inline constexpr Pinned kNvidiaToolkit[] = {
    {"nvidia-ctk", "e0dc2754a49a134861764c2d4b0aa8860ae0fe1e0defe7c2f78689fd34f8fdc6"},
    {"nvidia-ctk-installer", "042e43c85a18340d00358a38bc70f38a5d075a9f5c4e4d21303257fc47aa6bf2"},
    {"nvidia-container-runtime",
     "3a41df0daa5c89c49d695f99241165aaf246f570bcbf96412ad4d6e573f02910"},
    {"nvidia-container-runtime-hook",
     "88337d2d719193e2eb58225b6551783519e07c4df4b096c4d9553d4519e24005"},
    {"nvidia-cdi-hook", "f3a44eaebabe71f656ee756cdf6fe4510256ac35288a260a9ac19075ae64ebfa"},
};

struct NvidiaBinaries {
  std::string dir;    // where every program of kNvidiaToolkit lies, unpacked
  std::string skip;   // not empty: the one line a skipped test prints
  std::string error;  // not empty: the test fails
  std::string Path(const std::string& name) const { return dir + "/" + name; }
};

// OCI_RLIMIT_NVIDIA_DIR's programs unpacked into `cache`; unset, the skip
// line; set with a program missing or a checksum wrong, the error.
NvidiaBinaries FindNvidiaToolkit(const std::string& cache);

// The toolkit pod's source root under `src` for nvidia-ctk-installer's
// --toolkit-source-root (../shared/nvidia/README.md): usr/bin with NVIDIA's
// programs, stand-ins for nvidia-container-cli and libnvidia-container's
// libraries, which are not here. Returns `src`.
std::string NvidiaSourceRoot(const NvidiaBinaries& nv, const std::string& src);

}  // namespace ocirlimit::itest
