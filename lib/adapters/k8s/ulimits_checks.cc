// KEP-5758's securityContext.ulimits (alpha, behind the API server's
// ContainerUlimits gate): a list of {name, soft, hard}, -1 for unlimited,
// which the runtime writes into the spec's process.rlimits, where the node's
// "spec" source judges the last entry of each ceiling type, in the node's
// words ("process.rlimits: ..."). Every read is behind has(), so on an API
// server without the field the check passes.
#include "adapters/k8s/cel_rlimits.h"
#include "adapters/k8s/policy_checks.h"
#include "formats/text.h"

namespace ocirlimit::k8s {
namespace {

constexpr std::string_view kMax = "18446744073709551615u";

// The container's entries of type `name`.
std::string Entries(std::string_view c, std::string_view name) {
  return Cat(c, ".securityContext.ulimits.filter(u, u.name == ", CelString(name), ")");
}

// A ulimits value as the runtime's uint64 (-1: unlimited).
std::string Value(std::string_view v) { return Cat("(", v, " < 0 ? ", kMax, " : uint(", v, "))"); }

// The check's expression for one container `c` and ceiling `ceiling`.
std::string Fits(std::string_view c, const Rlimit& ceiling) {
  const std::string list = Entries(c, ceiling.info().name);
  const std::string last = Cat(list, "[size(", list, ") - 1]");
  return Cat("!has(", c, ".securityContext) || !has(", c, ".securityContext.ulimits) || size(",
             list, ") == 0 || ", Value(Cat(last, ".soft")), " <= ", std::to_string(ceiling.soft),
             "u && ", Value(Cat(last, ".hard")), " <= ", std::to_string(ceiling.hard), "u");
}

Check ForType(const Config& cfg, const Rlimit& ceiling) {
  const bool reject = cfg.requests.over_ceiling == OverCeiling::kReject;
  const std::string name(ceiling.info().name);
  const std::string c = Cat("variables.containers.filter(c, !(", Fits("c", ceiling), "))[0]");
  const std::string list = Entries(c, name);
  const std::string last = Cat(list, "[size(", list, ") - 1]");
  const std::string soft = Value(Cat(last, ".soft"));
  const std::string hard = Value(Cat(last, ".hard"));
  std::string detail = Cat("'", name, "=' + ", CelLimitText(soft), " + ':' + ", CelLimitText(hard),
                           " + ' is over the ceiling ", FormatRlimit(ceiling), "");
  if (reject) {
    detail += " (over-ceiling = \"reject\")'";
  } else {
    const std::string cs = Cat(std::to_string(ceiling.soft), "u");
    const std::string ch = Cat(std::to_string(ceiling.hard), "u");
    detail += Cat("; clamped to ", name, "=' + ",
                  CelLimitText(Cat("(", soft, " < ", cs, " ? ", soft, " : ", cs, ")")), " + ':' + ",
                  CelLimitText(Cat("(", hard, " < ", ch, " ? ", hard, " : ", ch, ")")));
  }
  const bool refused = reject && cfg.on_error == OnError::kFail;
  return {Cat("securityContext.ulimits: ", name, " over its ceiling", reject ? "" : " (clamped)"),
          refused ? NodeOutcome::kRefused : NodeOutcome::kStartedWithWarning,
          Cat("variables.containers.all(c, ", Fits("c", ceiling), ")"),
          Cat("securityContext.ulimits asks past the ceiling ", FormatRlimit(ceiling)),
          Cat("'container \"' + ", c, ".name + '\": process.rlimits: ' + ", detail)};
}

}  // namespace

std::vector<Check> UlimitsChecks(const Config& cfg) {
  std::vector<Check> out;
  for (const Rlimit& ceiling : cfg.requests.ceilings) out.push_back(ForType(cfg, ceiling));
  return out;
}

}  // namespace ocirlimit::k8s
