#include "adapters/oci/state.h"

#include <nlohmann/json.hpp>

#include "adapters/oci/json_guard.h"
#include "adapters/oci/spec.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

Result<std::string> OptionalString(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::string();
  if (!it->is_string()) return MakeError(std::string("state.") + key + ": must be a string");
  return it->get<std::string>();
}

}  // namespace

bool IsApplyStage(std::string_view stage) {
  return stage == "createRuntime" || stage == "prestart";
}

// Status and annotation keys come from the container's creator: JsonQuote
// keeps a newline in them from splitting the one-line error.
Result<State> ParseState(std::string_view text) {
  if (auto depth = CheckJsonDepth(text, "state"); !depth) return depth.error();
  if (text.size() > kMaxStateBytes) {
    return MakeError("state: larger than " + std::to_string(kMaxStateBytes) + " bytes");
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return MakeError("state: not valid JSON");
  if (!j.is_object()) return MakeError("state: must be a JSON object");

  State s;
  for (auto [field, out] : {std::pair{"ociVersion", &s.oci_version}, std::pair{"id", &s.id},
                            std::pair{"status", &s.status}, std::pair{"bundle", &s.bundle}}) {
    auto v = OptionalString(j, field);
    if (!v) return v.error();
    *out = *v;
  }
  // No string reaches a path or a message with a NUL cut short; the id is
  // also quoted into one-line errors and logs, so it must be one line.
  for (auto [field, value] : {std::pair{"ociVersion", &s.oci_version}, std::pair{"id", &s.id},
                              std::pair{"status", &s.status}, std::pair{"bundle", &s.bundle}}) {
    if (value->find('\0') != std::string::npos) {
      return MakeError(std::string("state.") + field + ": " + JsonQuoteCut(*value) +
                       " contains a NUL character");
    }
  }
  for (unsigned char c : s.id) {
    if (c < 0x20 || c == 0x7f) {
      return MakeError("state.id: " + JsonQuoteCut(s.id) + " contains a control character");
    }
  }
  if (s.id.empty()) return MakeError("state.id: missing or empty");
  if (s.status.empty()) return MakeError("state.status: missing or empty");

  auto pid = j.find("pid");
  if (pid == j.end()) return MakeError("state.pid: missing");
  if (!pid->is_number_integer()) {
    return MakeError("state.pid: " + ValueText(*pid) + " is not an integer");
  }
  // Through int64_t, unsigned values past INT64_MAX would wrap to negatives.
  const bool valid = pid->is_number_unsigned()
                         ? pid->get<uint64_t>() >= 1 && pid->get<uint64_t>() <= INT32_MAX
                         : pid->get<int64_t>() >= 1 && pid->get<int64_t>() <= INT32_MAX;
  if (!valid) {
    return MakeError("state.pid: " + ValueText(*pid) + " is not a valid pid");
  }
  s.pid = static_cast<pid_t>(pid->get<int64_t>());

  if (auto a = j.find("annotations"); a != j.end() && !a->is_null()) {
    if (!a->is_object()) return MakeError("state.annotations: must be an object");
    for (const auto& [k, v] : a->items()) {
      if (!v.is_string()) {
        return MakeError("state.annotations[" + JsonQuoteCut(k) + "]: must be a string");
      }
      s.annotations[k] = v.get<std::string>();
    }
  }
  return s;
}

Result<std::string> BundleFromRuntimeState(std::string_view text) {
  if (text.size() > kMaxStateBytes) {
    return MakeError("runtime state: larger than " + std::to_string(kMaxStateBytes) + " bytes");
  }
  if (auto depth = CheckJsonDepth(text, "runtime state"); !depth) return depth.error();
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return MakeError("runtime state: not a JSON object");
  auto b = j.find("bundle");
  if (b == j.end() || !b->is_string() || b->get<std::string>().empty()) {
    return MakeError("runtime state: bundle: missing or not a string");
  }
  std::string bundle = b->get<std::string>();
  if (bundle.find('\0') != std::string::npos || bundle[0] != '/') {
    return MakeError("runtime state: bundle " + JsonQuote(bundle) + " is not an absolute path");
  }
  return bundle;
}

Status CheckStateTiming(const State& state, std::string_view program) {
  if (state.status == "creating" || state.status == "created") return Ok{};
  if (state.status == "running" || state.status == "stopped") {
    return MakeError("state.status: " + JsonQuoteCut(state.status) +
                     " is too late: rlimits must be set before user code starts; run " +
                     std::string(program) + " as a createRuntime or prestart hook");
  }
  return MakeError("state.status: " + JsonQuoteCut(state.status) + " is not a known OCI status");
}

}  // namespace ocirlimit
