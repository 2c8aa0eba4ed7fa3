#include "spec.h"

#include <algorithm>

namespace ocirlimit {
namespace {

Result<uint64_t> LimitField(const Json& entry, const char* key, const std::string& where) {
  auto it = entry.find(key);
  if (it == entry.end()) return MakeError(where + "." + key + ": missing");
  if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<int64_t>() >= 0)) {
    return MakeError(where + "." + key + ": " + it->dump() + " is not an unsigned integer");
  }
  return it->get<uint64_t>();
}

Result<Rlimit> EntryRlimit(const Json& entry, const std::string& where) {
  if (!entry.is_object()) return MakeError(where + ": must be an object");
  auto type = entry.find("type");
  if (type == entry.end() || !type->is_string()) {
    return MakeError(where + ".type: missing or not a string");
  }
  const RlimitInfo* info = FindRlimit(type->get<std::string>());
  if (info == nullptr) return MakeError(where + ".type: unknown rlimit " + type->dump());
  auto soft = LimitField(entry, "soft", where);
  if (!soft) return soft.error();
  auto hard = LimitField(entry, "hard", where);
  if (!hard) return hard.error();
  return Rlimit{info->resource, *soft, *hard};
}

// A validating JSON scanner that builds nothing: it moves pos over one value
// and says whether the text there is JSON (RFC 8259, UTF-8 checked as
// nlohmann's parser checks it). Containers are tracked on an explicit stack,
// so nesting depth costs heap, not C++ stack.
class JsonScan {
 public:
  explicit JsonScan(std::string_view text) : t_(text) {
    // nlohmann accepts, and skips, a UTF-8 byte order mark.
    if (t_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
  }

  size_t pos() const { return pos_; }
  void Seek(size_t pos) { pos_ = pos; }
  bool AtEnd() {
    Ws();
    return pos_ == t_.size();
  }
  char Peek() {
    Ws();
    return pos_ < t_.size() ? t_[pos_] : '\0';
  }

  // One value, with the whitespace before it but not after.
  bool Value() {
    std::string open;  // '{' and '[' of the containers we are in
    bool want_value = true;
    for (;;) {
      if (!want_value && open.empty()) return true;  // trailing whitespace is not ours
      const char c = Peek();
      if (want_value) {
        if (c == '{' || c == '[') {
          ++pos_;
          if (Peek() == (c == '{' ? '}' : ']')) {
            ++pos_;
            want_value = false;
            continue;
          }
          open.push_back(c);
          if (c == '{' && !Key(nullptr)) return false;
          continue;
        }
        if (!Scalar()) return false;
        want_value = false;
        continue;
      }
      ++pos_;
      if (c == ',') {
        if (open.back() == '{' && !Key(nullptr)) return false;
        want_value = true;
      } else if (c == (open.back() == '{' ? '}' : ']')) {
        open.pop_back();
      } else {
        return false;
      }
    }
  }

  // The members of the object at pos: the value of the last member named
  // `key` (as [begin, end)), and where a new member would go.
  struct Object {
    bool found = false;
    size_t begin = 0, end = 0;
    size_t insert_at = 0;  // after the last member's value, or after '{'
    bool empty = true;
  };
  bool ScanObject(std::string_view key, Object& out) {
    if (Peek() != '{') return false;
    out.insert_at = ++pos_;
    if (Peek() == '}') {
      ++pos_;
      return true;
    }
    for (std::string name;;) {
      if (!Key(&name)) return false;
      Peek();
      const size_t begin = pos_;
      if (!Value()) return false;
      if (name == key) out = {true, begin, pos_, pos_, false};
      out.insert_at = pos_;
      out.empty = false;
      const char c = Peek();
      ++pos_;
      if (c == '}') return true;
      if (c != ',') return false;
    }
  }

 private:
  void Ws() {
    while (pos_ < t_.size() &&
           (t_[pos_] == ' ' || t_[pos_] == '\n' || t_[pos_] == '\r' || t_[pos_] == '\t')) {
      ++pos_;
    }
  }

  // A member name and its colon; the name decoded into *name if asked.
  bool Key(std::string* name) {
    if (Peek() != '"') return false;
    const size_t begin = pos_;
    bool escaped = false;
    if (!String(escaped)) return false;
    if (name != nullptr) {
      const std::string_view raw = t_.substr(begin, pos_ - begin);
      if (escaped) {
        *name = Json::parse(raw, nullptr, /*allow_exceptions=*/false).get<std::string>();
      } else {
        name->assign(raw.substr(1, raw.size() - 2));
      }
    }
    if (Peek() != ':') return false;
    ++pos_;
    return true;
  }

  bool Scalar() {
    if (pos_ >= t_.size()) return false;
    switch (t_[pos_]) {
      case '"': {
        bool escaped = false;
        return String(escaped);
      }
      case 't':
        return Word("true");
      case 'f':
        return Word("false");
      case 'n':
        return Word("null");
      default:
        return Number();
    }
  }

  bool Word(std::string_view w) {
    if (t_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }

  bool Digits() {
    const size_t begin = pos_;
    while (pos_ < t_.size() && t_[pos_] >= '0' && t_[pos_] <= '9') ++pos_;
    return pos_ > begin;
  }

  bool Number() {
    if (pos_ < t_.size() && t_[pos_] == '-') ++pos_;
    if (pos_ < t_.size() && t_[pos_] == '0') {
      ++pos_;
    } else if (!Digits()) {
      return false;
    }
    if (pos_ < t_.size() && t_[pos_] == '.') {
      ++pos_;
      if (!Digits()) return false;
    }
    if (pos_ < t_.size() && (t_[pos_] == 'e' || t_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < t_.size() && (t_[pos_] == '+' || t_[pos_] == '-')) ++pos_;
      if (!Digits()) return false;
    }
    return true;
  }

  int Byte(size_t at) const { return at < t_.size() ? static_cast<unsigned char>(t_[at]) : -1; }

  // Four hex digits at pos, as a code unit, or -1.
  int Hex4() {
    int v = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      const int c = Byte(pos_);
      int d = -1;
      if (c >= '0' && c <= '9') d = c - '0';
      if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      if (d < 0) return -1;
      v = v * 16 + d;
    }
    return v;
  }

  // One UTF-8 sequence of 2 to 4 bytes at pos (RFC 3629: no overlong forms,
  // no surrogates, nothing above U+10FFFF).
  bool Utf8() {
    const int c = Byte(pos_);
    int more = 0, lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      more = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      more = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      more = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    ++pos_;
    for (int i = 0; i < more; ++i, ++pos_, lo = 0x80, hi = 0xBF) {
      const int b = Byte(pos_);
      if (b < lo || b > hi) return false;
    }
    return true;
  }

  // A string at pos, quotes included; `escaped` tells whether it had a backslash.
  bool String(bool& escaped) {
    ++pos_;  // the opening quote
    for (;;) {
      const int c = Byte(pos_);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return false;  // a control character, or the end of the text
      if (c >= 0x80) {
        if (!Utf8()) return false;
        continue;
      }
      ++pos_;
      if (c != '\\') continue;
      escaped = true;
      const int e = Byte(pos_++);
      if (e == 'u') {
        const int u = Hex4();
        if (u < 0 || (u >= 0xDC00 && u <= 0xDFFF)) return false;
        if (u >= 0xD800 && u <= 0xDBFF) {
          if (!Word("\\u")) return false;
          const int low = Hex4();
          if (low < 0xDC00 || low > 0xDFFF) return false;
        }
      } else if (std::string_view("\"\\/bfnrt").find(static_cast<char>(e)) ==
                     std::string_view::npos ||
                 e < 0) {
        return false;
      }
    }
  }

  std::string_view t_;
  size_t pos_ = 0;
};

// Where process.rlimits is in a spec's text.
struct RlimitsSpot {
  JsonScan::Object spec;     // the top-level object; .found: a process member
  bool process_null = true;  // process absent or null
  JsonScan::Object process;  // its members; .found: an rlimits member
};

Result<RlimitsSpot> FindRlimits(std::string_view text) {
  JsonScan scan(text);
  RlimitsSpot spot;
  if (scan.Peek() != '{') {
    if (scan.Value() && scan.AtEnd()) return MakeError("must be a JSON object");
    return MakeError("not valid JSON");
  }
  if (!scan.ScanObject("process", spot.spec) || !scan.AtEnd()) return MakeError("not valid JSON");
  if (!spot.spec.found) return spot;
  scan.Seek(spot.spec.begin);
  if (scan.Peek() == 'n') return spot;  // null, the only value starting with n
  spot.process_null = false;
  if (scan.Peek() != '{') return MakeError("process: must be an object");
  scan.ScanObject("rlimits", spot.process);  // valid: scanned above
  return spot;
}

// {"rlimits": VALUE} with the value parsed from the text, or {}.
Json ProcessWithRlimits(std::string_view text, const RlimitsSpot& spot) {
  Json process = Json::object();
  if (spot.process.found) {
    process["rlimits"] = Json::parse(
        text.substr(spot.process.begin, spot.process.end - spot.process.begin), nullptr, false);
  }
  return process;
}

Json ToEntry(const Rlimit& r) {
  Json e = Json::object();
  e["type"] = std::string(r.info().spec_type);
  e["hard"] = r.hard;
  e["soft"] = r.soft;
  return e;
}

}  // namespace

