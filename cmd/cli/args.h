// oci-rlimit's argv (through formats/argv.h): the command table (each command's
// name, its flags and what it does, as --help lists them) and the parser of
// `oci-rlimit COMMAND [FLAGS]`. `node` reads its own argv (node_args.h).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/common/cli_args.h"
#include "formats/argv.h"
#include "formats/error.h"

namespace ocirlimit::cli {

// One command of the table, in the style of crun's: its name, its usage
// line (after "oci-rlimit "; a "\n" continues it), what it does (--help's
// paragraph; a "\n" starts an indented line), the flags it takes and its
// handler: run, given the parsed argv, or run_argv, given the argv after its
// name as it is (node reads its own, node_args.h).
struct CommandSpec {
  std::string_view name;
  std::string_view usage;
  std::string_view about;
  std::span<const FlagSpec> flags;
  int (*run)(const CliArgs&) = nullptr;
  int (*run_argv)(const std::vector<std::string>&) = nullptr;
};

// validate, explain, doctor, audit, node, admission-policy: in the order
// --help lists them.
[[nodiscard]] std::span<const CommandSpec> Commands();

// --help's text, from the table: the usage lines, each command's paragraph,
// where the config comes from and the exit statuses.
[[nodiscard]] std::string CliUsage();

// The command named `name`, or nullptr.
[[nodiscard]] const CommandSpec* FindCommand(std::string_view name);

// oci-rlimit COMMAND [FLAGS]; args excludes argv[0]. Flags may come before or
// after the command, as `--flag value` or `--flag=value`; --help, -h and
// --version win wherever they are. Errors are one line: formats/argv's, or
//   missing command: validate, explain, doctor, audit, node or admission-policy
//   unknown command "x"
//   unexpected argument "x"
//   --root: only for doctor
//   explain: --bundle is required
//   --no-default-roots: needs a --runtime-root
//   --format "x": use text, json or prometheus
//   --json: conflicts with --format prometheus
//   --output: only with --format prometheus
// A command with run_argv is for the caller to run first (node must be the
// first argument); ParseCliArgs reads only the other ones.
[[nodiscard]] Result<CliArgs> ParseCliArgs(const std::vector<std::string>& args);

}  // namespace ocirlimit::cli
