// The argv of oci-prlimit-helper, and the checks on its target that need no
// syscall.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "formats/argv.h"
#include "formats/error.h"
#include "formats/rlimit.h"

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

  bool operator==(const HelperArgs&) const = default;
};

// Flag spelled out for the tests and docs; never shown in --help, and known
// only to the test build (oci-prlimit-helper-testing).
inline constexpr const char* kTestPauseFlag = "--test-only-pause-after-pidfd";

// Its flags: ParseHelperArgs reads them, its test reads every one both ways.
// The test build's flag comes last: the installed helper reads all but it,
// so there it is an unknown flag like any other.
inline constexpr FlagSpec kHelperFlags[] = {
    {.name = "--help", .short_name = "-h"},
    {.name = "--version"},
    {.name = "--pid", .metavar = "PID"},
    {.name = "--state"},
    {.name = "--get"},
    {.name = "--json"},
    {.name = "--debug-caps"},
    {.name = kTestPauseFlag, .metavar = "FIFO path"},
};

// args excludes argv[0]. With test_flags false (the installed helper),
// kTestPauseFlag is an unknown flag like any other.
[[nodiscard]] Result<HelperArgs> ParseHelperArgs(const std::vector<std::string>& args,
                                                 bool test_flags = false);

}  // namespace ocirlimit
