// The spec merge as properties. Input: a first line of rlimits
// ("memlock=1M,nofile=5"), then a spec JSON document.
//  - the merged output parses;
//  - merging twice equals merging once;
//  - every field other than process.rlimits is unchanged;
//  - a failed merge leaves the spec untouched.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "adapters/oci/spec.h"
#include "formats/rlimit.h"

namespace {

using ocirlimit::Json;

Json WithoutRlimits(Json spec) {
  auto p = spec.find("process");
  if (p != spec.end() && p->is_object()) p->erase("rlimits");
  if (p != spec.end() && p->is_object() && p->empty()) spec.erase("process");
  return spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t nl = text.find('\n');
  if (nl == std::string_view::npos) return 0;
  auto limits = ocirlimit::ParseRlimitCsv(text.substr(0, nl));
  if (!limits) return 0;
  auto spec = ocirlimit::ParseJsonObject(text.substr(nl + 1), "spec");
  if (!spec) return 0;

  Json once = *spec;
  auto merged = ocirlimit::MergeSpecRlimits(once, *limits);
  if (!merged) {
    if (once != *spec) std::abort();  // nothing half-done
    return 0;
  }
  auto reparsed = ocirlimit::ParseJsonObject(once.dump(), "merged");
  if (!reparsed || *reparsed != once) std::abort();
  Json twice = once;
  if (!ocirlimit::MergeSpecRlimits(twice, *limits) || twice != once) std::abort();
  if (WithoutRlimits(once) != WithoutRlimits(*spec)) std::abort();
  return 0;
}
