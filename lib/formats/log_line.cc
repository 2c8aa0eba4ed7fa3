#include "formats/log_line.h"

#include "formats/text.h"

namespace ocirlimit {
namespace {

std::string Pair(LimitPair p) { return FormatLimitValue(p.soft) + ":" + FormatLimitValue(p.hard); }

// The end of the JSON string literal that starts at s[at] (a quote), or npos.
size_t StringEnd(std::string_view s, size_t at) {
  for (size_t i = at + 1; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

}  // namespace

std::string NotAppliedLine(std::string_view line, std::string_view why) {
  const size_t id_at = line.find(" id=\"");
  const size_t id_end = id_at == std::string_view::npos ? id_at : StringEnd(line, id_at + 4);
  const size_t via_at = id_end == std::string_view::npos ? id_end : line.find(" via=\"", id_end);
  const size_t via_end = via_at != id_end ? std::string_view::npos : StringEnd(line, via_at + 5);
  if (via_end == std::string_view::npos || via_end >= line.size() || line[via_end] != ' ') {
    return Cat(line, " error=", JsonQuote(why));
  }
  const std::string_view id = line.substr(id_at + 4, id_end - id_at - 4);
  const std::string_view verdict = line.substr(via_end + 1);
  return Cat(line.substr(0, via_end), " unapplied error=",
             JsonQuote(Cat(why, "; the runtime may have created container ", id, " unadjusted")),
             " verdict=", JsonQuote(verdict));
}

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
