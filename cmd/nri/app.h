// oci-rlimit-nri as a whole: arguments, config (and its reload on SIGHUP),
// the connection loop.
#pragma once

namespace ocirlimit::nri {

int RunNriPlugin(int argc, char** argv);

}  // namespace ocirlimit::nri
