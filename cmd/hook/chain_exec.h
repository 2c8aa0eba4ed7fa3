// The exec of chain mode (policy in hook/chain.h; the stat(2) is
// effects/files.h StatFollow): the chained hook gets the state bytes on stdin.
#pragma once

#include <string>

#include "formats/error.h"

namespace ocirlimit {

// Execs `path` with our argv and environment, stdin replaced by a memfd that
// holds exactly `state`: seekable and byte-identical, with no writer to
// deadlock against. Returns only on failure.
Error ExecWithStdin(const std::string& path, char** argv, const std::string& state);

}  // namespace ocirlimit
