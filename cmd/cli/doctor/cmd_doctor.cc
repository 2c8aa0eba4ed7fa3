// oci-rlimit doctor [--root DIR]: this node's checks (doctor.h) on its real
// root, or on a copy of one under DIR (rooted_node_ops.h).
#include <iostream>

#include "cli/doctor/command.h"
#include "cli/doctor/doctor.h"
#include "effects/config_loader.h"
#include "node/rooted_node_ops.h"

namespace ocirlimit::cli {

int DoctorCommand(const CliArgs& a) {
  auto ops = RootedNodeOps(a.root);
  DoctorOptions options;
  ResolveDoctorConfig(options, a.config, ProcessEnv());
  options.rooted = a.root != "/";
  DoctorReport r = RunDoctor(*ops, options);
  std::cout << (a.json ? DoctorJson(r).dump(2) + "\n" : DoctorText(r));
  return r.ok() ? 0 : 1;
}

}  // namespace ocirlimit::cli
