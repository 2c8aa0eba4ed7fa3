// Small string helpers shared by the parsers' error messages.
#pragma once

#include <string>
#include <string_view>

namespace ocirlimit {

// "value" with the double quotes (and OneLine escapes), as every error
// message names values.
std::string Quote(std::string_view s);
std::string_view Trim(std::string_view s);
std::string Lower(std::string_view s);
// Control characters as C escapes (\n, \x01), so text quoted from input
// cannot break an error or log message over several lines.
std::string OneLine(std::string_view s);

}  // namespace ocirlimit
