// oci-rlimit-nri: oci-rlimit's NRI plugin (docs/nri.md).
#include "nri/app.h"

int main(int argc, char** argv) { return ocirlimit::nri::RunNriPlugin(argc, argv); }
