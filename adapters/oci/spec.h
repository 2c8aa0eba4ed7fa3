// What oci-rlimit reads from and writes to an OCI runtime spec
// (config.json, or a `runc exec --process` file). ordered_json keeps the
// spec's key order, unknown fields and 64-bit values exactly as they came.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/rlimit.h"

namespace ocirlimit {

using Json = nlohmann::ordered_json;

Result<Json> ParseJsonObject(std::string_view text, const std::string& what);

// The rlimits of a process object ({"rlimits":[{"type","soft","hard"}...]}).
// Missing or null means none.
Result<std::vector<Rlimit>> ProcessRlimits(const Json& process, const std::string& where);

// The spec's process.rlimits.
Result<std::vector<Rlimit>> SpecRlimits(const Json& spec);

// Merges into a process object: a same-type entry is replaced in place,
// others are appended, and nothing else in `process` changes.
Status MergeProcessRlimits(Json& process, const std::vector<Rlimit>& limits,
                           const std::string& where);

// MergeProcessRlimits on spec.process (created if absent).
Status MergeSpecRlimits(Json& spec, const std::vector<Rlimit>& limits);

// SpecRlimits of a spec's text, building nothing but process.rlimits
// (of duplicate keys the last counts, as in runc's Go decoder). `what` names
// the text in errors.
Result<std::vector<Rlimit>> SpecRlimitsOnly(std::string_view text, const std::string& what);

}  // namespace ocirlimit
