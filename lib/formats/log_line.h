// The one line per container decision that every program appends to the
// config's `log-file`. Values a container can influence are JSON-quoted
// (JsonQuote), so a line is always one line and always parses back.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/rlimit.h"

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
  std::string via;  // "create", "exec", "precreate", "nri", ...; empty for the hook
  std::vector<Rlimit> limits;
  // What the spec held before, one per `limits` entry, from a writer that
  // says it (the NRI plugin): the spec's entry of that type, or nullopt when
  // the writer was not told (kBeforeUnreported). Empty: not said, as the
  // wrapper and precreate write.
  std::vector<std::optional<LimitPair>> before;
  std::vector<std::string> warnings;  // notes on requests, conflicts, on-error excuses
  std::string error;
};

// A spec edit's "before" when the writer was not told what the spec held:
// "set memlock=unreported->8388608:8388608" (docs/nri.md).
inline constexpr std::string_view kBeforeUnreported = "unreported";

// TIME id="ID" pid=N memlock 1:1->2:2 ... | TIME id="ID" via="create" set memlock=2:2 ...
// (with `before`: set memlock=1:1->2:2, or memlock=unreported->2:2), or
// "unchanged", then warning="..."... and error="...". The id is cut as
// JsonQuoteCut cuts it; every value a container can influence goes through
// JsonQuote, so every item stays one space-free token (NAME=VALUE).
std::string FormatLogLine(const LogRecord& r);

// The hook's record, as FormatLogLine(LogRecord) writes it.
std::string FormatLogLine(const std::string& rfc3339_time, const std::string& id, pid_t pid,
                          const std::vector<Change>& changes,
                          const std::vector<std::string>& warnings, const std::string& error);

// A spec-edit line (`TIME id="C" via="nri" set memlock=...`) whose edit
// never reached the runtime (the reply was not written, or written past the
// runtime's deadline): `TIME id="C" via="nri" unapplied error="WHY; the
// runtime may have created container \"C\" unadjusted" verdict="set
// memlock=..."`, so the log never claims what was not applied. A line of
// another shape keeps its text and gets the error appended.
std::string NotAppliedLine(std::string_view line, std::string_view why);

}  // namespace ocirlimit
