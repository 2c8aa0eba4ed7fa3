// oci-rlimit-hook: an OCI createRuntime/prestart hook that sets the
// configured rlimits on the container's init process before user code runs;
// with the stage `precreate` (podman), it edits the proposed spec instead.
// The flow is hook/flow.h; its effects are hook/ops.h.
#include <string>
#include <vector>

#include "effects/run_main.h"
#include "hook/flow.h"
#include "hook/ops.h"

int main(int argc, char** argv) {
  // The flow takes argv[0] too: chain mode must not chain to itself.
  return ocirlimit::RunMain(ocirlimit::kHookName, [&] {
    return ocirlimit::RunHook(std::vector<std::string>(argv, argv + argc),
                              ocirlimit::LinuxHookOps());
  });
}
