#include "formats/ulimit_yaml.h"

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "formats/text.h"

namespace ocirlimit {
namespace {

// One list item's fields as written, before they are checked.
struct Entry {
  std::optional<std::string> type = {}, soft = {}, hard = {};
  std::string at;  // "line 3" or "byte 17": where the item starts
};

// YAML 1.1's null (the NRI sample's YAML library): a whole value of nothing.
bool IsNull(std::string_view v) {
  return v.empty() || v == "~" || v == "null" || v == "Null" || v == "NULL";
}

// A plain or quoted scalar on one line; nothing YAML would read as a
// structure, an alias, a tag or a block scalar.
Result<std::string> Scalar(std::string_view v) {
  if (v.empty()) return MakeError("empty value");
  if (v.find_first_of("\r\n") != std::string_view::npos) {
    return MakeError(Quote(v) + ": spans lines (write each key and value on one line)");
  }
  const char q = v.front();
  if (q == '"' || q == '\'') {
    if (v.size() < 2 || v.back() != q) return MakeError(Quote(v) + ": unterminated quote");
    std::string_view inner = v.substr(1, v.size() - 2);
    if (inner.find(q) != std::string_view::npos || inner.find('\\') != std::string_view::npos) {
      return MakeError(Quote(v) + ": escapes are not read");
    }
    return std::string(inner);
  }
  if (std::string_view("[]{}&*!|>%@`,#").find(q) != std::string_view::npos) {
    return MakeError(Quote(v) + ": not a plain value");
  }
  return std::string(v);
}

// Keys in any case, as the sample's decoder (Go's encoding/json, after YAML
// becomes JSON) matches them: "Type", "SOFT". Messages name the field.
Status SetField(Entry& e, std::string_view raw_key, std::string_view raw_value) {
  auto key = Scalar(Trim(raw_key));
  if (!key) return key.error().Wrap("key");
  const std::string name = Lower(*key);
  std::optional<std::string>* field = name == "type"   ? &e.type
                                      : name == "soft" ? &e.soft
                                      : name == "hard" ? &e.hard
                                                       : nullptr;
  if (field == nullptr) return MakeError("unknown key " + Quote(*key) + " (type, soft, hard)");
  auto value = Scalar(Trim(raw_value));
  if (!value) return value.error().Wrap(name);
  if (field->has_value()) return MakeError(name + " given twice");
  *field = std::move(*value);
  return Ok{};
}

// YAML 1.1 reads an integer with a leading zero as octal: the sample would
// set 0777 as 511.
std::string LeadingZero(std::string_view key, std::string_view v) {
  uint64_t octal = 0;  // at most 20 digits (Value): no overflow
  bool fits = true;
  for (char c : v) {
    fits = fits && c <= '7';
    octal = octal * 8 + static_cast<uint64_t>(c - '0');
  }
  return Cat(key, " ", Quote(v),
             " has a leading zero, which YAML 1.1 (the NRI sample) reads as octal",
             fits ? ": " + std::to_string(octal) + " there" : std::string(),
             "; write the decimal number without leading zeros");
}

Result<uint64_t> Value(std::string_view key, std::string_view v) {
  if (IsNull(v)) {
    return MakeError(
        Cat(key, " ", Quote(v), " is null: the NRI sample reads it as 0; write the number"));
  }
  if (!v.empty() && v[0] == '-') return MakeError(Cat(key, " ", Quote(v), " is negative"));
  if (v.empty() || v.size() > 20 || v.find_first_not_of("0123456789") != std::string_view::npos) {
    return MakeError(Cat(key, " ", Quote(v), " is not a decimal integer"));
  }
  if (v.size() > 1 && v[0] == '0') return MakeError(LeadingZero(key, v));
  uint64_t n = 0;
  for (char c : v) {
    const auto d = static_cast<uint64_t>(c - '0');
    if (n > (kRlimInfinity - d) / 10) {
      return MakeError(Cat(key, " ", Quote(v), " is over 18446744073709551615 (unlimited)"));
    }
    n = n * 10 + d;
  }
  return n;
}

Result<Rlimit> ToRlimit(const Entry& e) {
  if (!e.type) return MakeError("no type (needs type, soft and hard)");
  for (const auto& [field, name] : {std::pair{&e.soft, "soft"}, std::pair{&e.hard, "hard"}}) {
    if (!field->has_value()) {
      return MakeError(Cat("no ", name, ": the NRI sample reads a missing ", name, " as 0; write ",
                           name, ": 0 if that is meant"));
    }
  }
  const RlimitInfo* info = FindRlimit(*e.type);
  if (info == nullptr) return MakeError("type " + Quote(*e.type) + " is not a Linux rlimit");
  auto soft = Value("soft", *e.soft);
  if (!soft) return soft.error();
  auto hard = Value("hard", *e.hard);
  if (!hard) return hard.error();
  Rlimit r{info->resource, *soft, *hard};
  if (r.soft > r.hard) return MakeError(FormatRlimit(r) + ": soft is over hard");
  return r;
}

Result<std::vector<Rlimit>> Finish(const std::vector<Entry>& entries) {
  std::vector<Rlimit> out;
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string where = Cat("item ", std::to_string(i), " (", entries[i].at, ")");
    auto r = ToRlimit(entries[i]);
    if (!r) return r.error().Wrap(where);
    for (const auto& o : out) {
      if (o.resource == r->resource) {
        return MakeError(Cat(where, ": type ", r->info().name, " given twice"));
      }
    }
    out.push_back(*r);
  }
  return out;
}

// A '#' at the start or after a blank, outside quotes, starts a comment.
std::string_view StripComment(std::string_view line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || line[i - 1] == ' ')) {
      return line.substr(0, i);
    }
  }
  return line;
}

