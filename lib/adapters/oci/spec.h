// What oci-rlimit reads from and writes to an OCI runtime spec
// (config.json, or a `runc exec --process` file). ordered_json keeps the
// spec's key order, unknown fields and 64-bit values exactly as they came.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "formats/error.h"
#include "formats/rlimit.h"
#include "formats/text.h"

namespace ocirlimit {

using Json = nlohmann::ordered_json;

Result<Json> ParseJsonObject(std::string_view text, const std::string& what);

// A foreign JSON value as a message shows it, never recursively: a string
// by JsonQuoteCut, a number, boolean or null as written, an array or object by
// its kind and size ("an array of 3 elements").
template <class J>
std::string ValueText(const J& v) {
  if (v.is_string()) return JsonQuoteCut(v.template get_ref<const typename J::string_t&>());
  const std::string n = std::to_string(v.size());
  if (v.is_array()) return "an array of " + n + (v.size() == 1 ? " element" : " elements");
  if (v.is_object()) return "an object of " + n + (v.size() == 1 ? " member" : " members");
  return v.dump();
}

// Where a document for runc starts: a whole spec (config.json) or a process
// object (an exec --process file).
enum class RuncDocument { kSpec, kProcess };

// ParseJsonObject, refusing what runc's Go decoder would read differently
// from nlohmann: a key that differs only by case from one we read or write
// (`process`, `rlimits`, and an entry's `type`, `soft`, `hard`; Go matches
// them case-insensitively, with its Unicode folds of "ſ" and "K"), or one
// of these keys twice in an object. Either way an edit could report success
// while runc applies another entry.
Result<Json> ParseJsonObjectForRunc(std::string_view text, const std::string& what,
                                    RuncDocument root);

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