Result<Json> ParseJsonObject(std::string_view text, const std::string& what) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return MakeError(what + ": not valid JSON");
  if (!j.is_object()) return MakeError(what + ": must be a JSON object");
  return j;
}

Result<std::vector<Rlimit>> ProcessRlimits(const Json& process, const std::string& where) {
  std::vector<Rlimit> out;
  auto it = process.find("rlimits");
  if (it == process.end() || it->is_null()) return out;
  if (!it->is_array()) return MakeError(where + ".rlimits: must be an array");
  for (size_t i = 0; i < it->size(); ++i) {
    auto r = EntryRlimit((*it)[i], where + ".rlimits[" + std::to_string(i) + "]");
    if (!r) return r.error();
    out.push_back(*r);
  }
  return out;
}

Result<std::vector<Rlimit>> SpecRlimits(const Json& spec) {
  auto p = spec.find("process");
  if (p == spec.end() || p->is_null()) return std::vector<Rlimit>{};
  if (!p->is_object()) return MakeError("process: must be an object");
  return ProcessRlimits(*p, "process");
}

std::vector<Conflict> FindConflicts(const std::vector<Rlimit>& configured,
                                    const std::vector<Rlimit>& spec) {
  std::vector<Conflict> out;
  for (const auto& c : configured) {
    // Runtimes apply spec entries in order, so of duplicates the last sticks.
    auto it = std::find_if(spec.rbegin(), spec.rend(),
                           [&](const Rlimit& s) { return s.resource == c.resource; });
    if (it != spec.rend()) out.push_back({c, *it});
  }
  return out;
}

