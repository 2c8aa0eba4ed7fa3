#include "formats/prom_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ocirlimit {
namespace {

bool NameStart(char c, bool colon) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
}

bool NameChar(char c, bool colon) { return NameStart(c, colon) || (c >= '0' && c <= '9'); }

bool ValidName(std::string_view name, bool colon) {
  if (name.empty() || !NameStart(name.front(), colon)) return false;
  for (char c : name) {
    if (!NameChar(c, colon)) return false;
  }
  return true;
}

// HELP text: backslash and newline escaped (quotes stay).
std::string EscapeHelp(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Sample(const std::string& name, const PromSample& s) {
  std::string out = name;
  if (!s.labels.empty()) {
    out += '{';
    for (size_t i = 0; i < s.labels.size(); ++i) {
      if (i > 0) out += ',';
      out += s.labels[i].first + "=\"" + PromEscapeLabel(s.labels[i].second) + '"';
    }
    out += '}';
  }
  return out + ' ' + PromValue(s.value) + '\n';
}

}  // namespace

bool ValidPromMetricName(std::string_view name) { return ValidName(name, true); }

bool ValidPromLabelName(std::string_view name) {
  return ValidName(name, false) && name.substr(0, 2) != "__";
}

std::string PromEscapeLabel(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string PromValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Exact integers below 2^53 as integers: counts and Unix seconds.
  constexpr double kExact = 9007199254740992.0;
  if (value == std::floor(value) && std::fabs(value) < kExact) {
    return std::to_string(static_cast<int64_t>(value));
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  return buf;
}

std::string FormatPrometheus(const std::vector<PromFamily>& families) {
  std::string out;
  for (const PromFamily& f : families) {
    out += "# HELP " + f.name + ' ' + EscapeHelp(f.help) + '\n';
    out += "# TYPE " + f.name + (f.type == PromType::kCounter ? " counter\n" : " gauge\n");
    for (const PromSample& s : f.samples) out += Sample(f.name, s);
  }
  return out;
}

void AddLabelToAll(std::vector<PromFamily>& families, const std::string& name,
                   const std::string& value) {
  if (value.empty()) return;
  for (PromFamily& f : families) {
    for (PromSample& s : f.samples) {
      const bool has = std::any_of(s.labels.begin(), s.labels.end(),
                                   [&](const auto& l) { return l.first == name; });
      if (!has) s.labels.emplace_back(name, value);
    }
  }
}

PromFamily PolicyInfoFamily(const std::string& program, const std::string& digest) {
  PromFamily f{.name = "oci_rlimit_policy_info",
               .help =
                   "The SHA-256 of the merged policy the program runs (config file, "
                   "drop-ins, environment); always 1. Nodes whose digests differ run "
                   "different policies.",
               .type = PromType::kGauge,
               .samples = {}};
  if (!digest.empty()) {
    f.samples.push_back(
        PromSample{.labels = {{"program", program}, {"digest", digest}}, .value = 1});
  }
  return f;
}

}  // namespace ocirlimit
