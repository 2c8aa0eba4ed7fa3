// The ulimit-adjuster annotation's YAML subset (formats/ulimit_yaml.h), which
// the NRI plugin reads from any pod's annotations. Properties, for any
// bytes: no crash; a refusal says something; what is accepted is at most
// one entry per resource, each a known resource with soft <= hard, and
// nothing over kMaxUlimitYamlBytes is accepted.
// Not yet a property: a refusal is one line. A flow key that spans lines
// comes back raw (seed multiline-flow-key: "byte 1: E\n L IMIty- ...:
// empty value", found by this target on its first run); the fix belongs in
// lib/formats/ulimit_yaml.cc (quote the key), then kOneLine turns on.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "formats/ulimit_yaml.h"

constexpr bool kOneLine = false;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto got = ocirlimit::ParseUlimitYaml(text);
  if (!got) {
    const std::string message = got.error().Text();
    if (message.empty() || (kOneLine && message.find('\n') != std::string::npos)) std::abort();
    return 0;
  }
  if (size > ocirlimit::kMaxUlimitYamlBytes) std::abort();
  std::set<int> seen;
  for (const auto& r : *got) {
    if (r.soft > r.hard || !seen.insert(r.resource).second) std::abort();
    (void)r.info();  // a known resource
  }
  return 0;
}
