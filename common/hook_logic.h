// The pure parts of oci-rlimit-hook: argv, stage policy, messages, log line.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "apply.h"
#include "error.h"
#include "spec.h"

namespace ocirlimit {

enum class HookMode { kApply, kPrecreate, kHelp, kVersion };

struct HookArgs {
  HookMode mode = HookMode::kApply;
  std::optional<std::string> config;
  std::string stage;  // as given, may be empty
};

// oci-rlimit-hook [--config PATH] [STAGE]; args excludes argv[0].
Result<HookArgs> ParseHookArgs(const std::vector<std::string>& args);

// One warning per configured type that the spec sets too: runc re-applies
// the spec's value after hooks, crun keeps ours.
std::vector<std::string> ConflictWarnings(const std::vector<Conflict>& conflicts);

// One log line per container: time, id, pid, each limit old->new, and any
// warnings or error.
std::string FormatLogLine(const std::string& rfc3339_time, const std::string& id, pid_t pid,
                          const std::vector<Change>& changes,
                          const std::vector<std::string>& warnings, const std::string& error);

}  // namespace ocirlimit
