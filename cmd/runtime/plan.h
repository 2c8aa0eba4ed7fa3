// The pure decisions of oci-rlimit-runtime: which low-level runtime to run,
// what to write into a bundle's config.json or an exec --process file, and
// the runc-style JSON line that reports a failure to containerd and docker.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/oci/spec.h"
#include "effects/files.h"
#include "formats/error.h"
#include "formats/rlimit.h"

namespace ocirlimit {

// The identity of an executable regular file, or nullopt. A symlink or hard
// link to ourselves has our FileId.
using ProbeExecutable = std::function<std::optional<FileId>(const std::string& path)>;

// The first of `runtimes` that exists and is not `self`: an absolute path as
// is, a bare name searched in the absolute directories of `path_env`. A name
// whose first match on PATH is ourselves keeps searching later directories,
// so a `runc` symlink to the wrapper in front of the real runc still works.
Result<std::string> ResolveRuntime(const std::vector<std::string>& runtimes,
                                   std::string_view path_env, const FileId& self,
                                   const ProbeExecutable& probe);

// The base runtime under a chained one (NVIDIA's execs runc or crun), for a
// lifecycle command that edits no spec once the chained one is gone: of runc
// and crun on `path_env`, the one whose state under `root` (else its default
// root) holds container `id`, else the first found. The containers a removed
// runtime started can still be stopped and removed; nothing new starts.
std::optional<std::string> BaseRuntimeFor(const std::string& id, const std::string& root,
                                          std::string_view path_env, const FileId& self,
                                          const ProbeExecutable& probe,
                                          const std::function<bool(const std::string&)>& exists);

// config.json with `limits` merged into process.rlimits, or nullopt when
// nothing is configured (the file is then left alone). `path` names the file
// in errors.
Result<std::optional<std::string>> MergeBundleSpec(std::string_view text, const std::string& path,
                                                   const std::vector<Rlimit>& limits);

// An exec --process file, parsed and checked.
Result<Json> ParseProcessFile(std::string_view text, const std::string& path);

// Merges `limits` into an exec --process file's process. runc 1.1 and crun
// 1.8 both give the exec'd process exactly the file's list (an empty or
// missing list means the caller's own limits, not the container's: see
// docs/runtime-mode.md), so this adds ours and changes nothing else.
Status MergeExecProcess(Json& process, const std::string& path, const std::vector<Rlimit>& limits);

// {"level":"error","msg":MSG,"time":TIME}, as runc writes with --log-format json.
std::string ErrorLogLine(std::string_view rfc3339_time, std::string_view msg);
// The same with "level":"warning".
std::string WarningLogLine(std::string_view rfc3339_time, std::string_view msg);
// time="TIME" level=warning msg="MSG", runc's --log-format text.
std::string WarningTextLogLine(std::string_view rfc3339_time, std::string_view msg);

// The loop guard (docs/runtime-mode.md): oci-rlimit-runtime sets this to the
// runtime it execs. Seeing it at start means a runtime it exec'd (NVIDIA's,
// say) called oci-rlimit-runtime again, which would exec that runtime again,
// forever.
inline constexpr std::string_view kLoopGuardEnv = "OCI_RLIMIT_RUNTIME_EXECED";
// The one-line refusal, or nullopt when `marker` (the variable's value) is unset.
std::optional<std::string> LoopGuardError(const std::optional<std::string>& marker);

}  // namespace ocirlimit
