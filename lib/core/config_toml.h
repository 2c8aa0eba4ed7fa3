// Inside core only: the two halves of reading a config, which alone see
// toml++ (header-only, so the hook and the wrapper load no libtomlplusplus):
// config_files.cc parses and merges the files into one table, config.cc
// turns that table into a Config.
#pragma once

#include <toml++/toml.h>

#include <string_view>

#include "core/config.h"
#include "formats/error.h"

namespace ocirlimit {

// NVIDIA's section, whose `rlimits` is the other spelling of ours.
inline constexpr std::string_view kNvidiaSection = "nvidia-container-runtime";

// The merged table of every file -> cfg (every key checked).
[[nodiscard]] Status ParseConfigTable(const toml::table& root, Config& cfg);

}  // namespace ocirlimit
