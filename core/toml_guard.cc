#include "core/toml_guard.h"

#include <cstdint>
#include <cstdio>
#include <string>

namespace ocirlimit {
namespace {

bool Unsafe(char32_t c) {
  return (c >= 0xA1 && c <= 0x499) || (c >= 0x2C5E && c <= 0x3057 && c != 0x3000) ||
         (c >= 0xFB26 && c <= 0xFEFE);
}

// Length of the UTF-8 sequence at s[0], with its code point, or 0 when the
// bytes are not well-formed (overlong, surrogate, out of range, truncated).
size_t Decode(std::string_view s, char32_t& out) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  unsigned char lead = b(0);
  if (lead < 0x80) {
    out = lead;
    return 1;
  }
  size_t n = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
  if (n == 0 || lead > 0xF4) return 0;
  char32_t c = lead & (0x7F >> n);
  for (size_t i = 1; i < n; ++i) {
    if (!cont(i)) return 0;
    c = (c << 6) | (b(i) & 0x3F);
  }
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kMin[n] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  out = c;
  return n;
}

}  // namespace

Status CheckTomlSafeText(std::string_view text) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < text.size();) {
    char32_t c = 0;
    size_t n = Decode(text.substr(i), c);
    const std::string where = "line " + std::to_string(line) + ", column " + std::to_string(column);
    if (n == 0) return MakeError(where + ": not valid UTF-8");
    if (Unsafe(c)) {
      char cp[16];
      std::snprintf(cp, sizeof cp, "U+%04X", static_cast<unsigned>(c));
      return MakeError(where + ": character " + cp +
                       " is not accepted (the TOML library mishandles it); use ASCII");
    }
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += n;
  }
  return Ok{};
}

}  // namespace ocirlimit
