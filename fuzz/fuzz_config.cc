// Property: any bytes give a Config or a one-line error; never a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto cfg = ocirlimit::ParseConfig(text, "fuzz.toml");
  if (!cfg && cfg.error().Text().find('\n') != std::string::npos) std::abort();
  return 0;
}
