// oci-rlimit-hook's argv (through formats/argv.h) and its stage.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "formats/argv.h"
#include "formats/error.h"

namespace ocirlimit {

enum class HookMode { kApply, kPrecreate, kHelp, kVersion };

struct HookArgs {
  HookMode mode = HookMode::kApply;
  std::optional<std::string> config;
  std::string stage;  // as given, may be empty

  bool operator==(const HookArgs&) const = default;
};

// Its flags: ParseHookArgs reads them, its test reads every one both ways.
inline constexpr FlagSpec kHookFlags[] = {
    {.name = "--help", .short_name = "-h"},
    {.name = "--version"},
    {.name = "--config", .metavar = "PATH"},
};

// oci-rlimit-hook [--config PATH] [STAGE]; args excludes argv[0].
[[nodiscard]] Result<HookArgs> ParseHookArgs(const std::vector<std::string>& args);

}  // namespace ocirlimit
