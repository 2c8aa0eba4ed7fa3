#include "formats/decision.h"

#include <optional>

#include "formats/key_value.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

constexpr std::string_view kHeader = "# oci-rlimit: the decision made for one container";
constexpr std::string_view kVersion = "1";

Result<std::vector<Rlimit>> ParseLimits(std::string_view v) {
  if (v == "nothing") return std::vector<Rlimit>{};
  std::vector<std::string> entries;
  while (!v.empty()) {
    const size_t sp = v.find(' ');
    entries.emplace_back(v.substr(0, sp));
    v = sp == std::string_view::npos ? std::string_view() : v.substr(sp + 1);
  }
  if (entries.empty()) return MakeError("limits: empty (a decision of none says \"nothing\")");
  auto list = ParseRlimitList(entries);
  if (!list) return list.error().Wrap("limits");
  return list;
}

}  // namespace

std::string DecidedLimits(const std::vector<Rlimit>& limits) {
  std::string s;
  for (const auto& l : limits) s += (s.empty() ? "" : " ") + FormatRlimit(l);
  return s.empty() ? "nothing" : s;
}

std::string FormatDecision(const DecisionRecord& d) {
  return std::string(kHeader) + "\nversion=" + std::string(kVersion) + "\nid=" + OneLine(d.id) +
         "\nby=" + OneLine(d.by) + "\npolicy=" + OneLine(d.policy) + "\ntime=" + OneLine(d.time) +
         "\nlimits=" + DecidedLimits(d.limits) + "\n";
}

Result<DecisionRecord> ParseDecision(std::string_view text) {
  DecisionRecord d;
  std::optional<std::string_view> version;
  std::optional<std::string_view> limits;
  bool id = false;
  bool by = false;
  bool policy = false;
  auto read = ForEachKeyValue(text, [&](std::string_view key, std::string_view v) -> Status {
    if (key == "version") {
      version = v;
    } else if (key == "id") {
      d.id = std::string(v), id = true;
    } else if (key == "by") {
      d.by = std::string(v), by = true;
    } else if (key == "policy") {
      d.policy = std::string(v), policy = true;
    } else if (key == "time") {
      d.time = std::string(v);
    } else if (key == "limits") {
      limits = v;
    }
    return Ok{};
  });
  if (!read) return read.error();
  if (!version) return MakeError("no version line");
  if (*version != kVersion) return MakeError("version " + Quote(*version) + ": not 1");
  if (!id || !by || !policy || !limits) {
    return MakeError(std::string("missing ") + (!id       ? "id"
                                                : !by     ? "by"
                                                : !policy ? "policy"
                                                          : "limits"));
  }
  auto parsed = ParseLimits(*limits);
  if (!parsed) return parsed.error();
  d.limits = std::move(*parsed);
  return d;
}

}  // namespace ocirlimit
