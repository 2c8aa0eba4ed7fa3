#include "hook/hook_logic.h"

#include "adapters/oci/state.h"
#include "core/text.h"

namespace ocirlimit {

Result<HookArgs> ParseHookArgs(const std::vector<std::string>& args) {
  HookArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      out.mode = HookMode::kHelp;
      return out;
    }
    if (a == "--version") {
      out.mode = HookMode::kVersion;
      return out;
    }
    if (a == "--config") {
      if (i + 1 == args.size()) return MakeError("--config: missing PATH");
      out.config = args[++i];
      if (out.config->empty()) return MakeError("--config: empty PATH");
    } else if (a.starts_with("--config=")) {
      out.config = a.substr(9);
      if (out.config->empty()) return MakeError("--config: empty PATH");
    } else if (a.starts_with("-")) {
      return MakeError("unknown flag " + Quote(a));
    } else if (!out.stage.empty()) {
      return MakeError("unexpected argument " + Quote(a) + " after stage " + Quote(out.stage));
    } else if (a == "precreate") {
      out.stage = a;
      out.mode = HookMode::kPrecreate;
    } else if (IsApplyStage(a)) {
      out.stage = a;
    } else {
      return MakeError("stage " + Quote(a) +
                       " is not supported: use createRuntime or prestart (or precreate for "
                       "podman)");
    }
  }
  return out;
}

}  // namespace ocirlimit
