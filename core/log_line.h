// The one line per container decision that every program appends to the
// config's `log-file`. Values a container can influence are JSON-quoted
// (JsonQuote), so a line is always one line and always parses back.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/rlimit.h"

namespace ocirlimit {

// "memlock 8388608:8388608->unlimited:unlimited nofile ..."
std::string FormatChanges(const std::vector<Change>& changes);

// One log line per container: time, id, pid, each limit old->new, and any
// warnings or error.
std::string FormatLogLine(const std::string& rfc3339_time, const std::string& id, pid_t pid,
                          const std::vector<Change>& changes,
                          const std::vector<std::string>& warnings, const std::string& error);

}  // namespace ocirlimit
