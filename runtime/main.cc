// oci-rlimit-runtime: a runc-compatible runtime that merges the configured
// rlimits into the spec (create, run) or the process file (exec), then
// execs the real runtime with the argv it was given.
#include <string>
#include <vector>

#include "runtime/runtime_wrapper.h"

int main(int argc, char** argv) {
  return ocirlimit::RunRuntimeWrapper(std::vector<std::string>(argv, argv + argc),
                                      ocirlimit::LinuxRuntimeOps());
}
