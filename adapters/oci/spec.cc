#include "adapters/oci/spec.h"

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
