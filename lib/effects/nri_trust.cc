#include "effects/nri_trust.h"

#include <utility>

#include "effects/target_kind.h"

namespace ocirlimit {

NriTrust TrustNriStatus(const Result<NriStatus>& status, const WriterRuns& runs) {
  if (!status) return NriTrust::kUnreadable;
  if (status->writer_pid == 0) return NriTrust::kNoWriter;
  if (!runs || !runs(status->writer_pid, status->writer_start)) return NriTrust::kStale;
  return NriTrust::kBelieved;
}

WriterRuns WriterRunsIn(std::function<Result<std::string>(const std::string&)> read) {
  return [read = std::move(read)](uint64_t pid, uint64_t start) {
    auto stat = read("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return false;
    auto parsed = ParseProcStat(*stat);
    return parsed && parsed->start_time == start;
  };
}

}  // namespace ocirlimit
