// oci-prlimit-helper: sets rlimits on another process (a container's init)
// from the host, holding no capability but CAP_SYS_RESOURCE. Also usable as a
// createRuntime/prestart hook with --state. The flow is flow.cc; the
// test build (oci-prlimit-helper-testing) adds only test_pause.cc's ops.
#include "effects/run_main.h"
#include "prlimit-helper/flow.h"
#ifdef OCI_RLIMIT_HELPER_TESTING
#include "prlimit-helper/test_pause.h"
#endif

int main(int argc, char** argv) {
  return ocirlimit::RunMain("oci-prlimit-helper", [&] {
#ifdef OCI_RLIMIT_HELPER_TESTING
    return ocirlimit::RunHelper(ocirlimit::ArgsOf(argc, argv), ocirlimit::TestingHelperOps(), true);
#else
    return ocirlimit::RunHelper(ocirlimit::ArgsOf(argc, argv), ocirlimit::LinuxHelperOps(), false);
#endif
  });
}
