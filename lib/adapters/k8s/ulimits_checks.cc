// KEP-5758's securityContext.ulimits (alpha, behind the API server's
// ContainerUlimits gate): a list of {name, soft, hard}, -1 for unlimited,
// which the runtime writes into the spec's process.rlimits after its own
// nofile entry, where the node's "spec" source judges, per ceiling type in
// the order of first appearance, the last entry of that type, in the node's
// words ("process.rlimits: ..."). Every read is behind has(), so on an API
// server without the field nothing is judged. A list too long to judge
// within CEL's cost budget is never admitted silently (kMaxUlimits).
#include "adapters/k8s/cel_rlimits.h"
#include "adapters/k8s/policy_checks.h"
#include "formats/text.h"

namespace ocirlimit::k8s {
namespace {

constexpr std::string_view kMax = "18446744073709551615u";
// At most this many entries in one container, and this many containers
// with entries, are judged: each container costs CEL about kMaxUlimits^2
// steps. Every real list is far shorter (16 types exist).
constexpr size_t kMaxUlimits = 64;
constexpr size_t kMaxUlimitsContainers = 32;

// A ulimits value as the runtime's uint64 (-1: unlimited).
std::string Value(std::string_view v) { return Cat("(", v, " < 0 ? ", kMax, " : uint(", v, "))"); }

// [0, 1, ..., kMaxUlimits - 1]: CEL here has no indexed iteration.
std::string Indices() {
  std::string out;
  for (size_t i = 0; i < kMaxUlimits; ++i) out += Cat(i == 0 ? "" : ", ", std::to_string(i));
  return "[" + out + "]";
}

// Of container `c`: [type, soft, hard, container] of each ceiling type it
// names, in the node's order (nofile, which the runtime writes first, then
// by first appearance), the last entry of that type, when over its ceiling.
std::string OverEntries() {
  const std::string u = "c.securityContext.ulimits";
  const std::string firsts =
      Cat("variables.ulimitsIdx.filter(i, i < size(", u, ") && ", u,
          "[i].name in variables.ceilings && !variables.ulimitsIdx.exists(j, j < i && ", u,
          "[j].name == ", u, "[i].name))");
  const std::string ordered = Cat(firsts, ".filter(i, ", u, "[i].name == 'nofile') + ", firsts,
                                  ".filter(i, ", u, "[i].name != 'nofile')");
  const std::string last = "s[size(s) - 1]";
  return Cat("(", ordered, ").map(i, ", u, ".filter(v, v.name == ", u,
             "[i].name)).map(s, [dyn(s[0].name), dyn(", Value(Cat(last, ".soft")), "), dyn(",
             Value(Cat(last, ".hard")),
             "), dyn(c.name)]).filter(l, l[1] > variables.ceilings[l[0]][0] || l[2] > "
             "variables.ceilings[l[0]][1])");
}

// The node's words for over entry `e` (after 'process.rlimits: ').
std::string Detail(const Config& cfg, std::string_view e) {
  const std::string head =
      Cat(e, "[0] + '=' + ", CelLimitText(Cat(e, "[1]")), " + ':' + ", CelLimitText(Cat(e, "[2]")),
          " + ' is over the ceiling ' + variables.ceilingTexts[", e, "[0]]");
  if (cfg.requests.over_ceiling == OverCeiling::kReject) {
    return head + " + ' (over-ceiling = \"reject\")'";
  }
  const std::string c = Cat("variables.ceilings[", e, "[0]]");
  const auto lesser = [](const std::string& a, const std::string& b) {
    return Cat("(", a, " < ", b, " ? ", a, " : ", b, ")");
  };
  return Cat(head, " + '; clamped to ' + ", e, "[0] + '=' + ",
             CelLimitText(lesser(Cat(e, "[1]"), Cat(c, "[0]"))), " + ':' + ",
             CelLimitText(lesser(Cat(e, "[2]"), Cat(c, "[1]"))));
}

std::string TooMany(bool refused) {
  return CelString(Cat(
      "securityContext.ulimits: more than ", std::to_string(kMaxUlimits),
      " entries in a container, or entries in more than ", std::to_string(kMaxUlimitsContainers),
      " containers: too many to judge within the API server's CEL cost budget; ",
      refused ? "refused here, as the node may refuse them (oci-rlimit explain judges them)"
              : "left to the node"));
}

}  // namespace

std::vector<Variable> UlimitsVariables(const Config& cfg) {
  const bool reject = cfg.requests.over_ceiling == OverCeiling::kReject;
  const std::string e = "variables.ulimitsFirst[0]";
  const std::string head =
      MessageHead(cfg, reject, Cat("'container \"' + ", e, "[3] + '\": '"), "'process.rlimits'");
  return {
      {"ulimitsIdx", Indices()},
      {"ulimitsOwners",
       "variables.containers.filter(c, has(c.securityContext) && has(c.securityContext.ulimits) "
       "&& size(c.securityContext.ulimits) > 0)"},
      {"ulimitsJudgeable",
       Cat("size(variables.ulimitsOwners) <= ", std::to_string(kMaxUlimitsContainers),
           " && variables.ulimitsOwners.all(c, size(c.securityContext.ulimits) <= ",
           std::to_string(kMaxUlimits), ")")},
      {"ulimitsOver", Cat("variables.ulimitsJudgeable ? variables.ulimitsOwners.map(c, ",
                          OverEntries(), ").filter(o, size(o) > 0) : []")},
      {"ulimitsFirst", "size(variables.ulimitsOver) > 0 ? variables.ulimitsOver[0] : []"},
      {"ulimitsError",
       reject ? Cat("!variables.ulimitsJudgeable ? ", TooMany(true),
                    " : size(variables.ulimitsFirst) > 0 ? ", head, Detail(cfg, e), " : ''")
              : "''"},
      {"ulimitsNotes",
       reject ? "[]"
              : Cat("!variables.ulimitsJudgeable ? [", TooMany(false),
                    "] : variables.ulimitsFirst.map(e, ",
                    MessageHead(cfg, false, "'container \"' + e[3] + '\": '", "'process.rlimits'"),
                    Detail(cfg, "e"), ")")},
  };
}

}  // namespace ocirlimit::k8s
