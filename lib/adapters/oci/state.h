// The OCI state that runtimes pass to hooks on stdin.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "formats/error.h"

namespace ocirlimit {

// Runtimes send a few hundred bytes; anything past this is not a state.
inline constexpr size_t kMaxStateBytes = 1 << 20;

struct State {
  std::string oci_version;
  std::string id;
  std::string status;  // creating (runc), created (crun)
  pid_t pid = 0;
  std::string bundle;  // may be empty: then the hook's cwd is the bundle
  std::map<std::string, std::string> annotations;
};

// Hook stages that run on the host before user code, with the container's
// init pid in the state: where a limit can still be set. createContainer and
// later run inside the container or too late.
bool IsApplyStage(std::string_view stage);

// Parses and validates: id, status and a positive pid are required.
Result<State> ParseState(std::string_view json);

// The bundle directory in `RUNTIME state ID` output (runc's and crun's JSON
// state of a created or running container).
Result<std::string> BundleFromRuntimeState(std::string_view json);

// Refuses states in which the container's process already runs user code.
// `program` is named in the advice, e.g. "oci-prlimit-helper".
Status CheckStateTiming(const State& state, std::string_view program = "oci-rlimit-hook");

}  // namespace ocirlimit
