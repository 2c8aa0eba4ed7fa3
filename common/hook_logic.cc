#include "hook_logic.h"

#include <nlohmann/json.hpp>

namespace ocirlimit {
namespace {

// JSON string syntax: escapes newlines and quotes, and replaces invalid
// UTF-8 instead of throwing. Messages are quoted whole (their values are
// already cut); the id, from the state, is cut like any echoed value.
std::string Quoted(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Stages that run before user code, with the container's init pid in the
// state. createContainer and later run inside the container or too late.
bool IsApplyStage(const std::string& s) { return s == "prestart" || s == "createRuntime"; }

}  // namespace

Result<HookArgs> ParseHookArgs(const std::vector<std::string>& args) {
  HookArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      out.mode = HookMode::kHelp;
      return out;
    }
    if (a == "--version") {
      out.mode = HookMode::kVersion;
      return out;
    }
    if (a == "--config") {
      if (i + 1 == args.size()) return MakeError("--config: missing PATH");
      out.config = args[++i];
      if (out.config->empty()) return MakeError("--config: empty PATH");
    } else if (a.starts_with("--config=")) {
      out.config = a.substr(9);
      if (out.config->empty()) return MakeError("--config: empty PATH");
    } else if (a.starts_with("-")) {
      return MakeError("unknown flag \"" + a + "\"");
    } else if (!out.stage.empty()) {
      return MakeError("unexpected argument \"" + a + "\" after stage \"" + out.stage + "\"");
    } else if (a == "precreate") {
      out.stage = a;
      out.mode = HookMode::kPrecreate;
    } else if (IsApplyStage(a)) {
      out.stage = a;
    } else {
      return MakeError("stage \"" + a +
                       "\" is not supported: use createRuntime or prestart (or precreate for "
                       "podman)");
    }
  }
  return out;
}

std::vector<std::string> ConflictWarnings(const std::vector<Conflict>& conflicts) {
  std::vector<std::string> out;
  for (const auto& c : conflicts) {
    const auto& info = c.configured.info();
    out.push_back("spec process.rlimits sets " + std::string(info.spec_type) + " to " +
                  FormatLimitValue(c.spec.soft) + ":" + FormatLimitValue(c.spec.hard) +
                  "; runc re-applies it after hooks, so under runc the spec's value wins over " +
                  FormatRlimit(c.configured) +
                  " (crun keeps the hook's value); use oci-rlimit-runtime (runtime mode) to "
                  "replace the spec entry");
  }
  return out;
}

std::string FormatLogLine(const std::string& rfc3339_time, const std::string& id, pid_t pid,
                          const std::vector<Change>& changes,
                          const std::vector<std::string>& warnings, const std::string& error) {
  // Values that a container can influence (id) are JSON-quoted so a line is
  // always one line.
  std::string line = rfc3339_time + " id=" + JsonQuote(id) + " pid=" + std::to_string(pid);
  line += changes.empty() ? " unchanged" : " " + FormatChanges(changes);
  for (const auto& w : warnings) line += " warning=" + Quoted(w);
  if (!error.empty()) line += " error=" + Quoted(error);
  return line;
}

}  // namespace ocirlimit
