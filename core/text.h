// Small string helpers shared by every error message and log line.
#pragma once

#include <string>
#include <string_view>

namespace ocirlimit {

// "value" with the double quotes (and OneLine escapes), as every error
// message names values.
std::string Quote(std::string_view s);
// A JSON string literal: quotes, backslashes and control characters escaped,
// invalid UTF-8 replaced by U+FFFD. Log lines quote every value this way, so
// a line is always one line and always parses back.
std::string JsonQuote(std::string_view s);
std::string_view Trim(std::string_view s);
std::string Lower(std::string_view s);
// Control characters as C escapes (\n, \x01), so text quoted from input
// cannot break an error or log message over several lines.
std::string OneLine(std::string_view s);

// a + b + c without a temporary per +, for strings built in loops.
template <class... Parts>
std::string Cat(const Parts&... parts) {
  std::string out;
  (out.append(std::string_view(parts)), ...);
  return out;
}

}  // namespace ocirlimit
