#include "adapters/k8s/policy_checks.h"

#include "adapters/k8s/cel_rlimits.h"
#include "core/policy.h"
#include "formats/text.h"

namespace ocirlimit::k8s {
namespace {

constexpr std::string_view kReject = " (over-ceiling = \"reject\")";
// The node's words when on-error = "warn" leaves a bad request out
// (core/admission.cc, DecideFailed).
constexpr std::string_view kLeftOut =
    "on-error = \"warn\": the request is left out; the container gets the node's limits "
    "(top-level and rules) without it: ";

// "memlock=68719476736:unlimited" of a parsed entry [name, soft, hard, text].
std::string Formatted(std::string_view l) {
  return Cat(l, "[0] + '=' + ", CelLimitText(Cat(l, "[1]")), " + ':' + ",
             CelLimitText(Cat(l, "[2]")));
}

std::string Lesser(std::string_view a, std::string_view b) {
  return Cat("(", a, " < ", b, " ? ", a, " : ", b, ")");
}

}  // namespace

std::string MessageHead(const Config& cfg, bool left_out) {
  const bool warn = left_out && cfg.on_error == OnError::kWarn;
  return Cat("variables.container + ", warn ? CelString(kLeftOut) + " + " : "",
             "variables.annotation + ': ' + ");
}

NodeOutcome OutcomeOf(const Config& cfg, bool refused_under_fail) {
  return refused_under_fail && cfg.on_error == OnError::kFail ? NodeOutcome::kRefused
                                                              : NodeOutcome::kStartedWithWarning;
}

namespace {

Check Refused(const Config& cfg) {
  const std::string o = "variables.refused[0]";
  const std::string detail =
      Cat("(!(", o, "[0] in variables.ceilings) ? ", Formatted(o), " + ': ' + ", o,
          "[0] + ' is not in requests.ceilings", kReject, "' : ", Formatted(o),
          " + ' is over the ceiling ' + variables.ceilingTexts[", o, "[0]] + '", kReject, "')");
  return {"a type not in the ceilings, or a value over its ceiling (over-ceiling = \"reject\")",
          OutcomeOf(cfg, true), "size(variables.refused) == 0",
          Cat("annotation \"", kRequestAnnotation, "\" asks past requests.ceilings"),
          MessageHead(cfg, true) + detail};
}

Check Ignored(const Config& cfg) {
  const std::string o = "variables.ignored[0]";
  return {"a type not in the ceilings (over-ceiling = \"clamp\": ignored)",
          NodeOutcome::kStartedWithWarning, "size(variables.ignored) == 0",
          Cat("annotation \"", kRequestAnnotation, "\" asks for a type not in requests.ceilings"),
          MessageHead(cfg, false) +
              Cat(Formatted(o), " + ': ' + ", o, "[0] + ' is not in requests.ceilings; ignored'")};
}

Check Clamped(const Config& cfg) {
  const std::string o = "variables.clamped[0]";
  const std::string c = Cat("variables.ceilings[", o, "[0]]");
  const std::string detail =
      Cat(Formatted(o), " + ' is over the ceiling ' + variables.ceilingTexts[", o,
          "[0]] + '; clamped to ' + ", o, "[0] + '=' + ",
          CelLimitText(Lesser(Cat(o, "[1]"), Cat(c, "[0]"))), " + ':' + ",
          CelLimitText(Lesser(Cat(o, "[2]"), Cat(c, "[1]"))));
  return {"a value over its ceiling (over-ceiling = \"clamp\": clamped)",
          NodeOutcome::kStartedWithWarning, "size(variables.clamped) == 0",
          Cat("annotation \"", kRequestAnnotation, "\" asks past requests.ceilings"),
          MessageHead(cfg, false) + detail};
}

}  // namespace

std::vector<Variable> PolicyVariables(const Config& cfg) {
  const std::string key = CelString(kRequestAnnotation);
  const std::string over =
      "!(l[0] in variables.ceilings) || l[1] > variables.ceilings[l[0]][0] || l[2] > "
      "variables.ceilings[l[0]][1]";
  std::vector<Variable> out = {
      {"tmpl",
       "object.kind == 'Pod' ? object : object.kind == 'CronJob' ? "
       "object.spec.jobTemplate.spec.template : object.spec.template"},
      {"containers",
       "(has(variables.tmpl.spec.initContainers) ? variables.tmpl.spec.initContainers : []) + "
       "variables.tmpl.spec.containers + (has(variables.tmpl.spec.ephemeralContainers) ? "
       "variables.tmpl.spec.ephemeralContainers : [])"},
      {"container",
       "'container \"' + (size(variables.containers) == 0 ? '' : variables.containers[0].name) + "
       "'\": '"},
      {"value",
       Cat("has(variables.tmpl.metadata) && has(variables.tmpl.metadata.annotations) && ", key,
           " in variables.tmpl.metadata.annotations ? variables.tmpl.metadata.annotations[", key,
           "] : ''")},
      {"annotation",
       Cat("'annotation \"", kRequestAnnotation, "\" = ' + ", CelQuote("variables.value"))},
      {"entries",
       Cat("size(variables.value) > ", std::to_string(kMaxJudgedChars),
           " ? [] : variables.value.split(',').map(e, ", CelTrim("e"), ").filter(e, e != '')")},
  };
  for (auto& v : MalformedVariables()) out.push_back(std::move(v));
  std::vector<Variable> judged = {
      // [name, soft, hard, text] of each entry once none is bad: dyn, as
      // the API server's CEL takes only lists of one type.
      {"judged", Cat("variables.malformed ? [] : variables.parts.map(p, [dyn(p[1]), dyn(",
                     CelValue("p[2]"), "), dyn(", CelValue("p[3]"), "), dyn(p[0])])")},
      {"ceilings", CelCeilings(cfg.requests.ceilings)},
      {"ceilingTexts", CelCeilingTexts(cfg.requests.ceilings)},
      {"refused", Cat("variables.judged.filter(l, ", over, ")")},
      {"ignored", "variables.judged.filter(l, !(l[0] in variables.ceilings))"},
      {"clamped", Cat("variables.judged.filter(l, l[0] in variables.ceilings && (", over, "))")},
  };
  for (auto& v : judged) out.push_back(std::move(v));
  return out;
}

std::vector<Check> AnnotationChecks(const Config& cfg) {
  std::vector<Check> out = {MalformedCheck(cfg)};
  if (cfg.requests.over_ceiling == OverCeiling::kReject) {
    out.push_back(Refused(cfg));
  } else {
    out.push_back(Ignored(cfg));
    out.push_back(Clamped(cfg));
  }
  return out;
}

}  // namespace ocirlimit::k8s
