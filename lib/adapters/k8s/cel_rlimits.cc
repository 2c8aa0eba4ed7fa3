#include "adapters/k8s/cel_rlimits.h"

#include <cctype>
#include <cstdio>

#include "formats/text.h"

namespace ocirlimit::k8s {
namespace {

// isspace(3) in the C locale, as a RE2 class body.
constexpr std::string_view kBlank = R"( \t\n\v\f\r)";
// The characters a value that matches the grammar is made of.
constexpr std::string_view kValueChars = "-0-9A-Za-z";
// The significant digits of a value's text ("" for zero).
constexpr std::string_view kSignificant = "r'[1-9][0-9]*'";
constexpr std::string_view kMax = "18446744073709551615u";

// "[mM][eE]...": ASCII case-insensitive without (?i), whose Unicode folding
// would also take the Kelvin sign for k and the long s for s.
std::string AnyCase(std::string_view word) {
  std::string out;
  for (char c : word) {
    if (std::isalpha(static_cast<unsigned char>(c)) == 0) {
      out += c;
      continue;
    }
    out += '[';
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out += ']';
  }
  return out;
}

// One value: a special word, or digits with (bytes) an optional suffix.
std::string ValueRe(bool bytes) {
  return Cat("(?:", AnyCase("unlimited"), "|", AnyCase("infinity"), "|-1|[0-9]+",
             bytes ? "[kKmMgGtT]?" : "", ")");
}

// NAME = VALUE [: VALUE] for the types that do (or do not) take suffixes.
std::string EntryRe(bool bytes) {
  std::string names;
  for (const RlimitInfo& info : AllRlimits()) {
    if (info.bytes != bytes) continue;
    names += Cat(names.empty() ? "" : "|", AnyCase(info.name));
  }
  const std::string blanks = Cat("[", kBlank, "]*");
  const std::string value = ValueRe(bytes);
  return Cat("(?:", AnyCase("rlimit_"), ")?(?:", names, ")", blanks, "=", blanks, value,
             "(?:", blanks, ":", blanks, value, ")?");
}

std::string Significant(std::string_view text) {
  return Cat("(", text, ").find(", kSignificant, ")");
}

std::string Special(std::string_view text) {
  return Cat("(", text, ").lowerAscii() in ['unlimited', 'infinity', '-1']");
}

std::string Multiplier(std::string_view text) {
  std::string out;
  const char* const suffixes[] = {"kK", "mM", "gG", "tT"};
  const char* const values[] = {"1024u", "1048576u", "1073741824u", "1099511627776u"};
  for (size_t i = 0; i < 4; ++i) {
    out += Cat("(", text, ").endsWith('", std::string(1, suffixes[i][0]), "') || (", text,
               ").endsWith('", std::string(1, suffixes[i][1]), "') ? ", values[i], " : ");
  }
  return Cat("(", out, "1u)");
}

std::string Hex2(unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02x", v);
  return buf;
}

std::string Hex4(unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04x", v);
  return buf;
}

// Quote's escapes of one string, as a chain of replace calls.
std::string Escapes(std::string_view x) {
  std::string out = Cat("(", x, ").replace('\\\\', '\\\\\\\\').replace('\"', '\\\\\"')");
  out += ".replace('\\n', '\\\\n').replace('\\r', '\\\\r').replace('\\t', '\\\\t')";
  for (unsigned c = 0; c < 0x20; ++c) {
    if (c == '\n' || c == '\r' || c == '\t') continue;
    out += Cat(".replace('\\x", Hex2(c), "', '\\\\x", Hex2(c), "')");
  }
  out += ".replace('\\x7f', '\\\\x7f')";
  std::vector<unsigned> hidden = {0x061c, 0x200e, 0x200f};
  for (unsigned c = 0x80; c <= 0x9f; ++c) hidden.push_back(c);
  for (unsigned c = 0x2028; c <= 0x202e; ++c) hidden.push_back(c);
  for (unsigned c = 0x2066; c <= 0x2069; ++c) hidden.push_back(c);
  for (unsigned c : hidden) out += Cat(".replace('\\u", Hex4(c), "', '\\\\u", Hex4(c), "')");
  return out;
}

}  // namespace

std::string NameGrammar() {
  std::string names;
  for (const RlimitInfo& info : AllRlimits()) {
    names += Cat(names.empty() ? "" : "|", AnyCase(info.name));
  }
  return Cat("^(?:", AnyCase("rlimit_"), ")?(?:", names, ")$");
}

std::string CelByteNames() {
  std::string out;
  for (const RlimitInfo& info : AllRlimits()) {
    if (info.bytes) out += Cat(out.empty() ? "" : ", ", CelString(info.name));
  }
  return "[" + out + "]";
}

std::string KnownNames() {
  return "(want one of as, core, cpu, data, fsize, locks, memlock, msgqueue, nice, nofile, nproc, "
         "rss, rtprio, rttime, sigpending, stack)";
}

std::string EntryGrammar() { return Cat("^(?:", EntryRe(true), "|", EntryRe(false), ")$"); }

std::string CelTrim(std::string_view x) {
  return Cat("(", x, ").find(r'(?s)[^", kBlank, "](.*[^", kBlank, "])?')");
}

std::string CelName(std::string_view entry) {
  return Cat("(", entry, ").find(r'^[A-Za-z_]+').lowerAscii().replace('rlimit_', '')");
}

std::string CelSoftText(std::string_view entry) {
  return Cat("(", entry, ").find(r'=[", kBlank, "]*[", kValueChars, "]+').find(r'[", kValueChars,
             "]+')");
}

std::string CelHardText(std::string_view entry) {
  return Cat("(", entry, ").find(r'[", kValueChars, "]+$')");
}

std::string CelFits(std::string_view text) {
  const std::string sig = Significant(text);
  return Cat("(", Special(text), " || (size(", sig, ") < 20 || size(", sig, ") == 20 && ", sig,
             " <= '18446744073709551615') && (", sig, " == '' || uint(", sig, ") <= ", kMax, " / ",
             Multiplier(text), "))");
}

std::string CelValue(std::string_view text) {
  const std::string sig = Significant(text);
  return Cat("(", Special(text), " ? ", kMax, " : ", sig, " == '' ? 0u : uint(", sig, ") * ",
             Multiplier(text), ")");
}

std::string CelLimitText(std::string_view value) {
  return Cat("((", value, ") == ", kMax, " ? 'unlimited' : string(", value, "))");
}

std::string CelQuote(std::string_view x) {
  const std::string max = std::to_string(kMaxQuotedBytes);
  // Where the node cuts: the longest prefix of at most 256 bytes. Its first
  // 256 characters when they are ASCII; else between 64 (4-byte
  // characters) and 255 characters.
  std::string lengths;
  for (size_t k = kMaxQuotedBytes / 4; k < kMaxQuotedBytes; ++k) {
    lengths += Cat(lengths.empty() ? "" : ", ", std::to_string(k));
  }
  const std::string cut =
      Cat("(size(", x, ") >= ", max, " && size(bytes((", x, ").substring(0, ", max, "))) == ", max,
          " ? ", max, " : [", lengths, "].filter(k, k < size(", x, ") && size(bytes((", x,
          ").substring(0, k))) <= ", max, ").max())");
  const std::string fits = Cat("size(bytes(", x, ")) <= ", max);
  const std::string head = Cat("(", fits, " ? ", x, " : (", x, ").substring(0, ", cut, "))");
  return Cat("('\"' + ", Escapes(head), " + (", fits,
             " ? '\"' : '\\u2026\" (' + string(size(bytes(", x, "))) + ' bytes)'))");
}

std::string CelString(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string CelCeilings(const std::vector<Rlimit>& ceilings) {
  std::string out;
  for (const Rlimit& c : ceilings) {
    out += Cat(out.empty() ? "" : ", ", CelString(c.info().name), ": [", std::to_string(c.soft),
               "u, ", std::to_string(c.hard), "u]");
  }
  return "{" + out + "}";
}

std::string CelCeilingTexts(const std::vector<Rlimit>& ceilings) {
  std::string out;
  for (const Rlimit& c : ceilings) {
    out += Cat(out.empty() ? "" : ", ", CelString(c.info().name), ": ", CelString(FormatRlimit(c)));
  }
  return "{" + out + "}";
}

}  // namespace ocirlimit::k8s
