// oci-rlimit-runtime: a runc-compatible runtime that merges the configured
// rlimits into the spec (create, run) or the process file (exec), then
// execs the real runtime with the argv it was given.
#include <unistd.h>

#include <exception>
#include <string>
#include <vector>

#include "runtime/runtime_wrapper.h"

int main(int argc, char** argv) {
  // Nothing should throw (errors are values); if the library does (bad_alloc),
  // say so in one line instead of aborting.
  try {
    return ocirlimit::RunRuntimeWrapper(std::vector<std::string>(argv, argv + argc),
                                        ocirlimit::LinuxRuntimeOps());
  } catch (const std::exception& e) {
    const std::string line = std::string("oci-rlimit-runtime: internal error: ") + e.what() + "\n";
    (void)!write(STDERR_FILENO, line.data(), line.size());
    return 1;
  }
}
