// One argv reader for every program: `--flag value` and `--flag=value` mean
// the same everywhere, a switch takes no value, and a mistake is one line in
// one form. Each program keeps its own meaning of the items (its args.cc).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/error.h"

namespace ocirlimit {

struct FlagSpec {
  std::string_view name;             // "--config"
  std::string_view metavar = {};     // "PATH" when the flag takes a value; empty: a switch
  std::string_view short_name = {};  // "-h", spelled alone only
  bool empty_ok = false;             // whether "--flag=" (an empty value) is accepted
};

struct ArgItem {
  const FlagSpec* flag = nullptr;  // nullptr: a positional argument
  std::string value;               // the flag's value, or the positional argument itself

  [[nodiscard]] bool Is(std::string_view name) const { return flag && flag->name == name; }
};

// Reads args (argv without argv[0]) one item at a time. Errors:
//   unknown flag "--x"
//   --config: missing PATH        (the last argument, with no value after it)
//   --config: empty PATH
//   --json: takes no value, got "--json=1"
// Anything that starts with '-' and is not a known flag is unknown, "-" alone
// too (no program here reads a file named "-").
class ArgReader {
 public:
  ArgReader(const std::vector<std::string>& args, std::span<const FlagSpec> specs)
      : args_(args), specs_(specs) {}

  // The next item, or nullopt after the last.
  [[nodiscard]] Result<std::optional<ArgItem>> Next();

 private:
  const FlagSpec* Find(std::string_view name) const;

  const std::vector<std::string>& args_;
  std::span<const FlagSpec> specs_;
  size_t at_ = 0;
};

// The last value of `name` in another program's argv (argv[0] excluded),
// read with that program's own flag table, as it read it: nullopt when the
// flag is absent or the argv does not read (that program refused it too).
[[nodiscard]] std::optional<std::string> LastFlagValue(const std::vector<std::string>& args,
                                                       std::span<const FlagSpec> specs,
                                                       std::string_view name);

}  // namespace ocirlimit
