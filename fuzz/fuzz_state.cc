// Property: a parsed state always has an id, a status and a valid pid.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "adapters/oci/state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto state = ocirlimit::ParseState(text);
  if (state && (state->id.empty() || state->status.empty() || state->pid <= 0)) std::abort();
  return 0;
}
