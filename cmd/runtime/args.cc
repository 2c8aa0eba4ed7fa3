#include "runtime/args.h"

#include <optional>
#include <span>

namespace ocirlimit {
namespace {

// The flag of `specs` that `name` (without its dashes, as Go reads it)
// names, by its long or its short name.
const FlagSpec* FindGoFlag(std::span<const FlagSpec> specs, std::string_view name) {
  for (const FlagSpec& spec : specs) {
    if (spec.name.substr(2) == name) return &spec;
    if (!spec.short_name.empty() && spec.short_name.substr(1) == name) return &spec;
  }
  return nullptr;
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

Result<OwnFlags> ParseOwnFlags(const std::vector<std::string>& args) {
  OwnFlags own;
  for (size_t& i = own.count; i < args.size(); ++i) {
    const FlagSpec* spec = nullptr;
    for (const FlagSpec& s : kRuntimeOwnFlags) {
      if (args[i] == s.name || args[i].starts_with(std::string(s.name) + "=")) spec = &s;
    }
    if (!spec) break;
    const FlagToken flag{std::string(spec->name.substr(2)),
                         args[i].size() > spec->name.size()
                             ? std::optional(args[i].substr(spec->name.size() + 1))
                             : std::nullopt};
    auto value = TakeValue(flag, args, i, "");
    if (!value) return value.error();
    if (value->empty()) {
      return MakeError(std::string(spec->name) + ": an empty " + std::string(spec->metavar) +
                       ": name the config file, or leave the flag out");
    }
    own.config = *value;
  }
  return own;
}

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
    if (FindGoFlag(kRuntimeOwnFlags, flag->name)) {
      return MakeError("flag \"" + args[i] +
                       "\": the wrapper's own flags go before the runtime's (--config PATH "
                       "RUNTIME-ARGS...)");
    }
    // --oci-rlimit-help wins over --version wherever both appear.
    if (const FlagSpec* self = FindGoFlag(kRuntimeSelfFlags, flag->name)) {
      if (self->name == "--oci-rlimit-help") g.self = SelfRequest::kHelp;
      if (self->name == "--version" && g.self == SelfRequest::kNone) g.self = SelfRequest::kVersion;
    }
    const FlagSpec* spec = FindGoFlag(kRuncGlobalValueFlags, flag->name);
    if (!spec) continue;
    auto value = TakeValue(*flag, args, i, "global ");
    if (!value) return value.error();
    if (spec->name == "--root") g.root = *value;
    if (spec->name == "--log") g.log = *value;
    if (spec->name == "--log-format") g.log_format = *value;
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
    const FlagSpec* spec = FindGoFlag(kRuncCommandValueFlags, flag->name);
    if (!spec) continue;
    auto value = TakeValue(*flag, args, i, where);
    if (!value) return value.error();
    // As in runc, an empty --bundle means the cwd and an empty --process none.
    if (spec->name == "--bundle") c.bundle = value->empty() ? "." : *value;
    if (spec->name == "--process") c.process = *value;
  }
  return c;
}

bool EditsNoSpec(std::string_view subcommand) {
  for (std::string_view c : {"delete", "kill", "state", "ps", "events", "pause", "resume"}) {
    if (subcommand == c) return true;
  }
  return false;
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
