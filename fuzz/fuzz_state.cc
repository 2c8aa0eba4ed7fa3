// Properties: a parsed state always has an id, a status and a valid pid; and
// reading only a spec's members (FactsFromSpecText, json_members.h) accepts
// what the whole DOM accepts and reads the same facts from it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "adapters/oci/facts.h"
#include "adapters/oci/state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto state = ocirlimit::ParseState(text);
  if (state && (state->id.empty() || state->status.empty() || state->pid <= 0)) std::abort();
  // An object's keys cost quadratic time in ordered_json, both ways alike:
  // large inputs would only time out.
  if (size > 16384) return 0;
  auto lean = ocirlimit::FactsFromSpecText(text, "F");
  auto dom = ocirlimit::ParseJsonObject(text, "F");
  auto whole = dom ? ocirlimit::FactsFromSpec(*dom)
                   : ocirlimit::Result<ocirlimit::ContainerFacts>(dom.error());
  if (lean.ok() != whole.ok()) std::abort();
  if (lean && (lean->annotations != whole->annotations || lean->env != whole->env ||
               lean->devices != whole->devices ||
               lean->spec_rlimits.size() != whole->spec_rlimits.size())) {
    std::abort();
  }
  return 0;
}
