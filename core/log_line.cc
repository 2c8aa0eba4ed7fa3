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

std::string FormatLogLine(const std::string& rfc3339_time, const std::string& id, pid_t pid,
                          const std::vector<Change>& changes,
                          const std::vector<std::string>& warnings, const std::string& error) {
  std::string line = rfc3339_time + " id=" + JsonQuote(id) + " pid=" + std::to_string(pid);
  line += changes.empty() ? " unchanged" : " " + FormatChanges(changes);
  for (const auto& w : warnings) line += " warning=" + JsonQuote(w);
  if (!error.empty()) line += " error=" + JsonQuote(error);
  return line;
}

}  // namespace ocirlimit
