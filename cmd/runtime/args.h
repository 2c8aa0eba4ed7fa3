// The argv of oci-rlimit-runtime: its own flags, then the argv of runc:
//   RUNTIME [--config PATH] [GLOBAL FLAGS] SUBCOMMAND [FLAGS] [ID [ARGS...]]
// Parsing is pure, and only as deep as the wrapper needs: the global flags
// that say where runc keeps state and logs, the subcommand, and for create,
// run and exec the bundle, the --process file and the container id.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/argv.h"
#include "formats/error.h"

namespace ocirlimit {

enum class RuntimeCommand { kNone, kCreate, kRun, kExec, kOther };

// What the wrapper answers itself, before any subcommand: --oci-rlimit-help
// (its own usage; --help is the runtime's) and --version/-v (our version
// line, then the runtime's).
enum class SelfRequest { kNone, kHelp, kVersion };

// The flags, as formats/argv's FlagSpec tables. ArgReader does not read them:
// the argv is runc's, in Go's forms (-name, --name, -name=value, --name=value,
// -name value), with flags we do not know, which pass through untouched. A
// short name is Go's too: -b, --b, -b=value.
//
// The wrapper's own flags with a value, read only before runc's argv (docker's
// runtimeArgs come first) and never passed on: runc has no --config.
inline constexpr FlagSpec kRuntimeOwnFlags[] = {
    {.name = "--config", .metavar = "PATH"},
};
// The wrapper's own: switches before any subcommand.
inline constexpr FlagSpec kRuntimeSelfFlags[] = {
    {.name = "--oci-rlimit-help"},
    {.name = "--version", .short_name = "-v"},
};
// runc's and crun's global flags that take a value. Any other global flag is
// taken to have none.
inline constexpr FlagSpec kRuncGlobalValueFlags[] = {
    {.name = "--root", .metavar = "PATH"},
    {.name = "--log", .metavar = "PATH"},
    {.name = "--log-format", .metavar = "FORMAT"},
    {.name = "--criu", .metavar = "PATH"},
    {.name = "--rootless", .metavar = "VALUE"},
    {.name = "--cgroup-manager", .metavar = "MANAGER"},
    {.name = "--log-level", .metavar = "LEVEL"},
};
// Flags of runc/crun create, run, exec, ps and events that take a value. The rest are
// booleans (--detach, --tty, --no-pivot, ...).
inline constexpr FlagSpec kRuncCommandValueFlags[] = {
    {.name = "--bundle", .metavar = "PATH", .short_name = "-b"},
    {.name = "--console-socket", .metavar = "PATH"},
    {.name = "--pidfd-socket", .metavar = "PATH"},
    {.name = "--pid-file", .metavar = "PATH"},
    {.name = "--preserve-fds", .metavar = "N"},
    {.name = "--cwd", .metavar = "PATH"},
    {.name = "--env", .metavar = "VAR", .short_name = "-e"},
    {.name = "--user", .metavar = "UID", .short_name = "-u"},
    {.name = "--cap", .metavar = "CAP", .short_name = "-c"},
    {.name = "--additional-gids", .metavar = "GID", .short_name = "-g"},
    {.name = "--process", .metavar = "PATH", .short_name = "-p"},
    {.name = "--process-label", .metavar = "LABEL"},
    {.name = "--apparmor", .metavar = "PROFILE"},
    {.name = "--cgroup", .metavar = "PATH"},
    {.name = "--format", .metavar = "FORMAT", .short_name = "-f"},  // ps
    {.name = "--interval", .metavar = "DURATION"},                  // events
};

struct GlobalFlags {
  std::string root;        // --root, empty when absent
  std::string log;         // --log
  std::string log_format;  // --log-format
  std::string subcommand;  // as given; empty when there is none
  RuntimeCommand command = RuntimeCommand::kNone;
  size_t subcommand_at = 0;  // index of the subcommand in args
  SelfRequest self = SelfRequest::kNone;
};

struct CommandFlags {
  std::string bundle = ".";  // create/run: --bundle, -b; runc's default is the cwd
  std::string process;       // exec: --process, -p; empty when absent
  std::string id;            // the first positional argument
};

// The leading kRuntimeOwnFlags of args (argv[0] excluded), as formats/argv
// reads them (--config PATH, --config=PATH); `count` arguments are ours, the
// rest is runc's argv, passed on untouched.
struct OwnFlags {
  std::optional<std::string> config;
  size_t count = 0;
};
[[nodiscard]] Result<OwnFlags> ParseOwnFlags(const std::vector<std::string>& args);

// args excludes argv[0] and our own flags. A --config among them is an error:
// runc would refuse it. Flags take the forms Go's flag package accepts:
// -name, --name, -name=value, --name=value, and -name value for flags with
// a value. A global flag we do not know is taken to have no value.
[[nodiscard]] Result<GlobalFlags> ParseGlobalFlags(const std::vector<std::string>& args);

// Parses the arguments that follow the subcommand of create, run or exec.
// `subcommand` names the command in errors.
[[nodiscard]] Result<CommandFlags> ParseCommandFlags(const std::vector<std::string>& args,
                                                     size_t from, std::string_view subcommand);

struct RuntimeArgs {
  GlobalFlags global;
  CommandFlags command;  // defaults unless the command is create, run or exec
};

// The lifecycle commands that edit no spec (delete, kill, state, ps, events,
// pause, resume): they reach the base runtime even when the chained one is
// gone, so the containers it started can still be stopped and removed.
[[nodiscard]] bool EditsNoSpec(std::string_view subcommand);

// Both of the above.
[[nodiscard]] Result<RuntimeArgs> ParseRuntimeArgs(const std::vector<std::string>& args);

}  // namespace ocirlimit
