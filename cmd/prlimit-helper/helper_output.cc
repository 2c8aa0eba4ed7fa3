#include "prlimit-helper/helper_output.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "formats/log_line.h"

namespace ocirlimit {
namespace {

using Json = nlohmann::ordered_json;

Json Value(uint64_t v) { return v == kRlimInfinity ? Json("unlimited") : Json(v); }

Json Pair(LimitPair p) { return Json{{"soft", Value(p.soft)}, {"hard", Value(p.hard)}}; }

std::string Name(int resource) { return std::string(FindRlimitByResource(resource)->name); }

std::vector<std::string> NotApplied(const std::vector<Rlimit>& requested,
                                    const std::vector<Change>& applied) {
  std::vector<std::string> out;
  for (const auto& r : requested) {
    bool done = std::any_of(applied.begin(), applied.end(),
                            [&](const Change& c) { return c.resource == r.resource; });
    if (!done) out.emplace_back(r.info().name);
  }
  return out;
}

std::string Join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : " ") + i;
  return s;
}

}  // namespace

const char* const kHelperUsage =
    "usage: oci-prlimit-helper [--json] [--debug-caps] --pid PID NAME=SOFT[:HARD]...\n"
    "       oci-prlimit-helper [--json] [--debug-caps] --state NAME=SOFT[:HARD]... "
    "[createRuntime|prestart]\n"
    "       oci-prlimit-helper [--json] --get (--pid PID | --state)\n"
    "       oci-prlimit-helper --debug-caps\n"
    "       oci-prlimit-helper --help | --version\n"
    "\n"
    "Sets rlimits on another process with prlimit(2), from outside its seccomp filter.\n"
    "  --pid PID     the target process\n"
    "  --state       read an OCI state on stdin and use its pid, as a createRuntime or\n"
    "                prestart hook: \"args\": "
    "[\"oci-prlimit-helper\",\"--state\",\"memlock=unlimited\"]\n"
    "  --get         print the target's current limits as NAME=SOFT:HARD lines\n"
    "  --json        print one JSON object: each touched limit's soft and hard, before and after\n"
    "  --debug-caps  print this helper's own capability sets (after it dropped them): alone\n"
    "                to stdout, with an operation to stderr\n"
    "NAME is a Linux rlimit (memlock, nofile, ...); values are decimal, K/M/G/T for byte\n"
    "limits, or unlimited. HARD defaults to SOFT.\n"
    "\n"
    "The helper keeps only CAP_SYS_RESOURCE, clears the ambient set and sets no_new_privs\n"
    "before it reads anything but argv. It pins the target with a pidfd and checks that the\n"
    "same process is still alive after setting its limits.\n"
    "\n"
    "Exit status:\n"
    "  0  every limit applied (or printed)\n"
    "  1  failure: could not drop privileges, bad OCI state on stdin, I/O error,\n"
    "     unexpected error; nothing applied\n"
    "  2  usage: bad arguments or limits, or a refused target (pid <= 1, the helper itself,\n"
    "     a kernel thread such as kthreadd)\n"
    "  3  target gone: no such process, a zombie (exited, not yet reaped), or it exited\n"
    "     before or while its limits were set\n"
    "  4  permission: refused before anything was applied, e.g. raising a hard limit\n"
    "     without CAP_SYS_RESOURCE (a rootless runtime cannot raise hard limits)\n"
    "  5  partial apply: some limits were applied before one failed; the error (and --json)\n"
    "     names those applied and those not\n";

int HelperExitCode(ApplyFailure failure) {
  switch (failure) {
    case ApplyFailure::kNone:
      return kExitOk;
    case ApplyFailure::kInvalidTarget:
      return kExitUsage;
    case ApplyFailure::kTargetGone:
      return kExitTargetGone;
    case ApplyFailure::kPermission:
      return kExitPermission;
    case ApplyFailure::kOther:
      return kExitFailure;
  }
  return kExitFailure;
}

int HelperExitCode(const ApplyOutcome& outcome) {
  if (outcome.ok()) return kExitOk;
  // A process that is gone has no limits left to be partial about.
  if (outcome.failure != ApplyFailure::kTargetGone && !outcome.applied.empty()) return kExitPartial;
  return HelperExitCode(outcome.failure);
}

std::string ApplyFailureMessage(const ApplyOutcome& outcome, const std::vector<Rlimit>& requested) {
  std::string msg = outcome.error ? outcome.error->Text() : std::string("no error");
  if (outcome.applied.empty()) return msg + " (nothing was applied)";
  msg += " (partial apply: applied before the failure: " + FormatChanges(outcome.applied);
  auto rest = NotApplied(requested, outcome.applied);
  if (!rest.empty()) msg += "; not applied: " + Join(rest);
  return msg + ")";
}

std::string ApplyJson(pid_t pid, const std::vector<Rlimit>& requested,
                      const ApplyOutcome& outcome) {
  Json j{{"pid", pid}, {"ok", outcome.ok()}};
  Json changes = Json::array();
  for (const auto& c : outcome.applied) {
    changes.push_back(
        Json{{"name", Name(c.resource)}, {"before", Pair(c.before)}, {"after", Pair(c.after)}});
  }
  j["changes"] = changes;
  j["not_applied"] = NotApplied(requested, outcome.applied);
  if (!outcome.ok()) {
    j["error"] = outcome.error->Text();
    j["exit_code"] = HelperExitCode(outcome);
  }
  return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string LimitsText(const std::vector<Rlimit>& limits) {
  std::string s;
  for (const auto& l : limits) s += FormatRlimit(l) + "\n";
  return s;
}

std::string LimitsJson(pid_t pid, const std::vector<Rlimit>& limits) {
  Json all = Json::object();
  for (const auto& l : limits) all[std::string(l.info().name)] = Pair({l.soft, l.hard});
  return Json{{"pid", pid}, {"limits", all}}.dump() + "\n";
}

std::string CapabilityLines(std::string_view proc_status) {
  std::string out;
  while (!proc_status.empty()) {
    size_t nl = proc_status.find('\n');
    std::string_view line = proc_status.substr(0, nl);
    if (line.starts_with("Cap") || line.starts_with("NoNewPrivs:")) {
      out.append(line);
      out += '\n';
    }
    if (nl == std::string_view::npos) break;
    proc_status.remove_prefix(nl + 1);
  }
  return out;
}

}  // namespace ocirlimit
