// oci-rlimit-nri: oci-rlimit's NRI plugin (docs/nri.md). The flow is
// nri/flow.h.
#include "effects/run_main.h"
#include "nri/flow.h"

int main(int argc, char** argv) {
  return ocirlimit::RunMain("oci-rlimit-nri", [&] {
    return ocirlimit::nri::RunNriPlugin(ocirlimit::ArgsOf(argc, argv));
  });
}
