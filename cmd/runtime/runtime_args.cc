#include "runtime/runtime_args.h"

#include <algorithm>
#include <optional>

namespace ocirlimit {
namespace {

// runc's and crun's global flags that take a value.
constexpr std::string_view kGlobalValueFlags[] = {
    "root", "log", "log-format", "criu", "rootless", "cgroup-manager", "log-level"};

// Flags of runc/crun create, run and exec that take a value. The rest are
// booleans (--detach, --tty, --no-pivot, ...).
constexpr std::string_view kCommandValueFlags[] = {"bundle",
                                                   "b",
                                                   "console-socket",
                                                   "pidfd-socket",
                                                   "pid-file",
                                                   "preserve-fds",
                                                   "cwd",
                                                   "env",
                                                   "e",
                                                   "user",
                                                   "u",
                                                   "cap",
                                                   "c",
                                                   "additional-gids",
                                                   "g",
                                                   "process",
                                                   "p",
                                                   "process-label",
                                                   "apparmor",
                                                   "cgroup"};

bool Contains(const auto& list, std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

struct FlagToken {
  std::string name;
  std::optional<std::string> value;  // the part after '=', if any
};

// "-x", "--x", "-x=v", "--x=v"; nullopt for a positional argument. A lone
// "-" is positional, as in Go's flag package.
std::optional<FlagToken> AsFlag(const std::string& arg) {
  if (arg.size() < 2 || arg[0] != '-') return std::nullopt;
  std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
  size_t eq = body.find('=');
  if (eq == std::string::npos) return FlagToken{body, std::nullopt};
  return FlagToken{body.substr(0, eq), body.substr(eq + 1)};
}

// The flag's value: inline after '=', else the next argument.
Result<std::string> TakeValue(const FlagToken& flag, const std::vector<std::string>& args,
                              size_t& i, std::string_view where) {
  if (flag.value) return *flag.value;
  if (i + 1 >= args.size()) {
    return MakeError(std::string(where) + "flag \"" + args[i] + "\": missing value");
  }
  return args[++i];
}

RuntimeCommand CommandOf(std::string_view sub) {
  if (sub == "create") return RuntimeCommand::kCreate;
  if (sub == "run") return RuntimeCommand::kRun;
  if (sub == "exec") return RuntimeCommand::kExec;
  return RuntimeCommand::kOther;
}

}  // namespace

Result<GlobalFlags> ParseGlobalFlags(const std::vector<std::string>& args) {
  GlobalFlags g;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {
      if (i + 1 < args.size()) {
        g.subcommand_at = i + 1;
        g.subcommand = args[i + 1];
        g.command = CommandOf(g.subcommand);
      }
      return g;
    }
    auto flag = AsFlag(args[i]);
    if (!flag) {
      g.subcommand_at = i;
      g.subcommand = args[i];
      g.command = CommandOf(g.subcommand);
      return g;
    }
    // --oci-rlimit-help wins over --version wherever both appear.
    if (flag->name == kSelfHelpFlag) g.self = SelfRequest::kHelp;
    if ((flag->name == "version" || flag->name == "v") && g.self == SelfRequest::kNone) {
      g.self = SelfRequest::kVersion;
    }
    if (!Contains(kGlobalValueFlags, flag->name)) continue;
    auto value = TakeValue(*flag, args, i, "global ");
    if (!value) return value.error();
    if (flag->name == "root") g.root = *value;
    if (flag->name == "log") g.log = *value;
    if (flag->name == "log-format") g.log_format = *value;
  }
  return g;
}

Result<CommandFlags> ParseCommandFlags(const std::vector<std::string>& args, size_t from,
                                       std::string_view subcommand) {
  CommandFlags c;
  const std::string where = std::string(subcommand) + " ";
  for (size_t i = from; i < args.size(); ++i) {
    if (args[i] == "--") {
      if (i + 1 < args.size()) c.id = args[i + 1];
      break;
    }
    auto flag = AsFlag(args[i]);
    // Everything after the id belongs to the container (exec's command and
    // its own flags), never to us.
    if (!flag) {
      c.id = args[i];
      break;
    }
    if (!Contains(kCommandValueFlags, flag->name)) continue;
    auto value = TakeValue(*flag, args, i, where);
    if (!value) return value.error();
    // As in runc, an empty --bundle means the cwd and an empty --process none.
    if (flag->name == "bundle" || flag->name == "b") c.bundle = value->empty() ? "." : *value;
    if (flag->name == "process" || flag->name == "p") c.process = *value;
  }
  return c;
}

Result<RuntimeArgs> ParseRuntimeArgs(const std::vector<std::string>& args) {
  RuntimeArgs out;
  auto global = ParseGlobalFlags(args);
  if (!global) return global.error();
  out.global = *global;
  RuntimeCommand cmd = out.global.command;
  if (cmd == RuntimeCommand::kCreate || cmd == RuntimeCommand::kRun ||
      cmd == RuntimeCommand::kExec) {
    auto command = ParseCommandFlags(args, out.global.subcommand_at + 1, out.global.subcommand);
    if (!command) return command.error();
    out.command = *command;
  }
  return out;
}

}  // namespace ocirlimit
