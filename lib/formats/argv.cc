#include "formats/argv.h"

#include "formats/text.h"

namespace ocirlimit {

const FlagSpec* ArgReader::Find(std::string_view name) const {
  for (const FlagSpec& spec : specs_) {
    if (spec.name == name || (!spec.short_name.empty() && spec.short_name == name)) return &spec;
  }
  return nullptr;
}

Result<std::optional<ArgItem>> ArgReader::Next() {
  if (at_ == args_.size()) return std::optional<ArgItem>();
  const std::string& arg = args_[at_++];
  if (arg.empty() || arg[0] != '-') return std::optional<ArgItem>(ArgItem{nullptr, arg});
  std::string_view name = arg;
  std::optional<std::string> inline_value;
  if (size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string::npos) {
    name = std::string_view(arg).substr(0, eq);
    inline_value = arg.substr(eq + 1);
  }
  const FlagSpec* spec = Find(name);
  // "-h=x" is not a spelling of "-h": short names stand alone.
  if (!spec || (inline_value && spec->name != name)) return MakeError("unknown flag " + Quote(arg));
  const std::string flag(spec->name);
  if (spec->metavar.empty()) {
    if (inline_value) return MakeError(flag + ": takes no value, got " + Quote(arg));
    return std::optional<ArgItem>(ArgItem{spec, ""});
  }
  std::string value;
  if (inline_value) {
    value = *inline_value;
  } else {
    if (at_ == args_.size()) return MakeError(flag + ": missing " + std::string(spec->metavar));
    value = args_[at_++];
  }
  if (value.empty() && !spec->empty_ok) {
    return MakeError(flag + ": empty " + std::string(spec->metavar));
  }
  return std::optional<ArgItem>(ArgItem{spec, std::move(value)});
}

std::optional<std::string> LastFlagValue(const std::vector<std::string>& args,
                                         std::span<const FlagSpec> specs, std::string_view name) {
  ArgReader reader(args, specs);
  std::optional<std::string> out;
  for (;;) {
    auto next = reader.Next();
    if (!next) return std::nullopt;
    if (!*next) return out;
    if ((*next)->Is(name)) out = (*next)->value;
  }
}

}  // namespace ocirlimit
