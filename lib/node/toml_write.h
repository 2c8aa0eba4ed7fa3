// toml++'s text of a table, as the installer writes it into engine files.
// Only for files compiled with TOML_HEADER_ONLY=1 (ocirlimit::engines
// exports it to lib/node), as toml++ is used in the project.
#pragma once

#include <toml++/toml.h>

#include <sstream>
#include <string>

namespace ocirlimit::node {

// The table as toml++ serializes it, ending in a newline.
inline std::string SerializeToml(const toml::table& t) {
  std::ostringstream os;
  os << t;
  std::string s = os.str();
  if (!s.empty() && s.back() != '\n') s += '\n';
  return s;
}

}  // namespace ocirlimit::node
