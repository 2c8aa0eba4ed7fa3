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

// Whether entry `l` is past the ceilings: its type not in them, or its
// soft or hard value over the ceiling's.
std::string Over(std::string_view l) {
  return Cat("(!(", l, "[0] in variables.ceilings) || ", l, "[1] > variables.ceilings[", l,
             "[0]][0] || ", l, "[2] > variables.ceilings[", l, "[0]][1])");
}

// The node's refusal of the first entry past the ceilings (reject).
std::string RefusedDetail() {
  const std::string o = "variables.refused[0]";
  return Cat("(!(", o, "[0] in variables.ceilings) ? ", Formatted(o), " + ': ' + ", o,
             "[0] + ' is not in requests.ceilings", kReject, "' : ", Formatted(o),
             " + ' is over the ceiling ' + variables.ceilingTexts[", o, "[0]] + '", kReject, "')");
}

// The node's warning for judged entry `l` under clamp: ignored, clamped, or
// '' for an entry within its ceiling.
std::string Note(const Config& cfg, std::string_view l) {
  const std::string c = Cat("variables.ceilings[", l, "[0]]");
  const std::string head = MessageHead(cfg, false, "variables.container", "variables.annotation");
  return Cat("!(", l, "[0] in variables.ceilings) ? ", head, Formatted(l), " + ': ' + ", l,
             "[0] + ' is not in requests.ceilings; ignored' : ", Over(l), " ? ", head, Formatted(l),
             " + ' is over the ceiling ' + variables.ceilingTexts[", l, "[0]] + '; clamped to ' + ",
             l, "[0] + '=' + ", CelLimitText(Lesser(Cat(l, "[1]"), Cat(c, "[0]"))), " + ':' + ",
             CelLimitText(Lesser(Cat(l, "[2]"), Cat(c, "[1]"))), " : ''");
}

}  // namespace

std::string MessageHead(const Config& cfg, bool error, std::string_view container,
                        std::string_view where) {
  const bool left_out = error && cfg.on_error == OnError::kWarn;
  return Cat(container, " + ", left_out ? CelString(kLeftOut) + " + " : "", where, " + ': ' + ");
}

std::vector<Variable> TemplateVariables(const Config& cfg) {
  return {
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
      {"ceilings", CelCeilings(cfg.requests.ceilings)},
      {"ceilingTexts", CelCeilingTexts(cfg.requests.ceilings)},
  };
}

std::vector<Variable> AnnotationVariables(const Config& cfg) {
  const std::string key = CelString(kRequestAnnotation);
  std::vector<Variable> out = {
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
  const bool reject = cfg.requests.over_ceiling == OverCeiling::kReject;
  const std::string head = MessageHead(cfg, true, "variables.container", "variables.annotation");
  std::vector<Variable> judged = {
      // [name, soft, hard, text] of each entry once none is bad: dyn, as
      // the API server's CEL takes only lists of one type.
      {"judged", Cat("variables.malformed ? [] : variables.parts.map(p, [dyn(p[1]), dyn(",
                     CelValue("p[2]"), "), dyn(", CelValue("p[3]"), "), dyn(p[0])])")},
      {"refused", Cat("variables.judged.filter(l, ", Over("l"), ")")},
      {"annotationError",
       Cat("variables.malformed ? ", MalformedError(cfg), " : ",
           reject ? Cat("size(variables.refused) > 0 ? ", head, RefusedDetail(), " : ") : "",
           "''")},
      {"annotationNotes",
       reject ? "[]" : Cat("variables.judged.map(l, ", Note(cfg, "l"), ").filter(n, n != '')")},
  };
  for (auto& v : judged) out.push_back(std::move(v));
  return out;
}

}  // namespace ocirlimit::k8s
