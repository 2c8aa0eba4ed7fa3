#include "prlimit-helper/privileges.h"

#include <sys/capability.h>
#include <sys/prctl.h>

#include <cerrno>
#include <memory>

namespace ocirlimit {
namespace {

struct CapFree {
  void operator()(void* p) const { cap_free(p); }
};
using Caps = std::unique_ptr<std::remove_pointer_t<cap_t>, CapFree>;

bool Has(cap_t caps, cap_value_t cap, cap_flag_t set) {
  cap_flag_value_t v = CAP_CLEAR;
  return cap_get_flag(caps, cap, set, &v) == 0 && v == CAP_SET;
}

}  // namespace

Status DropToSysResource() {
  // First, so that nothing below or after can gain privilege through exec.
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return MakeError("set no_new_privs", errno);

  Caps current(cap_get_proc());
  if (!current) return MakeError("read own capabilities", errno);
  const bool keep_sys_resource = Has(current.get(), CAP_SYS_RESOURCE, CAP_PERMITTED);

  // Shrinking the bounding set needs CAP_SETPCAP, so it comes before the
  // effective set loses it. Without CAP_SETPCAP the bounding set stays as
  // it is; with no_new_privs it cannot grant anything anyway.
  if (Has(current.get(), CAP_SETPCAP, CAP_EFFECTIVE)) {
    for (cap_value_t cap = 0; cap < cap_max_bits(); ++cap) {
      if (cap == CAP_SYS_RESOURCE || cap_get_bound(cap) != 1) continue;
      if (cap_drop_bound(cap) != 0) {
        return MakeError("drop capability " + std::to_string(cap) + " from the bounding set",
                         errno);
      }
    }
  }

  if (CAP_AMBIENT_SUPPORTED() && cap_reset_ambient() != 0) {
    return MakeError("clear the ambient capability set", errno);
  }

  Caps wanted(cap_init());  // all three sets empty
  if (!wanted) return MakeError("allocate capability set", errno);
  if (keep_sys_resource) {
    const cap_value_t keep[] = {CAP_SYS_RESOURCE};
    for (cap_flag_t set : {CAP_PERMITTED, CAP_EFFECTIVE}) {
      if (cap_set_flag(wanted.get(), set, 1, keep, CAP_SET) != 0) {
        return MakeError("build capability set", errno);
      }
    }
  }
  if (cap_set_proc(wanted.get()) != 0) return MakeError("drop capabilities", errno);
  return Ok{};
}

}  // namespace ocirlimit
