#include "text.h"

#include <algorithm>
#include <cctype>

namespace ocirlimit {

MessageCut CutForMessage(std::string_view s, size_t max) {
  if (s.size() <= max) return {s, ""};
  size_t end = max;
  // Back off continuation bytes (10xxxxxx) so no character is split.
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xc0) == 0x80) --end;
  return {s.substr(0, end), " (" + std::to_string(s.size()) + " bytes)"};
}

std::string Quote(std::string_view s) {
  const MessageCut c = CutForMessage(s);
  // Built by appends: GCC 12 at -O3 warns falsely (-Wrestrict) on "\"" + s.
  std::string out;
  out.reserve(c.head.size() + 2 + c.size_note.size() + 3);
  out += '"';
  out += OneLine(c.head);
  if (c.cut()) out += "\u2026";
  out += '"';
  out += c.size_note;
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string OneLine(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace ocirlimit
