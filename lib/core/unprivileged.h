// What a caller without privilege over the container can set: a rootless
// engine (podman run by a user) runs its hooks and runtimes in a user
// namespace other than the initial one, where a hard rlimit can never be
// raised (the kernel checks CAP_SYS_RESOURCE in the initial namespace) and a
// root-only admin config cannot be read. Pure: the caller reads
// /proc/self/uid_map and the current limits (effects).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "formats/error.h"
#include "formats/rlimit.h"

namespace ocirlimit {

// /proc/self/uid_map of a process in the initial user namespace is the
// identity map of all 2^32-1 ids, one line "0 0 4294967295" (any spacing).
// Anything else, an empty text included, is another namespace.
bool IsInitialUidMap(std::string_view uid_map);

// The limits an unprivileged caller can set, and the one line saying what
// changed (empty when nothing had to).
struct Fitted {
  std::vector<Rlimit> limits;
  std::string warning;
};

// `decided` as far as an unprivileged caller can set it, given the target's
// current limits (`current`, any order; types missing there pass unchanged):
// a hard limit above the current hard one stays at the current one, and the
// soft limit is capped at the resulting hard one, so a soft raise up to the
// caller's hard limit and every lowering still apply. With rootless =
// "fail", a needed cut is an error instead, naming the limit.
Result<Fitted> FitToUnprivilegedCaller(const std::vector<Rlimit>& decided,
                                       const std::vector<Rlimit>& current, Rootless mode);

// Whether a config that could not be read is, for this caller, "no config":
// only EACCES (a 0600 admin file) and only outside the initial user namespace.
// A rootful engine that cannot read its config still fails.
bool UnreadableConfigIsNone(const Error& read_error, bool unprivileged);

// The warning for that case, naming the file and the reason.
std::string UnreadableConfigWarning(const Error& read_error);

// "degrade" or "fail", as in the config file.
std::string_view RootlessName(Rootless mode);

}  // namespace ocirlimit
