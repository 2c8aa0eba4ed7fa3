// The chain resolver: what a runtime handler really execs on this node.
// A handler names a binary (containerd's BinaryName, CRI-O's runtime_path,
// a docker runtime's path); oci-rlimit-runtime execs the first of its
// `[runtime] runtimes` that resolves on the engine's PATH and is not itself;
// NVIDIA's runtime execs the first of its config's `runtimes`; the chain
// ends at runc or crun. Anything else cannot be followed, so it is not
// proved. The wrapper refuses to run twice in one chain (its loop guard),
// so a second wrapper, or a second NVIDIA runtime, is a loop.
#pragma once

#include <string>
#include <vector>

#include "adapters/engines/node_files.h"

namespace ocirlimit::engines {

enum class ProgramKind { kWrapper, kNvidia, kLowLevel, kOther };

struct ChainStep {
  std::string name;  // as configured: "runc", "/usr/bin/oci-rlimit-runtime"
  std::string path;  // the node path it resolved to
  std::string real;  // after symlinks
  ProgramKind kind = ProgramKind::kOther;
  std::string via;  // what named it: "BinaryName", "[runtime] runtimes (FILE)", ...
};

enum class ChainEnd {
  kRuntime,  // proved: ends at runc or crun
  kMissing,  // a step does not resolve: every container through it fails
  kLoop,     // a program comes back: every container through it fails
  kUnknown,  // a program doctor cannot follow, or a config it cannot read
};

struct Chain {
  std::vector<ChainStep> steps;
  ChainEnd end = ChainEnd::kUnknown;
  std::string problem;             // one line, unless end is kRuntime
  std::vector<std::string> notes;  // shadowing: a name skipped because it is the wrapper
  bool wrapper = false;            // oci-rlimit-runtime runs: the limits are applied
  bool nvidia = false;             // NVIDIA's runtime runs
  // "/usr/bin/oci-rlimit-runtime -> /usr/local/nvidia/toolkit/nvidia-container-runtime ->
  // /usr/sbin/runc"
  std::string Text() const;
};

// oci-rlimit's config as the wrapper reads it: its runtimes and the file
// that set them.
struct WrapperSettings {
  bool readable = true;  // false: the config does not parse; `error` says why
  std::string error;
  std::vector<std::string> runtimes = {"runc", "crun"};
  std::string source;  // the file that set [runtime] runtimes, or "" (the default)
};

struct ChainStart {
  std::string binary;     // as configured
  std::string via;        // "BinaryName", "runtime_path", "daemon.json path"
  std::string path_list;  // the PATH the engine gives the runtime
};

Chain ResolveChain(NodeFiles& fs, const ChainStart& start, const WrapperSettings& wrapper);

// The kind of a program by the file name its path resolves to.
ProgramKind KindOf(NodeFiles& fs, const std::string& node_path);

}  // namespace ocirlimit::engines
