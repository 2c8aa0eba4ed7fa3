// doctor's lines from oci-rlimit-nri's status file (formats/nri_status.h): when
// the plugin last (re)connected and what it healed then (docs/nri.md,
// "Healing at reconnect"). Pure: the caller reads the file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/doctor/doctor.h"
#include "effects/nri_trust.h"

namespace ocirlimit {

// `text`: the file at `path`, nullopt when there is none; `running`: an
// oci-rlimit-nri process runs now. No file and no plugin: no line (the
// other NRI checks say so). The file is believed only while the writer it
// names runs (`runs`); a stale one, one that names no writer, and one that
// does not parse are each a warning that quotes nothing of the file
// (TrustNriStatus: audit believes it by the same rule).
[[nodiscard]] std::vector<Check> NriStatusChecks(const std::optional<std::string>& text,
                                                 const std::string& path, bool running,
                                                 const WriterRuns& runs);

}  // namespace ocirlimit
