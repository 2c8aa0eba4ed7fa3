// The wrapper's reads and writes of the decision records through
// RuntimeOps::Decisions (none for a rootless engine); a failure is a warning,
// never a failed container.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "formats/decision.h"
#include "runtime/ops.h"

namespace ocirlimit {

using WarnFn = std::function<void(const std::string&)>;

// The record of container `id`, when one is there and believed; one that is
// not believed is warned about, and the wrapper decides.
[[nodiscard]] std::optional<DecisionRecord> ReadRecord(RuntimeOps& ops, const std::string& id,
                                                       const WarnFn& warn);
// What create decided, for the exec sessions, the heal and audit.
void WriteRecord(RuntimeOps& ops, const std::string& id, const Config& cfg,
                 const std::vector<Rlimit>& limits, const WarnFn& warn);
// `delete [--force] ID` (args from the subcommand on): the record goes with
// the container (the NRI plugin removes its own at RemoveContainer too).
void RemoveRecord(RuntimeOps& ops, const std::vector<std::string>& args, size_t subcommand_at,
                  const WarnFn& warn);

}  // namespace ocirlimit
