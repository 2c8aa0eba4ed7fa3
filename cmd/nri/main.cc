// oci-rlimit-nri: oci-rlimit's NRI plugin (docs/nri.md). The flow is
// nri/flow.h.
#include <malloc.h>

#include "effects/run_main.h"
#include "nri/flow.h"

int main(int argc, char** argv) {
  // One malloc arena for all three threads (requests, log writer, metrics):
  // glibc would give each other thread an arena of its own, pages the 4 MiB
  // budget pays for while the threads rarely allocate at once.
  mallopt(M_ARENA_MAX, 1);
  return ocirlimit::RunMain("oci-rlimit-nri", [&] {
    return ocirlimit::nri::RunNriPlugin(ocirlimit::ArgsOf(argc, argv));
  });
}
