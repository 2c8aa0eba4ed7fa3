// The effects of chain mode (policy in common/chain.h): stat(2) the target
// and exec it with the state bytes on stdin.
#pragma once

#include <string>

#include "common/chain.h"
#include "common/error.h"

namespace ocirlimit {

// stat(2), following symlinks. "/proc/self/exe" gives this program.
Result<FileId> StatFollow(const std::string& path);

// Execs `path` with our argv and environment, stdin replaced by a memfd that
// holds exactly `state`: seekable and byte-identical, with no writer to
// deadlock against. Returns only on failure.
Error ExecWithStdin(const std::string& path, char** argv, const std::string& state);

}  // namespace ocirlimit
