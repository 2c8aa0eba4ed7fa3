#include "node/toml_sections.h"

#include <algorithm>

#include "formats/text.h"

namespace ocirlimit::node {
namespace {

bool IsBare(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

class Scanner {
 public:
  explicit Scanner(std::string_view text) : t_(text) {}

  Result<std::vector<TomlHeader>> Run() {
    std::vector<TomlHeader> out;
    bool line_start = true;
    size_t line_begin = 0;
    while (i_ < t_.size()) {
      char c = t_[i_];
      if (c == '\n') {
        ++i_;
        line_start = true;
        line_begin = i_;
        continue;
      }
      if (line_start) {
        line_start = false;
        while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t')) ++i_;
        if (depth_ == 0 && i_ < t_.size() && t_[i_] == '[') {
          auto h = Header(line_begin);
          if (!h) return h.error();
          out.push_back(std::move(*h));
        }
        continue;
      }
      if (c == '#') {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
      } else if (c == '"' || c == '\'') {
        if (auto st = SkipString(); !st) return st.error();
      } else {
        if (c == '[' || c == '{') ++depth_;
        if ((c == ']' || c == '}') && depth_ > 0) --depth_;
        ++i_;
      }
    }
    for (size_t k = 0; k < out.size(); ++k) {
      out[k].end = k + 1 < out.size() ? out[k + 1].begin : t_.size();
    }
    return out;
  }

 private:
  Error Err(const std::string& what) const {
    size_t line = 1 + static_cast<size_t>(std::count(t_.begin(), t_.begin() + i_, '\n'));
    return MakeError("line " + std::to_string(line) + ": " + what);
  }

  // At a quote: skips the whole string (basic, literal, or multi-line).
  Status SkipString() {
    const char q = t_[i_];
    const bool multi = t_.substr(i_, 3) == std::string(3, q);
    i_ += multi ? 3 : 1;
    while (i_ < t_.size()) {
      char c = t_[i_];
      if (c == '\\' && q == '"') {
        i_ += 2;
        continue;
      }
      if (!multi && c == '\n') return Err("unterminated string");
      if (c == q && (!multi || t_.substr(i_, 3) == std::string(3, q))) {
        i_ += multi ? 3 : 1;
        // A multi-line string may end with up to two more quotes.
        while (multi && i_ < t_.size() && t_[i_] == q) ++i_;
        return Ok{};
      }
      ++i_;
    }
    return Err("unterminated string");
  }

  Result<std::string> Key() {
    char c = t_[i_];
    std::string out;
    if (c == '"' || c == '\'') {
      ++i_;
      while (i_ < t_.size() && t_[i_] != c && t_[i_] != '\n') {
        if (c == '"' && t_[i_] == '\\' && i_ + 1 < t_.size()) ++i_;
        out += t_[i_++];
      }
      if (i_ >= t_.size() || t_[i_] != c) return Err("unterminated key in a table header");
      ++i_;
      return out;
    }
    while (i_ < t_.size() && IsBare(t_[i_])) out += t_[i_++];
    if (out.empty()) return Err("bad key in a table header");
    return out;
  }

  void Spaces() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t')) ++i_;
  }

  Result<TomlHeader> Header(size_t line_begin) {
    TomlHeader h;
    h.begin = line_begin;
    h.array = t_.substr(i_, 2) == "[[";
    i_ += h.array ? 2 : 1;
    for (;;) {
      Spaces();
      if (i_ >= t_.size()) return Err("unterminated table header");
      auto k = Key();
      if (!k) return k.error();
      h.path.push_back(std::move(*k));
      Spaces();
      if (i_ < t_.size() && t_[i_] == '.') {
        ++i_;
        continue;
      }
      std::string_view close = h.array ? "]]" : "]";
      if (t_.substr(i_, close.size()) != close) return Err("unterminated table header");
      i_ += close.size();
      break;
    }
    while (i_ < t_.size() && t_[i_] != '\n') ++i_;  // a comment, or nothing
    return h;
  }

  std::string_view t_;
  size_t i_ = 0;
  int depth_ = 0;
};

bool StartsWith(const std::vector<std::string>& path, const std::vector<std::string>& prefix) {
  return path.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

std::string_view LineAt(std::string_view text, size_t begin) {
  size_t nl = text.find('\n', begin);
  return text.substr(begin, nl == std::string_view::npos ? std::string_view::npos : nl - begin);
}

bool IsBlankOrComment(std::string_view line) {
  std::string_view t = Trim(line);
  return t.empty() || t.starts_with("#");
}

}  // namespace

Result<std::vector<TomlHeader>> ScanTomlHeaders(std::string_view text) {
  return Scanner(text).Run();
}

Result<std::string> CutSections(std::string_view text,
                                const std::vector<std::vector<std::string>>& prefixes,
                                std::string_view marker) {
  auto headers = Scanner(text).Run();
  if (!headers) return headers.error();
  std::vector<std::pair<size_t, size_t>> cuts;
  for (const auto& h : *headers) {
    bool hit = std::any_of(prefixes.begin(), prefixes.end(),
                           [&](const auto& p) { return StartsWith(h.path, p); });
    if (!hit) continue;
    size_t begin = h.begin;
    // The marker on the line above belongs to the section.
    if (begin >= 2) {
      size_t nl = text.rfind('\n', begin - 2);
      size_t prev = nl == std::string_view::npos ? 0 : nl + 1;
      if (Trim(LineAt(text, prev)) == marker) {
        begin = prev;
        // And the blank line above the marker.
        if (begin >= 1 && text[begin - 1] == '\n' && (begin == 1 || text[begin - 2] == '\n'))
          --begin;
      }
    }
    // Comments and blank lines at the end belong to what follows.
    size_t end = h.begin;
    for (size_t at = h.begin; at < h.end;) {
      size_t nl = text.find('\n', at);
      size_t next = nl == std::string_view::npos || nl + 1 > h.end ? h.end : nl + 1;
      if (at == h.begin || !IsBlankOrComment(text.substr(at, next - at))) end = next;
      at = next;
    }
    cuts.emplace_back(begin, end);
  }
  // Blank lines between two cut sections (the handler and its options) go too.
  std::vector<std::pair<size_t, size_t>> merged;
  for (const auto& c : cuts) {
    if (!merged.empty() &&
        Trim(text.substr(merged.back().second, c.first - merged.back().second)).empty()) {
      merged.back().second = c.second;
    } else {
      merged.push_back(c);
    }
  }
  cuts = std::move(merged);
  std::string out(text);
  for (auto it = cuts.rbegin(); it != cuts.rend(); ++it)
    out.erase(it->first, it->second - it->first);
  return out;
}

}  // namespace ocirlimit::node
