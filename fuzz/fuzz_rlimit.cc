// Property: whatever parses, formats back to text that parses to the same
// limits; nothing crashes or hangs on any input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "formats/rlimit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = ocirlimit::ParseRlimitCsv(text);
  if (!parsed) return 0;
  std::string again;
  for (const auto& r : *parsed) again += ocirlimit::FormatRlimit(r) + ",";
  auto reparsed = ocirlimit::ParseRlimitCsv(again);
  if (!reparsed || *reparsed != *parsed) std::abort();
  return 0;
}
