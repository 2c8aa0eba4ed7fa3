#include "adapters/oci/spec.h"

#include <algorithm>

#include "adapters/oci/json_guard.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

Result<uint64_t> LimitField(const Json& entry, const char* key, const std::string& where) {
  auto it = entry.find(key);
  if (it == entry.end()) return MakeError(where + "." + key + ": missing");
  if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<int64_t>() >= 0)) {
    return MakeError(where + "." + key + ": " + ValueText(*it) + " is not an unsigned integer");
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
  if (info == nullptr) return MakeError(where + ".type: unknown rlimit " + ValueText(*type));
  auto soft = LimitField(entry, "soft", where);
  if (!soft) return soft.error();
  auto hard = LimitField(entry, "hard", where);
  if (!hard) return hard.error();
  return Rlimit{info->resource, *soft, *hard};
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
  if (auto depth = CheckJsonDepth(text, what); !depth) return depth.error();
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return MakeError(what + ": not valid JSON");
  if (!j.is_object()) return MakeError(what + ": must be a JSON object");
  return j;
}

namespace {

// The object a key belongs to, as far as runc's rlimits go.
enum class Role { kSpec, kProcess, kRlimits, kEntry, kOther };

// The keys of a role that runc reads and we edit.
std::vector<std::string_view> Watched(Role role) {
  switch (role) {
    case Role::kSpec:
      return {"process"};
    case Role::kProcess:
      return {"rlimits"};
    case Role::kEntry:
      return {"type", "soft", "hard"};
    default:
      return {};
  }
}

const char* RoleName(Role role) {
  switch (role) {
    case Role::kSpec:
      return "the spec";
    case Role::kProcess:
      return "process";
    case Role::kEntry:
      return "process.rlimits[]";
    default:
      return "?";
  }
}

// Key as Go's encoding/json compares it: ASCII case folded, and the two
// non-ASCII runes that fold to ASCII letters ("ſ" U+017F to s, Kelvin sign
// U+212A to k) replaced.
std::string GoFold(std::string_view key) {
  std::string out;
  for (size_t i = 0; i < key.size(); ++i) {
    if (key.substr(i).starts_with("\xc5\xbf")) {
      out += 's';
      i += 1;
    } else if (key.substr(i).starts_with("\xe2\x84\xaa")) {
      out += 'k';
      i += 2;
    } else {
      char c = key[i];
      out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
  }
  return out;
}

struct Frame {
  Role role;
  std::string key;                // the last key seen, in an object
  std::vector<std::string> seen;  // watched keys seen, folded
};

}  // namespace

Result<Json> ParseJsonObjectForRunc(std::string_view text, const std::string& what,
                                    RuncDocument root) {
  if (auto depth = CheckJsonDepth(text, what); !depth) return depth.error();
  std::vector<Frame> stack;
  std::string error;
  auto child_role = [&]() {
    if (stack.empty()) return root == RuncDocument::kSpec ? Role::kSpec : Role::kProcess;
    const Frame& parent = stack.back();
    if (parent.role == Role::kSpec && parent.key == "process") return Role::kProcess;
    if (parent.role == Role::kProcess && parent.key == "rlimits") return Role::kRlimits;
    if (parent.role == Role::kRlimits) return Role::kEntry;
    return Role::kOther;
  };
  Json::parser_callback_t check = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start: {
        Role role = child_role();
        // An array where an object belongs (or the reverse) is not ours to
        // judge here: ProcessRlimits reports it.
        const bool array = event == Json::parse_event_t::array_start;
        if ((role == Role::kRlimits) != array) role = Role::kOther;
        stack.push_back({role, "", {}});
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!stack.empty()) stack.pop_back();
        break;
      case Json::parse_event_t::key: {
        if (stack.empty() || !error.empty()) break;
        Frame& f = stack.back();
        f.key = parsed.get<std::string>();
        const std::string folded = GoFold(f.key);
        for (std::string_view w : Watched(f.role)) {
          if (folded != w) continue;
          if (f.key != w) {
            error = "key " + Quote(f.key) + " in " + RoleName(f.role) +
                    " differs only by case from " + Quote(w) + ": runc would read it as " +
                    Quote(w) + " and we would not";
          } else if (std::find(f.seen.begin(), f.seen.end(), folded) != f.seen.end()) {
            error = "key " + Quote(w) + " appears twice in " + RoleName(f.role) +
                    ": runc would read the last and we might edit another";
          }
          f.seen.push_back(folded);
        }
        break;
      }
      default:
        break;
    }
    return true;
  };
  Json j = Json::parse(text, check, /*allow_exceptions=*/false);
  if (j.is_discarded()) return MakeError(what + ": not valid JSON");
  if (!j.is_object()) return MakeError(what + ": must be a JSON object");
  if (!error.empty()) return MakeError(what + ": " + error);
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

Result<std::vector<Rlimit>> SpecRlimitsOnly(std::string_view text, const std::string& what) {
  // nlohmann still checks the whole text, but builds only process.rlimits:
  // a callback that drops every other member saves the DOM of env, mounts and
  // annotations, which was most of the hook's work (docs/performance.md).
  Json::parser_callback_t keep = [](int depth, Json::parse_event_t event, Json& parsed) {
    if (event != Json::parse_event_t::key) return true;
    if (depth == 1) return parsed == "process";
    if (depth == 2) return parsed == "rlimits";
    return true;
  };
  if (auto depth = CheckJsonDepth(text, what); !depth) return depth.error();
  Json spec = Json::parse(text, keep, /*allow_exceptions=*/false);
  if (spec.is_discarded()) return MakeError(what + ": not valid JSON");
  if (!spec.is_object()) return MakeError(what + ": must be a JSON object");
  return SpecRlimits(spec);
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
