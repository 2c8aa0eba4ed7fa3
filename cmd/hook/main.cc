// oci-rlimit-hook: an OCI createRuntime/prestart hook that sets the
// configured rlimits on the container's init process before user code runs;
// with the stage `precreate` (podman), it edits the proposed spec instead.
// The flow is hook/hook_flow.h; its effects are hook/hook_ops.h.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "hook/hook_flow.h"
#include "hook/hook_ops.h"

int main(int argc, char** argv) {
  // Nothing should throw (errors are values); if the library does (bad_alloc),
  // say so in one line instead of aborting.
  try {
    return ocirlimit::RunHook(std::vector<std::string>(argv, argv + argc),
                              ocirlimit::LinuxHookOps());
  } catch (const std::exception& e) {
    std::cerr << "oci-rlimit-hook: internal error: " << e.what() << "\n";
    return 1;
  }
}
