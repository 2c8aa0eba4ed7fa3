// oci-rlimit-hook's argv (through core/argv.h) and its stage.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace ocirlimit {

enum class HookMode { kApply, kPrecreate, kHelp, kVersion };

struct HookArgs {
  HookMode mode = HookMode::kApply;
  std::optional<std::string> config;
  std::string stage;  // as given, may be empty
};

// oci-rlimit-hook [--config PATH] [STAGE]; args excludes argv[0].
Result<HookArgs> ParseHookArgs(const std::vector<std::string>& args);

}  // namespace ocirlimit
