// The one parse entry point for every engine's TOML file: the text passes
// formats' guard (CheckTomlSafeText) before toml++ sees it, and a syntax error
// is one line naming the file and the line. Lookups never dereference a
// missing table: a file without `[crio]` is a file without its keys.
#pragma once

#include <toml++/toml.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/error.h"

namespace ocirlimit::engines {

// One config file of an engine: its node path and its text.
struct ConfigText {
  std::string path;
  std::string text;
};

[[nodiscard]] Result<toml::table> ParseToml(std::string_view text, const std::string& source);

// The node at `path` under `root` (each step a table), or nullptr.
const toml::node* TomlAt(const toml::node& root, const std::vector<std::string_view>& path);
// The table at `path`, or nullptr when missing or not a table.
const toml::table* TomlTableAt(const toml::node& root, const std::vector<std::string_view>& path);

// `key` of `t` as a string: nullopt when missing, an error naming
// `where` and the key when it is not a string.
[[nodiscard]] Result<std::optional<std::string>> TomlString(const toml::table& t,
                                                            std::string_view key,
                                                            const std::string& where);
// `key` of `t` as an array of strings, same rules.
[[nodiscard]] Result<std::optional<std::vector<std::string>>> TomlStrings(const toml::table& t,
                                                                          std::string_view key,
                                                                          const std::string& where);
// `key` of `t` as a boolean, same rules.
[[nodiscard]] Result<std::optional<bool>> TomlBool(const toml::table& t, std::string_view key,
                                                   const std::string& where);

}  // namespace ocirlimit::engines
