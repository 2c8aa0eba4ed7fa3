// oci-rlimit admission-policy: the nodes' [requests] ceilings as a
// ValidatingAdmissionPolicy (adapters/k8s/admission_policy.h), on stdout or
// in --output FILE.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>

#include "cli/admission/admission_args.h"
#include "cli/admission/admission_check.h"
#include "cli/admission/command.h"
#include "effects/config_loader.h"
#include "effects/files.h"
#include "formats/text.h"

namespace ocirlimit::cli {
namespace {

// AtomicWriteFile replaces a file, keeping its owner and mode: a first run
// makes it, empty and 0644, never through a symlink.
Status MakeIfMissing(const std::string& path) {
  constexpr mode_t kMode = 0644;
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, kMode);
  if (fd >= 0) {
    close(fd);
    return Ok{};
  }
  if (errno == EEXIST) return Ok{};
  return MakeError("create " + Quote(path), errno);
}

}  // namespace

int AdmissionPolicyCommand(const std::vector<std::string>& args) {
  constexpr const char* kName = "oci-rlimit admission-policy";
  auto a = ParseAdmissionArgs(args);
  if (!a) {
    std::cerr << kName << ": " << a.error().Text() << "\n" << kAdmissionUsage;
    return 2;
  }
  if (a->help) {
    std::cout << kAdmissionUsage;
    return 0;
  }
  const ConfigPath where = ResolveConfigPath(a->config, ProcessEnv());
  auto cfg = LoadConfigFrom(where, ProcessEnv());
  if (!cfg) {
    std::cerr << kName << ": " << cfg.error().Text() << "\n";
    return 1;
  }
  if (a->check) return CheckAdmissionPolicy(*cfg, where.path, STDIN_FILENO, std::cout, std::cerr);
  a->policy.config_origin = where.path;
  auto yaml = k8s::AdmissionPolicyYaml(*cfg, a->policy);
  if (!yaml) {
    std::cerr << kName << ": " << yaml.error().Text() << "\n";
    return 1;
  }
  if (a->output.empty()) {
    std::cout << *yaml;
    return 0;
  }
  auto made = MakeIfMissing(a->output);
  if (auto st = made ? AtomicWriteFile(a->output, *yaml) : made; !st) {
    std::cerr << kName << ": " << st.error().Wrap("--output " + a->output).Text() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace ocirlimit::cli
