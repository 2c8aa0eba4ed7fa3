// Small string helpers shared by every error message and log line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ocirlimit {

// "value" with the double quotes (and OneLine escapes), as every error
// message names values; past kMaxQuotedBytes, `"aaaa…" (60000 bytes)`.
std::string Quote(std::string_view s);
// A JSON string literal: quotes, backslashes and control characters escaped,
// invalid UTF-8 replaced by U+FFFD. Log lines quote every value this way, so
// a line is always one line and always parses back.
std::string JsonQuote(std::string_view s);

// Values echoed into messages are cut to this many bytes, with their size
// stated: a 900 KB id or a 60 KB annotation must not make a 900 KB line.
inline constexpr size_t kMaxQuotedBytes = 256;

// The part of s a message shows: at most max bytes, cut at a UTF-8
// character boundary, and the note that follows the closing quote
// (" (60000 bytes)") when it was cut, else "".
struct MessageCut {
  std::string_view head;
  std::string size_note;
  bool cut() const { return !size_note.empty(); }
};
MessageCut CutForMessage(std::string_view s, size_t max = kMaxQuotedBytes);

// JsonQuote of a value echoed from input (an id, a status, a key), cut like
// Quote: `"aaaa…" (900000 bytes)`. Whole messages use JsonQuote.
std::string JsonQuoteCut(std::string_view s);
// A value from input (a container id or name, a path) as one cell of a
// table: itself when it is printable ASCII without space, '"' or '\\' and
// at most kMaxQuotedBytes long, else JsonQuoteCut(s). A newline in an id can
// never start a row of its own.
std::string TableCell(std::string_view s);
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
