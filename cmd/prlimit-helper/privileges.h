// The helper's own privileges: everything but CAP_SYS_RESOURCE goes, before
// any input beyond argv is read. The libcap and prctl(2) calls sit behind
// CapOps (a Linux implementation here, a fake in privileges_test.cc), so
// the sequence and its every failure are unit-tested.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "formats/error.h"

namespace ocirlimit {

// The calls the drop makes, one per libcap or prctl(2) call; capability
// numbers as in <linux/capability.h>.
class CapOps {
 public:
  virtual ~CapOps() = default;
  virtual Status SetNoNewPrivs() = 0;  // prctl(PR_SET_NO_NEW_PRIVS, 1)
  struct Own {
    bool sys_resource_permitted = false;  // CAP_SYS_RESOURCE in our permitted set
    bool setpcap_effective = false;       // CAP_SETPCAP in our effective set
  };
  virtual Result<Own> ReadOwn() = 0;      // cap_get_proc
  virtual int MaxBits() = 0;              // cap_max_bits
  virtual bool InBounding(int cap) = 0;   // cap_get_bound(cap) == 1
  virtual Status DropBound(int cap) = 0;  // cap_drop_bound
  virtual bool AmbientSupported() = 0;    // CAP_AMBIENT_SUPPORTED
  virtual Status ResetAmbient() = 0;      // cap_reset_ambient
  // cap_set_proc: exactly `keep` in the permitted and effective sets, an
  // empty inheritable set.
  virtual Status SetProc(const std::vector<int>& keep) = 0;
};

// The real thing (libcap, prctl(2)).
CapOps& LinuxCapOps();

// Sets no_new_privs, drops every capability but CAP_SYS_RESOURCE from the
// bounding set when CAP_SETPCAP allows, clears the ambient set, and leaves
// only CAP_SYS_RESOURCE (when we had it) in the permitted and effective sets
// (inheritable empty). Stops at the first failure, which is an error naming
// the step: the caller must not go on.
[[nodiscard]] Status DropToSysResource(CapOps& ops = LinuxCapOps());

// What main does before it reads any input: the drop, and on failure one
// line through `say` and the exit status for it (1, "failure" in --help).
// nullopt: dropped, go on.
[[nodiscard]] std::optional<int> DropOrExitStatus(
    CapOps& ops, const std::function<void(const std::string&)>& say);

}  // namespace ocirlimit
