#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/version.h"

namespace ocirlimit::cli {

int RunCli(const std::vector<std::string>& args) {
  if (!args.empty()) {
    if (const CommandSpec* c = FindCommand(args[0]); c && c->run_argv) {
      return c->run_argv(std::vector<std::string>(args.begin() + 1, args.end()));
    }
  }
  auto a = ParseCliArgs(args);
  if (!a) {
    std::cerr << kCliName << ": " << a.error().Text() << "\n" << CliUsage();
    return 2;
  }
  if (a->mode == CliMode::kHelp) {
    std::cout << CliUsage();
    return 0;
  }
  if (a->mode == CliMode::kVersion) {
    std::cout << kCliName << " " << kVersion << "\n";
    return 0;
  }
  return FindCommand(a->command)->run(*a);
}

}  // namespace ocirlimit::cli
