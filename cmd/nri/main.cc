// oci-rlimit-nri: oci-rlimit's NRI plugin (docs/nri.md); the flow is nri/flow.h.
#include <malloc.h>

#include "effects/run_main.h"
#include "nri/flow.h"

int main(int argc, char** argv) {
  mallopt(M_ARENA_MAX, 1);  // one arena for all threads: 4 MiB budget (docs/performance.md)
  return ocirlimit::RunMain("oci-rlimit-nri", [&] {
    return ocirlimit::nri::RunNriPlugin(ocirlimit::ArgsOf(argc, argv));
  });
}
