// Every TOML reader (oci-rlimit's config and its config.d drop-ins, and the
// containerd, CRI-O, NVIDIA and podman files the CLI reads) runs
// CheckTomlSafeText, then toml::parse. Properties, for any bytes:
//  - the guard refuses with one line, or toml++ parses or throws a
//    parse_error: never a crash (deep dotted keys and [table] headers
//    overflowed its stack before the guard counted depth);
//  - split at NUL bytes into drop-ins plus a config, ParseConfigFiles gives a
//    Config or a one-line error.
#include <toml++/toml.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "formats/toml_guard.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto guard = ocirlimit::CheckTomlSafeText(text);
  if (!guard) {
    if (guard.error().Text().find('\n') != std::string::npos) std::abort();
  } else {
    try {
      (void)toml::parse(text, std::string_view("fuzz.toml"));
    } catch (const toml::parse_error&) {
    }
  }
  std::vector<ocirlimit::ConfigFile> files;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\0') {
      files.push_back({"/etc/oci-rlimit/config.d/" + std::to_string(files.size()) + ".toml",
                       std::string(text.substr(start, i - start))});
      start = i + 1;
    }
  }
  auto cfg = ocirlimit::ParseConfigFiles(files);
  if (!cfg && cfg.error().Text().find('\n') != std::string::npos) std::abort();
  return 0;
}
