// Refuses, before anything is written, an NVIDIA runtime that leads back to
// oci-rlimit-runtime: the wrapper itself (by name or by file), or an NVIDIA
// runtime whose own config (`[nvidia-container-runtime] runtimes`) resolves
// to the wrapper. Every pod would otherwise fail with the wrapper's loop
// error.
#pragma once

#include <string>
#include <vector>

#include "formats/error.h"

namespace ocirlimit::node {

struct LoopQuery {
  std::string host;                   // the node's root directory
  std::string wrapper;                // PREFIX/bin/oci-rlimit-runtime, a node path
  std::string source_wrapper;         // the copy about to be installed (a real path), or ""
  std::vector<std::string> runtimes;  // the drop-in's [runtime] runtimes (node paths)
  bool named = false;                 // runtimes[0] came from --nvidia-runtime
  // The engines installed for ("containerd", "crio"): NVIDIA's runtime finds
  // its runtimes on the PATH the engine gives the wrapper (containerd's unit
  // PATH, conmon's default for CRI-O).
  std::vector<std::string> engines = {};
};

Status CheckNoLoop(const LoopQuery& q);

}  // namespace ocirlimit::node
