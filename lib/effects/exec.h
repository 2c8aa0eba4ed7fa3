// Running a program and reading what it prints, bounded in time and size:
// the wrapper asks the runtime for a container's state this way.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "formats/error.h"

namespace ocirlimit {

// Runs argv[0] (a path) with argv, stdin /dev/null, stderr discarded, and
// returns its stdout when it exits 0. Kills it (SIGKILL) and fails when it
// has not exited within timeout_ms, or when stdout passes max_bytes.
Result<std::string> RunCaptured(const std::vector<std::string>& argv, int timeout_ms,
                                size_t max_bytes);

}  // namespace ocirlimit