// The pair on one line of an item: KEY: VALUE.
Status Pair(Entry& e, std::string_view rest) {
  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos || (colon + 1 < rest.size() && rest[colon + 1] != ' ')) {
    return MakeError("expected KEY: VALUE");
  }
  return SetField(e, rest.substr(0, colon), rest.substr(colon + 1));
}

Result<Entry> FlowItem(std::string_view rest, const std::string& at);

Result<std::vector<Entry>> ParseBlock(std::string_view text) {
  std::vector<Entry> out;
  std::optional<size_t> item_indent;
  size_t key_indent = std::string_view::npos;  // npos: no field may follow
  size_t n = 0;
  for (size_t start = 0; start < text.size(); ++n) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = StripComment(text.substr(start, end - start));
    start = end + 1;
    const std::string at = "line " + std::to_string(n + 1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
    if (line.empty() || (n == 0 && line == "---")) continue;
    if (line.find('\t') != std::string_view::npos) return MakeError(at + ": a tab");
    const size_t indent = line.find_first_not_of(' ');
    std::string_view rest = line.substr(indent);
    if (rest == "-" || rest.starts_with("- ")) {
      if (item_indent && indent != *item_indent) return MakeError(at + ": items must line up");
      const size_t k = rest.find_first_not_of(' ', 1);
      if (k == std::string_view::npos) return MakeError(at + ": an item starts with a field");
      item_indent = indent;
      rest = rest.substr(k);
      if (rest.starts_with('{')) {  // - {type: nofile, soft: 1024, hard: 4096}
        auto e = FlowItem(rest, at);
        if (!e) return e.error().Wrap(at);
        out.push_back(std::move(*e));
        key_indent = std::string_view::npos;
        continue;
      }
      key_indent = indent + k;
      out.push_back(Entry{.at = at});
    } else if (indent != key_indent) {
      return MakeError(at + ": expected \"- type: ...\" or a field under it");
    }
    if (auto st = Pair(out.back(), rest); !st) return st.error().Wrap(at);
  }
  return out;
}

// Flow style: [{KEY: VALUE, ...}, ...], plain or quoted scalars.
class Flow {
 public:
  explicit Flow(std::string_view s) : s_(s) {}

  Result<std::vector<Entry>> List() {
    std::vector<Entry> out;
    if (!Eat('[')) return Err("expected [");
    if (!Eat(']')) {
      do {
        auto e = Map();
        if (!e) return e.error();
        out.push_back(std::move(*e));
      } while (Eat(','));
      if (!Eat(']')) return Err("expected , or ]");
    }
    Skip();
    if (i_ != s_.size()) return Err("text after ]");
    return out;
  }

  // One map that is the whole text (an item of a block list).
  Result<Entry> OnlyMap() {
    auto e = Map();
    if (!e) return e.error();
    Skip();
    if (i_ != s_.size()) return Err("text after } (a flow map closes on its line)");
    return e;
  }

 private:
  Result<Entry> Map() {
    Entry e{.at = "byte " + std::to_string(i_)};
    if (!Eat('{')) return Err("expected {");
    if (Eat('}')) return e;
    do {
      std::string_view key = Token();
      if (!Eat(':')) return Err("expected :");
      if (auto st = SetField(e, key, Token()); !st) return st.error().Wrap(e.at);
    } while (Eat(','));
    if (!Eat('}')) return Err("expected , or }");
    return e;
  }

  std::string_view Token() {
    Skip();
    const size_t start = i_;
    if (i_ < s_.size() && (s_[i_] == '"' || s_[i_] == '\'')) {
      const size_t close = s_.find(s_[i_], i_ + 1);
      i_ = close == std::string_view::npos ? s_.size() : close + 1;
    } else {
      while (i_ < s_.size() && std::string_view(",:{}[]").find(s_[i_]) == std::string_view::npos) {
        ++i_;
      }
    }
    return Trim(s_.substr(start, i_ - start));
  }

  void Skip() {
    while (i_ < s_.size() && std::string_view(" \t\r\n").find(s_[i_]) != std::string_view::npos) {
      ++i_;
    }
  }
  bool Eat(char c) {
    Skip();
    if (i_ >= s_.size() || s_[i_] != c) return false;
    ++i_;
    return true;
  }
  Error Err(const std::string& what) const {
    return MakeError("byte " + std::to_string(i_) + ": " + what);
  }

  std::string_view s_;
  size_t i_ = 0;
};

Result<Entry> FlowItem(std::string_view rest, const std::string& at) {
  auto e = Flow(rest).OnlyMap();
  if (e) e->at = at;
  return e;
}

}  // namespace

Result<std::vector<Rlimit>> ParseUlimitYaml(std::string_view text) {
  if (text.size() > kMaxUlimitYamlBytes) {
    return MakeError(Cat("longer than ", std::to_string(kMaxUlimitYamlBytes), " bytes (",
                         std::to_string(text.size()), ")"));
  }
  if (text.find('\0') != std::string_view::npos) return MakeError("a NUL byte");
  const std::string_view t = Trim(text);
  if (IsNull(t)) return std::vector<Rlimit>{};  // null and ~ ask for nothing, as in the sample
  if (t.starts_with('[')) {
    auto entries = Flow(t).List();
    if (!entries) return entries.error();
    return Finish(*entries);
  }
  auto entries = ParseBlock(text);
  if (!entries) return entries.error();
  return Finish(*entries);
}

}  // namespace ocirlimit
