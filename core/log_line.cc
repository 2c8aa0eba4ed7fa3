#include "core/log_line.h"

#include "core/text.h"

namespace ocirlimit {
namespace {

std::string Pair(LimitPair p) { return FormatLimitValue(p.soft) + ":" + FormatLimitValue(p.hard); }

}  // namespace

std::string FormatChanges(const std::vector<Change>& changes) {
  std::string s;
  for (const auto& c : changes) {
    if (!s.empty()) s += ' ';
    s += Cat(FindRlimitByResource(c.resource)->name, " ", Pair(c.before), "->", Pair(c.after));
  }
  return s;
}

std::string FormatLogLine(const LogRecord& r) {
  std::string line = r.time + " id=" + JsonQuoteCut(r.id);
  if (r.pid) line += " pid=" + std::to_string(*r.pid);
  if (!r.via.empty()) line += " via=" + JsonQuote(r.via);
  if (!r.changes.empty()) {
    line += " " + FormatChanges(r.changes);
  } else if (!r.limits.empty()) {
    line += " set";
    for (size_t i = 0; i < r.limits.size(); ++i) {
      const Rlimit& l = r.limits[i];
      if (i >= r.before.size()) {
        line += " " + FormatRlimit(l);
        continue;
      }
      const std::optional<LimitPair>& b = r.before[i];
      line += Cat(" ", l.info().name, "=", b ? Pair(*b) : std::string(kBeforeUnreported), "->",
                  Pair({l.soft, l.hard}));
    }
  } else {
    line += " unchanged";
  }
  for (const auto& w : r.warnings) line += " warning=" + JsonQuote(w);
  if (!r.error.empty()) line += " error=" + JsonQuote(r.error);
  return line;
}

std::string FormatLogLine(const std::string& rfc3339_time, const std::string& id, pid_t pid,
                          const std::vector<Change>& changes,
                          const std::vector<std::string>& warnings, const std::string& error) {
  LogRecord r;
  r.time = rfc3339_time;
  r.id = id;
  r.pid = pid;
  r.changes = changes;
  r.warnings = warnings;
  r.error = error;
  return FormatLogLine(r);
}

}  // namespace ocirlimit
