// The one line per container decision that every program appends to the
// config's `log-file`. Values a container can influence are JSON-quoted
// (JsonQuote), so a line is always one line and always parses back.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "core/rlimit.h"

namespace ocirlimit {

// "memlock 8388608:8388608->unlimited:unlimited nofile ..."
std::string FormatChanges(const std::vector<Change>& changes);

// One container decision, by whichever program made it.
struct LogRecord {
  std::string time;  // RFC 3339, UTC
  std::string id;    // the container id, or the stage when there is none yet ("precreate")
  // The hook: the init process and each limit old->new on it.
  std::optional<pid_t> pid;
  std::vector<Change> changes;
  // A spec edit (oci-rlimit-runtime, precreate, NRI): where, and the limits written.
  std::string via;  // "create", "exec", "precreate", ...; empty for the hook
  std::vector<Rlimit> limits;
  std::vector<std::string> warnings;  // notes on requests, conflicts, on-error excuses
  std::string error;
};

// TIME id="ID" pid=N memlock 1:1->2:2 ... | TIME id="ID" via="create" set memlock=2:2 ...,
// or "unchanged", then warning="..."... and error="...". Every value a
// container can influence goes through JsonQuote.
std::string FormatLogLine(const LogRecord& r);

// The hook's record, as FormatLogLine(LogRecord) writes it.
std::string FormatLogLine(const std::string& rfc3339_time, const std::string& id, pid_t pid,
                          const std::vector<Change>& changes,
                          const std::vector<std::string>& warnings, const std::string& error);

}  // namespace ocirlimit
