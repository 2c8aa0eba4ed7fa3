// The argv of oci-prlimit-helper, and the checks on its target that need no
// syscall.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rlimit.h"

namespace ocirlimit {

enum class HelperMode {
  kApply,      // set the limits given as NAME=SOFT[:HARD]
  kGet,        // print the target's current limits
  kDebugCaps,  // --debug-caps alone: print our own capability sets, touch nothing
  kHelp,
  kVersion,
};

enum class TargetSource { kNone, kPid, kState };

struct HelperArgs {
  HelperMode mode = HelperMode::kApply;
  TargetSource source = TargetSource::kNone;
  pid_t pid = 0;  // with TargetSource::kPid
  std::vector<Rlimit> limits;
  bool json = false;
  bool debug_caps = false;
  // Test-only: after the pidfd is open, wait on this FIFO before applying.
  std::optional<std::string> test_pause_fifo;
};

// Flag spelled out for the tests and docs; never shown in --help, and known
// only to the test build (oci-prlimit-helper-testing).
inline constexpr const char* kTestPauseFlag = "--test-only-pause-after-pidfd";

// args excludes argv[0]. With test_flags false (the installed helper),
// kTestPauseFlag is an unknown flag like any other.
Result<HelperArgs> ParseHelperArgs(const std::vector<std::string>& args, bool test_flags = false);

}  // namespace ocirlimit
