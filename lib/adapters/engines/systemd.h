// The systemd units of the engines: the unit file and its drop-ins in the
// order systemd applies them, and the two settings doctor reads from them.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "adapters/engines/node_files.h"

namespace ocirlimit::engines {

// The unit file (the first of the unit dirs that has it) and its drop-ins
// by file name across all dirs, a name in a higher-priority dir hiding the
// same name in a lower one: (path, text) pairs.
std::vector<std::pair<std::string, std::string>> UnitFiles(NodeFiles& fs, const std::string& unit);

// LimitMEMLOCK= of a unit: the unit file, then its drop-ins in order, the
// last assignment winning ("" resets). nullopt when never set.
std::optional<std::string> LimitMemlockFromUnits(const std::vector<std::string>& unit_texts);

// The PATH a service gets from Environment= lines in [Service] of its unit
// and drop-ins (in order, the last assignment winning), or nullopt.
std::optional<std::string> EnvironmentPathFromUnits(const std::vector<std::string>& unit_texts);
// The same for any variable `name`.
std::optional<std::string> EnvironmentFromUnits(const std::vector<std::string>& unit_texts,
                                                std::string_view name);

// The PATH a service runs with: its Environment=PATH=, else systemd's.
std::string ServicePath(NodeFiles& fs, const std::string& unit);

}  // namespace ocirlimit::engines
