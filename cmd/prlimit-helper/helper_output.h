// What oci-prlimit-helper says: exit codes, the one-line error, --json and
// --get output, --help. Pure; main.cc only writes these strings out.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "effects/apply.h"
#include "formats/rlimit.h"

namespace ocirlimit {

// Documented in --help and docs/prlimit-helper.md; scripts depend on them.
enum HelperExit : int {
  kExitOk = 0,
  kExitFailure = 1,     // a failed privilege drop, bad OCI state, I/O, an unexpected error
  kExitUsage = 2,       // bad arguments or a refused target (pid <= 1, our own pid, a kthread)
  kExitTargetGone = 3,  // no such process, a zombie, or it exited before or while we worked
  kExitPermission = 4,  // EPERM before anything was applied
  kExitPartial = 5,     // some limits were applied, then one failed
};

extern const char* const kHelperUsage;

int HelperExitCode(const ApplyOutcome& outcome);
int HelperExitCode(ApplyFailure failure);

// The error, plus which limits were applied before it and which were not,
// so a partial apply is never mistaken for none.
std::string ApplyFailureMessage(const ApplyOutcome& outcome, const std::vector<Rlimit>& requested);

// One JSON object: pid, ok, every touched resource's soft/hard before and
// after, the ones not applied, and the error and exit code on failure.
// RLIM_INFINITY is the string "unlimited"; other values are numbers.
std::string ApplyJson(pid_t pid, const std::vector<Rlimit>& requested, const ApplyOutcome& outcome);

// --get: "memlock=8388608:8388608" lines, in the rlimit language.
std::string LimitsText(const std::vector<Rlimit>& limits);
// --get --json: {"pid":N,"limits":{"cpu":{"soft":..,"hard":..},...}}
std::string LimitsJson(pid_t pid, const std::vector<Rlimit>& limits);

// The Cap* and NoNewPrivs lines of a /proc/PID/status text, as they are.
std::string CapabilityLines(std::string_view proc_status);

}  // namespace ocirlimit
