#include "formats/text.h"

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

namespace {

// Length of the well-formed UTF-8 sequence at the start of s, or 0.
size_t Utf8Length(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = b(0);
  size_t n = 0;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) n = 2;
  if (lead >= 0xE0 && lead <= 0xEF) n = 3;
  if (lead >= 0xF0 && lead <= 0xF4) n = 4;
  if (n == 0 || s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0;
  }
  // Overlong forms, surrogates and code points past U+10FFFF.
  if (lead == 0xE0 && b(1) < 0xA0) return 0;
  if (lead == 0xED && b(1) > 0x9F) return 0;
  if (lead == 0xF0 && b(1) < 0x90) return 0;
  if (lead == 0xF4 && b(1) > 0x8F) return 0;
  return n;
}

// The code point of a well-formed sequence of n bytes.
char32_t CodePoint(std::string_view s, size_t n) {
  const auto b = [&](size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(s[i])); };
  if (n == 1) return b(0);
  if (n == 2) return (b(0) & 0x1F) << 6 | (b(1) & 0x3F);
  if (n == 3) return (b(0) & 0x0F) << 12 | (b(1) & 0x3F) << 6 | (b(2) & 0x3F);
  return (b(0) & 0x07) << 18 | (b(1) & 0x3F) << 12 | (b(2) & 0x3F) << 6 | (b(3) & 0x3F);
}

// Code points that are not ASCII yet break a record when shown raw: C1
// controls (U+0085 NEXT LINE among them), the line and paragraph separators,
// and the bidi controls that reorder what a terminal or editor shows
// (U+061C, U+200E/F, U+202A..U+202E, U+2066..U+2069).
bool HiddenCodePoint(char32_t c) {
  return (c >= 0x80 && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F ||
         (c >= 0x2028 && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

void AppendU(std::string& out, char32_t c) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(c >> shift) & 0xF];
}

// OneLine's escapes, and with `quotes` also `"` and `\` as \" and \\.
std::string Escaped(std::string_view s, bool quotes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    const auto u = static_cast<unsigned char>(s[0]);
    const size_t n = std::max<size_t>(Utf8Length(s), 1);
    if (n > 1 && HiddenCodePoint(CodePoint(s, n))) {
      AppendU(out, CodePoint(s, n));
    } else if (n > 1) {
      out.append(s.substr(0, n));
    } else if (u == '\n') {
      out += "\\n";
    } else if (u == '\r') {
      out += "\\r";
    } else if (u == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u >= 0x7f) {  // controls, and bytes that are not UTF-8
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else if (quotes && (u == '"' || u == '\\')) {
      out += '\\';
      out += static_cast<char>(u);
    } else {
      out += static_cast<char>(u);
    }
    s.remove_prefix(n);
  }
  return out;
}

}  // namespace

std::string Quote(std::string_view s) {
  const MessageCut c = CutForMessage(s);
  // Built by appends: GCC 12 at -O3 warns falsely (-Wrestrict) on "\"" + s.
  std::string out;
  out.reserve(c.head.size() + 2 + c.size_note.size() + 3);
  out += '"';
  out += Escaped(c.head, true);
  if (c.cut()) out += "\u2026";
  out += '"';
  out += c.size_note;
  return out;
}

std::string TableCell(std::string_view s) {
  bool plain = !s.empty() && s.size() <= kMaxQuotedBytes;
  for (char ch : s) {
    plain = plain && ch > ' ' && ch < 0x7f && ch != '"' && ch != '\\';
  }
  return plain ? std::string(s) : JsonQuoteCut(s);
}

std::string JsonQuoteCut(std::string_view s) {
  const MessageCut c = CutForMessage(s);
  if (!c.cut()) return JsonQuote(s);
  std::string head(c.head);
  head += "\u2026";
  return JsonQuote(head) + c.size_note;
}

std::string JsonQuote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  while (!s.empty()) {
    const auto u = static_cast<unsigned char>(s[0]);
    const size_t n = Utf8Length(s);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      s.remove_prefix(1);
      continue;
    }
    if (n > 1 && HiddenCodePoint(CodePoint(s, n))) {
      AppendU(out, CodePoint(s, n));
    } else if (n > 1) {
      out.append(s.substr(0, n));
    } else if (u == '"' || u == '\\') {
      out += '\\';
      out += static_cast<char>(u);
    } else if (u == '\n') {
      out += "\\n";
    } else if (u == '\r') {
      out += "\\r";
    } else if (u == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += static_cast<char>(u);
    }
    s.remove_prefix(n);
  }
  out += '"';
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

std::string OneLine(std::string_view s) { return Escaped(s, false); }

}  // namespace ocirlimit
