#include "core/policy_digest.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "formats/rlimit.h"
#include "formats/sha256.h"

namespace ocirlimit {
namespace {

// Every string is length-prefixed, so no value can pass for a field boundary.
void Put(std::string& out, std::string_view field, std::string_view value) {
  out.append(field).append("=").append(std::to_string(value.size())).append(":");
  out.append(value).append("\n");
}

void PutLimits(std::string& out, std::string_view field, const std::vector<Rlimit>& limits) {
  Put(out, field, std::to_string(limits.size()));
  for (const Rlimit& r : limits) Put(out, "limit", FormatRlimit(r));
}

void PutList(std::string& out, std::string_view field, const std::vector<std::string>& items) {
  Put(out, field, std::to_string(items.size()));
  for (const std::string& s : items) Put(out, "item", s);
}

void PutPairs(std::string& out, std::string_view field,
              const std::vector<std::pair<std::string, std::string>>& pairs) {
  Put(out, field, std::to_string(pairs.size()));
  for (const auto& [k, v] : pairs) {
    Put(out, "key", k);
    Put(out, "value", v);
  }
}

void PutRule(std::string& out, const Rule& rule) {
  Put(out, "rule", rule.name);
  PutLimits(out, "rlimits", rule.rlimits);
  const RuleMatch& m = rule.match;
  Put(out, "always", m.always ? "1" : "0");
  PutPairs(out, "annotations", m.annotations);
  PutList(out, "env", m.env);
  PutPairs(out, "env_values", m.env_values);
  PutList(out, "devices", m.devices);
  PutList(out, "cdi", m.cdi);
  PutList(out, "namespaces", m.namespaces);
  PutList(out, "pods", m.pods);
}

}  // namespace

std::string PolicyDigest(const Config& config) {
  std::string out = "oci-rlimit policy 1\n";
  PutLimits(out, "rlimits", config.rlimits);
  Put(out, "rules", std::to_string(config.rules.size()));
  for (const Rule& rule : config.rules) PutRule(out, rule);
  const Requests& req = config.requests;
  Put(out, "requests.enabled", req.enabled ? "1" : "0");
  PutLimits(out, "requests.ceilings", req.ceilings);
  Put(out, "requests.over_ceiling", req.over_ceiling == OverCeiling::kClamp ? "clamp" : "reject");
  std::vector<std::string> sources;
  for (RequestSource s : req.sources) sources.emplace_back(RequestSourceName(s));
  PutList(out, "requests.sources", sources);
  Put(out, "on_error", config.on_error == OnError::kFail ? "fail" : "warn");
  Put(out, "rootless", config.rootless == Rootless::kDegrade ? "degrade" : "fail");
  PutList(out, "cdi.injectors", config.cdi_injectors);
  return Sha256Hex(out);
}

}  // namespace ocirlimit
