#include "adapters/k8s/selector.h"

#include <algorithm>

#include "formats/text.h"

namespace ocirlimit::k8s {
namespace {

bool Alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A label name or value: at most 63 of [A-Za-z0-9_.-], alphanumeric at both
// ends (a value may be empty).
bool LabelPart(std::string_view s) {
  if (s.empty() || s.size() > 63 || !Alnum(s.front()) || !Alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return Alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// A DNS subdomain prefix: lowercase alphanumerics, '-' and '.', at most 253.
bool Prefix(std::string_view s) {
  if (s.empty() || s.size() > 253 || !Alnum(s.front()) || !Alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
}

bool Key(std::string_view k) {
  const size_t slash = k.find('/');
  if (slash == std::string_view::npos) return LabelPart(k);
  return Prefix(k.substr(0, slash)) && LabelPart(k.substr(slash + 1));
}

Result<Requirement> ParseOne(std::string_view flag, std::string_view item) {
  Requirement r;
  auto bad = [&](std::string_view why) {
    return MakeError(Cat(flag, " ", Quote(item), ": ", why,
                         " (want KEY=VALUE, KEY!=VALUE, KEY or !KEY, comma-separated)"));
  };
  const size_t ne = item.find("!=");
  const size_t eq = item.find('=');
  if (ne != std::string_view::npos) {
    r = {std::string(Trim(item.substr(0, ne))), "NotIn", std::string(Trim(item.substr(ne + 2)))};
  } else if (eq != std::string_view::npos) {
    std::string_view v = item.substr(eq + 1);
    if (v.starts_with('=')) v.remove_prefix(1);  // KEY==VALUE, as kubectl reads it
    r = {std::string(Trim(item.substr(0, eq))), "In", std::string(Trim(v))};
  } else if (item.starts_with('!')) {
    r = {std::string(Trim(item.substr(1))), "DoesNotExist", ""};
  } else {
    r = {std::string(item), "Exists", ""};
  }
  if (!Key(r.key)) return bad(Cat("the key ", Quote(r.key), " is not a label key"));
  if (!r.value.empty() && !LabelPart(r.value)) {
    return bad(Cat("the value ", Quote(r.value), " is not a label value"));
  }
  return r;
}

}  // namespace

Result<std::vector<Requirement>> ParseSelector(std::string_view flag, std::string_view text) {
  std::vector<Requirement> out;
  if (Trim(text).empty()) {
    return MakeError(Cat(flag, ": empty (leave it out to match every object)"));
  }
  while (true) {
    const size_t comma = text.find(',');
    auto r = ParseOne(flag, Trim(text.substr(0, comma)));
    if (!r) return r.error();
    out.push_back(std::move(*r));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

std::string SelectorYaml(const std::vector<Requirement>& reqs, size_t indent) {
  const std::string pad(indent, ' ');
  std::string out = pad + "matchExpressions:\n";
  for (const Requirement& r : reqs) {
    out += Cat(pad, "- key: ", JsonQuote(r.key), "\n", pad, "  operator: ", r.op, "\n");
    if (r.op == "In" || r.op == "NotIn") out += Cat(pad, "  values: [", JsonQuote(r.value), "]\n");
  }
  return out;
}

}  // namespace ocirlimit::k8s
