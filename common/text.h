// Small string helpers shared by the parsers' error messages.
#pragma once

#include <string>
#include <string_view>

namespace ocirlimit {

// "value" with the double quotes, as every error message names values.
std::string Quote(std::string_view s);
std::string_view Trim(std::string_view s);
std::string Lower(std::string_view s);

}  // namespace ocirlimit
