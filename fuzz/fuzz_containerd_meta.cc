// containerd's metadata database (adapters/engines/containerd_meta.h), read
// by audit as root from a file on the node, on arbitrary bytes. Properties:
// no crash and no hang (any file is read in time linear in its size: each
// page at most once, bounded depth; -timeout=1 in fuzz/run.sh); a refusal
// is one line; every sandbox read has a non-empty id. The seeds are tiny
// valid databases (512- and 4096-byte pages) from the unit tests' writer.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "adapters/engines/containerd_meta.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view db(reinterpret_cast<const char*>(data), size);
  auto got = ocirlimit::ReadPodAnnotations(db, "k8s.io");
  if (!got) {
    if (got.error().Text().find('\n') != std::string::npos) std::abort();
    return 0;
  }
  for (const auto& [id, annotations] : *got) {
    if (id.empty() || id.size() > size) std::abort();
  }
  return 0;
}
