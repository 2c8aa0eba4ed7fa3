#include <iostream>

#include "adapters/oci/spec.h"
#include "cli/common/cli_args.h"

namespace ocirlimit::cli {

int ReportError(const CliArgs& a, const Error& e) {
  if (a.json) std::cout << Json({{"ok", false}, {"error", e.Text()}}).dump(2) << "\n";
  std::cerr << kCliName << ": " << e.Text() << "\n";
  return 1;
}

}  // namespace ocirlimit::cli
