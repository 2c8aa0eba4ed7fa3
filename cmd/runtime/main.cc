// oci-rlimit-runtime: a runc-compatible runtime that merges the configured
// rlimits into the spec (create, run) or the process file (exec), then
// execs the real runtime with the argv it was given.
#include <string>
#include <vector>

#include "effects/run_main.h"
#include "runtime/flow.h"

int main(int argc, char** argv) {
  // The flow takes argv[0] too: it execs the real runtime with the same argv.
  return ocirlimit::RunMain(ocirlimit::kRuntimeName, [&] {
    return ocirlimit::RunRuntimeWrapper(std::vector<std::string>(argv, argv + argc),
                                        ocirlimit::LinuxRuntimeOps());
  });
}
