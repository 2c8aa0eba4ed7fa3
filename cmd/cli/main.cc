// oci-rlimit: the admin CLI. validate checks a config, explain shows what it
// does to one bundle, doctor inspects this node, audit checks (and with
// --heal fixes) every running container, node installs oci-rlimit on a node.
// The command table is args.cc; the flow and its handlers are commands.h.
#include "cli/commands.h"
#include "effects/run_main.h"

int main(int argc, char** argv) {
  return ocirlimit::RunMain(ocirlimit::cli::kCliName,
                            [&] { return ocirlimit::cli::RunCli(ocirlimit::ArgsOf(argc, argv)); });
}
