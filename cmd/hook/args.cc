#include "hook/args.h"

#include "adapters/oci/state.h"
#include "formats/argv.h"
#include "formats/text.h"

namespace ocirlimit {

Result<HookArgs> ParseHookArgs(const std::vector<std::string>& args) {
  HookArgs out;
  ArgReader reader(args, kHookFlags);
  for (;;) {
    auto next = reader.Next();
    if (!next) return next.error();
    if (!*next) return out;
    const ArgItem& a = **next;
    if (a.Is("--help")) {
      out.mode = HookMode::kHelp;
      return out;
    }
    if (a.Is("--version")) {
      out.mode = HookMode::kVersion;
      return out;
    }
    if (a.Is("--config")) {
      out.config = a.value;
    } else if (!out.stage.empty()) {
      return MakeError("unexpected argument " + Quote(a.value) + " after stage " +
                       Quote(out.stage));
    } else if (a.value == "precreate") {
      out.stage = a.value;
      out.mode = HookMode::kPrecreate;
    } else if (IsApplyStage(a.value)) {
      out.stage = a.value;
    } else {
      return MakeError("stage " + Quote(a.value) +
                       " is not supported: use createRuntime or prestart (or precreate for "
                       "podman)");
    }
  }
}

}  // namespace ocirlimit
