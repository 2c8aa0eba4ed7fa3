#include "prlimit-helper/privileges.h"

#include <linux/capability.h>

#include <string>

#include "prlimit-helper/helper_output.h"

namespace ocirlimit {

Status DropToSysResource(CapOps& ops) {
  // First, so that nothing below or after can gain privilege through exec.
  if (auto st = ops.SetNoNewPrivs(); !st) return st.error().Wrap("set no_new_privs");

  auto own = ops.ReadOwn();
  if (!own) return own.error().Wrap("read own capabilities");

  // Shrinking the bounding set needs CAP_SETPCAP, so it comes before the
  // effective set loses it. Without CAP_SETPCAP the bounding set stays as
  // it is; with no_new_privs it cannot grant anything anyway.
  if (own->setpcap_effective) {
    for (int cap = 0; cap < ops.MaxBits(); ++cap) {
      if (cap == CAP_SYS_RESOURCE || !ops.InBounding(cap)) continue;
      if (auto st = ops.DropBound(cap); !st) {
        return st.error().Wrap("drop capability " + std::to_string(cap) + " from the bounding set");
      }
    }
  }

  if (ops.AmbientSupported()) {
    if (auto st = ops.ResetAmbient(); !st) {
      return st.error().Wrap("clear the ambient capability set");
    }
  }

  std::vector<int> keep;
  if (own->sys_resource_permitted) keep.push_back(CAP_SYS_RESOURCE);
  if (auto st = ops.SetProc(keep); !st) return st.error().Wrap("drop capabilities");
  return Ok{};
}

std::optional<int> DropOrExitStatus(CapOps& ops,
                                    const std::function<void(const std::string&)>& say) {
  if (auto dropped = DropToSysResource(ops); !dropped) {
    say(dropped.error().Text());
    return kExitFailure;
  }
  return std::nullopt;
}

}  // namespace ocirlimit
