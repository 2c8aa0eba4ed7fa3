#include "formats/toml_guard.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

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

// How deep the values of a TOML text sit, from its text alone, so toml++
// never sees one nested past kMaxTomlDepth. Strings and comments are
// skipped; a dot counts only where a key is read (a header, the left of `=`,
// a key inside an inline table), so floats and times do not. Every depth
// is checked as it grows, so a key with no `=` after it is caught too.
class DepthScan {
 public:
  explicit DepthScan(std::string_view t) : t_(t) {}

  Status Run() {
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '"' || c == '\'') {
        SkipString(c);
        line_start_ = false;
        continue;
      }
      if (c == '#') {
        while (i_ < t_.size() && t_[i_] != '\n') Advance();
        continue;
      }
      if (c == '\n' && open_.empty()) {
        key_ = true;
        line_start_ = true;
        in_header_ = false;
        dots_ = 0;
      } else if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
        if (auto st = Structural(c); !st) return st;
        line_start_ = false;
      }
      Advance();
    }
    return Ok{};
  }

 private:
  struct Open {
    bool table;  // an inline table (keys inside), else an array
    int base;    // the depth of what it holds
  };

  // The depth that what is being read sits under.
  int Base() const { return open_.empty() ? (in_header_ ? 0 : header_) : open_.back().base; }

  Status Structural(char c) {
    if (c == '[' && open_.empty() && (line_start_ || in_header_)) {
      in_header_ = true;  // "[" or "[[": the header's own parts are its depth
      dots_ = 0;
      key_ = true;
      return Check(1);
    }
    if (c == ']' && in_header_) {
      if (key_) header_ = dots_ + 1;
      key_ = false;
      return Ok{};
    }
    if (c == '.' && key_) {
      ++dots_;
      return Check(Base() + dots_ + 1);
    }
    if (c == '=' && key_) {
      value_ = Base() + dots_ + 1;
      key_ = false;
      dots_ = 0;
      return Check(value_);
    }
    if ((c == '{' || c == '[') && !key_) {
      const bool table = c == '{';
      open_.push_back({table, table ? value_ : value_ + 1});
      key_ = table;
      dots_ = 0;
      value_ = open_.back().base;
      return Check(value_);
    }
    if ((c == '}' || c == ']') && !open_.empty()) {
      open_.pop_back();
      key_ = false;
    } else if (c == ',' && !open_.empty()) {
      key_ = open_.back().table;
      dots_ = 0;
      value_ = open_.back().base;
    }
    return Ok{};
  }

  Status Check(int depth) const {
    if (depth <= kMaxTomlDepth) return Ok{};
    const std::string limit = std::to_string(kMaxTomlDepth);
    return MakeError("line " + std::to_string(line_) + ", column " + std::to_string(column_) +
                     ": keys nested deeper than " + limit +
                     " levels (dotted keys, [table] headers, inline tables and arrays count); " +
                     "the limit is " + limit);
  }

  // A basic ("...", with escapes) or literal ('...') string, on one line or
  // multi-line (three quotes). A one-line string left open ends at the end of
  // its line, where toml++ stops with a syntax error.
  void SkipString(char q) {
    const std::string triple(3, q);
    const bool multi = t_.substr(i_, 3) == triple;
    const size_t quotes = multi ? 3 : 1;
    for (size_t k = 0; k < quotes; ++k) Advance();
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '\\' && q == '"') {
        Advance();
        if (i_ < t_.size()) Advance();
      } else if (c == '\n' && !multi) {
        return;
      } else if (c == q && (!multi || t_.substr(i_, 3) == triple)) {
        for (size_t k = 0; k < quotes; ++k) Advance();
        return;
      } else {
        Advance();
      }
    }
  }

  void Advance() {
    if (t_[i_] == '\n') {
      ++line_;
      column_ = 1;
    } else if ((static_cast<unsigned char>(t_[i_]) & 0xC0) != 0x80) {
      ++column_;
    }
    ++i_;
  }

  std::string_view t_;
  size_t i_ = 0;
  size_t line_ = 1, column_ = 1;
  std::vector<Open> open_;
  int header_ = 0;  // the parts of the current [table] header
  int dots_ = 0;    // dots in the key being read
  int value_ = 0;   // the depth of the value being read
  bool key_ = true;
  bool in_header_ = false;
  bool line_start_ = true;
};

}  // namespace

Status CheckTomlSafeText(std::string_view text) {
  if (text.size() > kMaxTomlBytes) {
    return MakeError("the text is " + std::to_string(text.size()) + " bytes; the limit is " +
                     std::to_string(kMaxTomlBytes));
  }
  size_t line = 1, column = 1;
  for (size_t i = 0; i < text.size();) {
    char32_t c = 0;
    size_t n = Decode(text.substr(i), c);
    // Built only for an error: once per character it cost a second per
    // 160 KB under ASan (found by fuzz/fuzz_toml.cc).
    const auto where = [&] {
      return "line " + std::to_string(line) + ", column " + std::to_string(column);
    };
    if (n == 0) return MakeError(where() + ": not valid UTF-8");
    if (Unsafe(c)) {
      char cp[16];
      std::snprintf(cp, sizeof cp, "U+%04X", static_cast<unsigned>(c));
      return MakeError(where() + ": character " + cp +
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
  return DepthScan(text).Run();
}

}  // namespace ocirlimit
