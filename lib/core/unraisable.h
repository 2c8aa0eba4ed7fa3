// A limit that cannot be set: its hard part is above the hard limit in
// force, and raising a hard limit needs CAP_SYS_RESOURCE, which the one
// setting it lacks. Every path says it with the one message built here: the
// hook and the helper (effects/apply), the wrapper's create and exec, before
// it calls the runtime (runtime/flow), and the NRI plugin's heal
// (docs/policy.md, "A limit above the hard limit in force"). Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/rlimit.h"

namespace ocirlimit {

struct Unraisable {
  Rlimit want;            // the entry the config gives
  uint64_t in_force = 0;  // the hard limit in force where it would be set
};

// The first of `want` whose hard limit is above the hard limit of the same
// type in `in_force` (any order; a type missing there is never unraisable).
[[nodiscard]] std::optional<Unraisable> FindUnraisable(const std::vector<Rlimit>& want,
                                                       const std::vector<Rlimit>& in_force);

// `memlock=unlimited` names it as a config entry would: `NAME=VALUE` when
// soft and hard agree, else `NAME=SOFT:HARD`; bytes in K/M/G/T when exact.
[[nodiscard]] std::string RlimitEntry(const Rlimit& r);

// The one message, e.g.
// `config entry memlock=unlimited: the hard limit in force is 8M, and raising
// it needs CAP_SYS_RESOURCE, which oci-rlimit-runtime does not have; memlock=8M
// would work (or give the container engine CAP_SYS_RESOURCE)`. `who` names
// what lacks the capability; `rootless`: it runs outside the initial user
// namespace, where no process can raise a hard limit, so only the entry helps.
[[nodiscard]] std::string UnraisableMessage(const Unraisable& u, std::string_view who,
                                            bool rootless = false);

}  // namespace ocirlimit
