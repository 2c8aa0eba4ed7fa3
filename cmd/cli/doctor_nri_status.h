// doctor's lines from oci-rlimit-nri's status file (core/nri_status.h): when
// the plugin last (re)connected and what it healed then (docs/nri.md,
// "Healing at reconnect"). Pure: the caller reads the file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/doctor.h"

namespace ocirlimit {

// `text`: the file at `path`, nullopt when there is none; `running`: an
// oci-rlimit-nri process runs now. No file and no plugin: no line (the
// other NRI checks say so).
[[nodiscard]] std::vector<Check> NriStatusChecks(const std::optional<std::string>& text,
                                                 const std::string& path, bool running);

}  // namespace ocirlimit
