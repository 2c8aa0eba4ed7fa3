#include "hook/chain.h"

#include <sys/stat.h>

// NVIDIA's hook name and path, defined once (header-only: the hook links none
// of the node model's code).
#include "adapters/engines/constants.h"
#include "formats/text.h"

namespace ocirlimit {

std::optional<ChainTarget> ResolveChain(const std::string& configured, std::string_view argv0) {
  if (!configured.empty()) return ChainTarget{configured, "hook.chain"};
  size_t slash = argv0.rfind('/');
  std::string_view base = slash == std::string_view::npos ? argv0 : argv0.substr(slash + 1);
  if (base != engines::kNvidiaHookName) return std::nullopt;
  return ChainTarget{std::string(engines::kNvidiaHookPath),
                     "chain target (the default when run as " +
                         std::string(engines::kNvidiaHookName) +
                         "; set [hook] chain to change it)"};
}

Status CheckChainTarget(const ChainTarget& target, const Result<FileId>& target_id,
                        const FileId& self) {
  std::string where = target.origin + ": " + Quote(target.path);
  if (!target_id) return MakeError(where, target_id.error().err);
  if (!S_ISREG(target_id->mode)) return MakeError(where + " is not a regular file");
  if ((target_id->mode & (S_IXUSR | S_IXGRP | S_IXOTH)) == 0) {
    return MakeError(where + " is not executable");
  }
  if (*target_id == self) {
    return MakeError(where + " is oci-rlimit-hook itself (same file as /proc/self/exe); point it " +
                     "at the real " + std::string(engines::kNvidiaHookName) + " or another hook");
  }
  return Ok{};
}

}  // namespace ocirlimit
