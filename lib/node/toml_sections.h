// The sections of a TOML text, found and cut textually (no TOML parse), so
// that an edit keeps the admin's comments and layout. The node installer's
// containerd config edits (node_config.h) use them; what the edited text
// means is checked there, with toml++.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "formats/error.h"

namespace ocirlimit::node {

// A `[a.'b'."c"]` or `[[a.b]]` header line of a TOML text.
struct TomlHeader {
  size_t begin = 0;  // offset of the line
  size_t end = 0;    // where its section ends: the next header's line, or the text's end
  std::vector<std::string> path;
  bool array = false;
};

// Every table header, skipping brackets inside strings, multi-line strings,
// comments and multi-line array values. Errors only on an unterminated
// header or string.
Result<std::vector<TomlHeader>> ScanTomlHeaders(std::string_view text);

// `text` with every section whose header path starts with one of `prefixes`
// cut out, together with a `marker` line right above one (and the blank line
// above that marker). Comments and blank lines at a section's end stay with
// what follows; blank lines between two cut sections go too.
Result<std::string> CutSections(std::string_view text,
                                const std::vector<std::vector<std::string>>& prefixes,
                                std::string_view marker);

}  // namespace ocirlimit::node
