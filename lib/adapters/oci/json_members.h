// Reading only the members of a JSON object that a reader uses. nlohmann's
// parser still checks the whole text (the same grammar, the same errors),
// but through its SAX interface only the named members become a DOM: a
// runtime's state.json or a bundle's config.json is mostly mounts and
// capabilities nobody here reads, and building and freeing their DOM was
// most of `oci-rlimit audit`'s time (docs/performance.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "adapters/oci/spec.h"
#include "formats/error.h"

namespace ocirlimit {

// A member, as the object keys from the root down: {"process", "env"}.
using JsonMember = std::vector<std::string>;

// ParseJsonObject (spec.h), keeping only `members`, each whole: a kept
// member's value is what ParseJsonObject would give, so the readers behind
// it see no difference, a repeated key included (the last counts). An array
// on the way to a member is kept whole. Nesting deeper than kMaxJsonDepth
// anywhere is refused as CheckJsonDepth refuses it (json_guard.h), without
// a second pass over the text.
[[nodiscard]] Result<Json> ParseJsonMembers(std::string_view text, const std::string& what,
                                            const std::vector<JsonMember>& members);

}  // namespace ocirlimit