Status MergeProcessRlimits(Json& process, const std::vector<Rlimit>& limits,
                           const std::string& where) {
  if (!process.is_object()) return MakeError(where + ": must be an object");
  // Validate every existing entry first, so a bad spec is never half-edited.
  auto existing = ProcessRlimits(process, where);
  if (!existing) return existing.error();
  if (limits.empty()) return Ok{};
  Json& list = process["rlimits"];
  if (list.is_null()) list = Json::array();
  for (const auto& r : limits) {
    bool replaced = false;
    // Every duplicate, not just the first: runtimes apply them all in order.
    for (size_t i = 0; i < existing->size(); ++i) {
      if ((*existing)[i].resource != r.resource) continue;
      list[i]["soft"] = r.soft;
      list[i]["hard"] = r.hard;
      replaced = true;
    }
    if (!replaced) list.push_back(ToEntry(r));
  }
  return Ok{};
}

Result<std::vector<Rlimit>> SpecRlimitsText(std::string_view text) {
  auto spot = FindRlimits(text);
  if (!spot) return spot.error();
  return ProcessRlimits(ProcessWithRlimits(text, *spot), "process");
}

Result<std::string> MergeSpecRlimitsText(std::string_view text, const std::vector<Rlimit>& limits) {
  auto spot = FindRlimits(text);
  if (!spot) return spot.error();
  Json process = ProcessWithRlimits(text, *spot);
  if (auto merged = MergeProcessRlimits(process, limits, "process"); !merged) return merged.error();
  if (limits.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size() + 64 * limits.size() + 32);
  auto splice = [&](size_t begin, size_t end, const std::string& with) {
    out.append(text.substr(0, begin)).append(with).append(text.substr(end));
    return out;
  };
  const auto& s = spot->spec;
  const auto& p = spot->process;
  if (spot->process_null) {
    const std::string value = process.dump();
    if (s.found) return splice(s.begin, s.end, value);
    return splice(s.insert_at, s.insert_at,
                  (s.empty ? "" : ",") + std::string("\"process\":") + value);
  }
  const std::string value = process["rlimits"].dump();
  if (p.found) return splice(p.begin, p.end, value);
  return splice(p.insert_at, p.insert_at,
                (p.empty ? "" : ",") + std::string("\"rlimits\":") + value);
}

Status MergeSpecRlimits(Json& spec, const std::vector<Rlimit>& limits) {
  if (!spec.is_object()) return MakeError("spec: must be a JSON object");
  if (limits.empty()) {
    // Nothing to add, but a bad spec is still reported, and no process key appears.
    auto existing = SpecRlimits(spec);
    if (!existing) return existing.error();
    return Ok{};
  }
  Json& process = spec["process"];
  if (process.is_null()) process = Json::object();
  return MergeProcessRlimits(process, limits, "process");
}

}  // namespace ocirlimit
