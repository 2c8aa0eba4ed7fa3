// What the Synchronize heal needs from the host, behind a small interface
// (heal_ops_linux.cc has the real one, heal_test.cc a fake): the pidfd and
// prlimit(2) of effects/process_ops.h and the /proc reads of effects/fs_ops.h
// (effects/heal.h's pinned look and heal run over both; /proc/PID/cgroup
// tells that a PID is still the container's init), whether we see the
// host's PIDs, a monotonic clock, and the status file doctor reads.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "adapters/oci/runtime_state.h"
#include "effects/fs_ops.h"
#include "effects/process_ops.h"
#include "formats/error.h"

namespace ocirlimit::nri {

class HealOps {
 public:
  virtual ~HealOps() = default;
  virtual ProcessOps& process() = 0;
  virtual FsOps& fs() = 0;
  // Whether the PIDs the runtime reports (the host's) are ours: we run in
  // the host's PID namespace (hostPID: true, or not in a container at all).
  virtual bool InHostPidNamespace() = 0;
  virtual int64_t MonotonicMs() = 0;
  // Replaces the status file (formats/nri_status.h) atomically.
  virtual Status WriteStatus(const std::string& text) = 0;
  // Where NRI gives no PID (CRI-O 1.31 gives 0 for every container): the
  // init as the OCI runtime's own state names it, ROOT/ID/state.json (runc)
  // or ROOT/ID/status (crun) under each of StateRoots(), read only as root
  // wrote it (effects/fs_ops.h's ReadTrusted with root as the one owner: no
  // symlink, no user's file).
  // err is ENOENT when no root names the container.
  virtual Result<RuntimeState> InitFromRuntimeState(const std::string& id) = 0;
  // This process, as the status file names its writer: the PID and start
  // time (clock ticks after boot); {0, 0} when unknown.
  struct Self {
    uint64_t pid = 0;
    uint64_t start = 0;
  };
  virtual Self Writer() { return {}; }
};

// Where CRI-O's handlers without a runtime_root keep their state (conmon
// passes --root): the roots InitFromRuntimeState reads.
const std::vector<std::string>& CrioStateRoots();

// The real thing; the status file at `status_path`, its directory made when missing.
std::unique_ptr<HealOps> LinuxHealOps(std::string status_path);

// Whether /proc/self/status's NSpid line names one PID only (the initial
// PID namespace); a nested one lists one per level. Unreadable: true.
[[nodiscard]] bool NsPidIsInitial(const std::string& proc_self_status);

}  // namespace ocirlimit::nri
