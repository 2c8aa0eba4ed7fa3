// Whether oci-rlimit-nri's status file (formats/nri_status.h) is believed:
// one rule for doctor's NRI lines and audit's scope (issue 37: audit took
// the scope "oci-rlimit-nri governs every container" from a file doctor
// called stale). Believed only when it parses, names its writer, and that
// process (pid and start time, /proc/PID/stat) runs now.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "formats/error.h"
#include "formats/nri_status.h"

namespace ocirlimit {

enum class NriTrust { kBelieved, kUnreadable, kNoWriter, kStale };

// Whether the process `pid` that started at `start` (clock ticks after
// boot) runs now.
using WriterRuns = std::function<bool(uint64_t pid, uint64_t start)>;

[[nodiscard]] NriTrust TrustNriStatus(const Result<NriStatus>& status, const WriterRuns& runs);

// WriterRuns over the node's /proc, read through `read` (a node path in, the
// file's text out): /proc/PID/stat's start time is `start`.
WriterRuns WriterRunsIn(std::function<Result<std::string>(const std::string&)> read);

}  // namespace ocirlimit
