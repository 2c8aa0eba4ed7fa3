// The malformed annotation, as core/rlimit.cc's ParseRlimitCsv refuses it:
// the first entry (in order) that does not parse, or names a type an earlier
// one named, with the node's own words for why. Only the first 17 entries
// are read: 16 types exist, so among 17 non-empty entries one is bad.
#include "adapters/k8s/cel_rlimits.h"
#include "adapters/k8s/policy_checks.h"
#include "core/policy.h"
#include "formats/text.h"

namespace ocirlimit::k8s {
namespace {

// [0, 1, ..., 16]: CEL here has no indexed iteration.
std::string Indices() {
  std::string out;
  for (size_t i = 0; i <= kMaxEntries; ++i) out += Cat(i == 0 ? "" : ", ", std::to_string(i));
  return "[" + out + "]";
}

// Why the node refuses the value text `t` (variables.badSplit[k]) as the
// soft or hard value of type variables.badName, or '' when it takes it.
std::string ValueError(std::string_view which, size_t k) {
  const std::string t = Cat("variables.badSplit[", std::to_string(k), "]");
  const std::string q = Cat("variables.badQuoted[", std::to_string(k + 1), "]");
  const std::string head = Cat("'", which, " value ' + ", q);
  return Cat("(", t, " == '' ? '", which, " value is empty' : ", t,
             ".lowerAscii() in ['unlimited', 'infinity', '-1'] ? '' : ", t,
             ".matches('[kKmMgGtT]$') && !(variables.badName in ", CelByteNames(), ") ? ", head,
             " + ' has a size suffix, but ' + variables.badName + ' is not measured in bytes' : !",
             t, ".matches('^[0-9]+[kKmMgGtT]?$') ? ", head,
             " + ' is not a decimal integer, \"unlimited\", \"infinity\" or \"-1\"' : !",
             CelFits(t), " ? ", head, " + ' overflows 64 bits' : '')");
}

// The node's words after `rlimit "ENTRY": ` for the first bad entry.
std::string ParseError() {
  const std::string e = "variables.badText";
  const std::string soft = ValueError("soft", 1);
  const std::string hard = Cat("(", e, ".substring(", e, ".indexOf('=') + 1).contains(':') ? ",
                               ValueError("hard", 2), " : '')");
  return Cat("(variables.good[variables.bad[0]] ? variables.badName + ' is given twice' : !", e,
             ".contains('=') ? 'expected NAME=SOFT[:HARD]' : !variables.badSplit[0].matches(",
             CelString(NameGrammar()), ") ? 'unknown name ' + variables.badQuoted[1] + ' ",
             KnownNames(), "' : ", soft, " != '' ? ", soft, " : ", hard, " != '' ? ", hard,
             " : 'soft ' + ", CelLimitText(CelValue("variables.badSplit[1]")),
             " + ' is greater than hard ' + ", CelLimitText(CelValue("variables.badSplit[2]")),
             ")");
}

}  // namespace

std::vector<Variable> MalformedVariables() {
  const std::string e = "variables.badText";
  const std::string values = Cat(e, ".substring(", e, ".indexOf('=') + 1)");
  const std::string good =
      Cat("p[0].matches(", CelString(EntryGrammar()), ") && ", CelFits("p[2]"), " && ",
          CelFits("p[3]"), " && ", CelValue("p[2]"), " <= ", CelValue("p[3]"));
  return {
      {"indices", Cat(Indices(), ".filter(i, i < size(variables.entries))")},
      // [text, name, soft text, hard text] of each entry read; good: it
      // parses (grammar, 64 bits, soft <= hard).
      {"parts", Cat("variables.indices.map(i, [variables.entries[i], ",
                    CelName("variables.entries[i]"), ", ", CelSoftText("variables.entries[i]"),
                    ", ", CelHardText("variables.entries[i]"), "])")},
      {"good", Cat("variables.parts.map(p, ", good, ")")},
      {"bad",
       "variables.indices.filter(i, !variables.good[i] || variables.indices.exists(j, j < i && "
       "variables.parts[j][1] == variables.parts[i][1]))"},
      {"malformed", "size(variables.bad) > 0"},
      // The first bad entry, for the message: its text, its trimmed name,
      // soft and hard texts (as the node cuts them), quoted, its type.
      {"badText", "variables.entries[variables.bad[0]]"},
      {"badSplit",
       Cat(e, ".contains('=') ? [", CelTrim(Cat(e, ".substring(0, ", e, ".indexOf('='))")), ", ",
           CelTrim(Cat(values, ".split(':')[0]")), ", ",
           CelTrim(Cat(values, ".substring(", values, ".indexOf(':') + 1)")), "] : ['', '', '']")},
      {"badQuoted", Cat("[", CelQuote(e), "] + variables.badSplit.map(x, ", CelQuote("x"), ")")},
      {"badName", "variables.badSplit[0].lowerAscii().replace('rlimit_', '')"},
  };
}

std::string MalformedError(const Config& cfg) {
  return Cat("(", MessageHead(cfg, true, "variables.container", "variables.annotation"),
             "'rlimit ' + variables.badQuoted[0] + ': ' + ", ParseError(), ")");
}

}  // namespace ocirlimit::k8s
