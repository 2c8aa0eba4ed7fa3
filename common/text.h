// Small string helpers shared by the parsers' error messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ocirlimit {

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

// "value" with the double quotes (and OneLine escapes), as every error
// message names values; past kMaxQuotedBytes, `"aaaa…" (60000 bytes)`.
std::string Quote(std::string_view s);
std::string_view Trim(std::string_view s);
std::string Lower(std::string_view s);
// Control characters as C escapes (\n, \x01), so text quoted from input
// cannot break an error or log message over several lines.
std::string OneLine(std::string_view s);

}  // namespace ocirlimit
