// The Prometheus text exposition format (version 0.0.4): families of
// samples with their HELP and TYPE lines, as the NRI plugin serves them on
// /metrics and `oci-rlimit audit --format prometheus` writes them for
// node_exporter's textfile collector (docs/audit.md, "Fleet"). Pure: no
// clock, no I/O. Written here rather than taken from prometheus-cpp: the
// plugin is a static, portable binary with a memory budget
// (docs/performance.md, "Metrics").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ocirlimit {

// The Content-Type of a scrape's reply.
inline constexpr std::string_view kPromContentType = "text/plain; version=0.0.4; charset=utf-8";

enum class PromType { kCounter, kGauge };

struct PromSample {
  // Label names and values, in the order written. Values are escaped on
  // output; callers keep their set bounded (no ids, no free text).
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};

struct PromFamily {
  std::string name;  // oci_rlimit_...; a counter's ends in _total
  std::string help;
  PromType type = PromType::kGauge;
  std::vector<PromSample> samples;
};

// [a-zA-Z_:][a-zA-Z0-9_:]* (metric names) and [a-zA-Z_][a-zA-Z0-9_]* (label
// names, not starting with "__").
bool ValidPromMetricName(std::string_view name);
bool ValidPromLabelName(std::string_view name);

// A label value: backslash, double quote and newline escaped.
std::string PromEscapeLabel(std::string_view value);
// A sample value: integers as integers, +Inf, -Inf, NaN, else %.17g.
std::string PromValue(double value);

// `# HELP name help`, `# TYPE name counter|gauge`, then one line per sample;
// a family without samples is still written (its HELP and TYPE). Ends with
// a newline.
std::string FormatPrometheus(const std::vector<PromFamily>& families);

// oci_rlimit_policy_info{program="P",digest="D"} 1: the digest of the merged
// policy a program runs (core/policy_digest.h), one family for the plugin and
// audit, so nodes that run different policies show (docs/guides/fleet-policy.md).
// No sample when digest is empty.
PromFamily PolicyInfoFamily(const std::string& program, const std::string& digest);

// Every sample of every family with the label name="value" added last, so a
// series can be joined to its node (`node`, docs/audit.md "Fleet"); nothing
// when value is empty. A sample that has the label already keeps its own.
void AddLabelToAll(std::vector<PromFamily>& families, const std::string& name,
                   const std::string& value);

}  // namespace ocirlimit
