// The ulimit-adjuster annotation (formats/ulimit_yaml.h), which the NRI
// plugin reads from any pod's annotations: libyaml's events, our go-yaml v2
// scalar resolver, the tree and the decode. Debian's libyaml.a is not
// instrumented, so coverage guides through our code only. Properties, for
// any bytes: no crash; a refusal says something, in one line (seed
// multiline-flow-key: a flow key that spans lines once came back raw); what
// is accepted is at most one entry per resource, each a known resource with
// soft <= hard, and nothing over kMaxUlimitYamlBytes is accepted. Seeds
// merge-anchor, tags-directive and merge-fold-float reach merges, aliases,
// tags, directives and case folding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "formats/ulimit_yaml.h"

constexpr bool kOneLine = true;

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
