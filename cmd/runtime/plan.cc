#include "runtime/plan.h"

#include "formats/text.h"

namespace ocirlimit {
namespace {

std::vector<std::string> SplitPath(std::string_view path_env) {
  std::vector<std::string> dirs;
  size_t start = 0;
  while (start <= path_env.size()) {
    size_t colon = path_env.find(':', start);
    if (colon == std::string_view::npos) colon = path_env.size();
    dirs.emplace_back(path_env.substr(start, colon - start));
    start = colon + 1;
  }
  return dirs;
}

// The prefix of errors about an exec process file's fields.
std::string ProcessWhere(const std::string& path) {
  return "--process " + Quote(path) + ": process";
}

std::string ListText(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + Quote(items[i]);
  return out + "]";
}

}  // namespace

Result<std::string> ResolveRuntime(const std::vector<std::string>& runtimes,
                                   std::string_view path_env, const FileId& self,
                                   const ProbeExecutable& probe) {
  auto usable = [&](const std::string& path) {
    auto id = probe(path);
    return id && *id != self;
  };
  for (const auto& r : runtimes) {
    if (r.find('/') != std::string::npos) {
      if (r[0] != '/') {
        return MakeError("[runtime] runtimes: " + Quote(r) +
                         " must be a name on PATH or an absolute path");
      }
      if (usable(r)) return r;
      continue;
    }
    // A relative PATH entry would make the choice depend on the caller's cwd.
    for (const auto& dir : SplitPath(path_env)) {
      if (dir.empty() || dir[0] != '/') continue;
      std::string full = dir;
      if (full.back() != '/') full += '/';
      full += r;
      if (usable(full)) return full;
    }
  }
  return MakeError(
      "[runtime] runtimes " + ListText(runtimes) +
      ": none is an executable other than oci-rlimit-runtime (PATH=" + std::string(path_env) + ")");
}

std::optional<std::string> BaseRuntimeFor(const std::string& id, const std::string& root,
                                          std::string_view path_env, const FileId& self,
                                          const ProbeExecutable& probe,
                                          const std::function<bool(const std::string&)>& exists) {
  struct Base {
    const char* name;
    const char* root;   // its default state root
    const char* state;  // the file it keeps per container there
  };
  constexpr Base kBases[] = {{"runc", "/run/runc", "state.json"}, {"crun", "/run/crun", "status"}};
  std::optional<std::string> first;
  for (const Base& b : kBases) {
    auto found = ResolveRuntime({b.name}, path_env, self, probe);
    if (!found) continue;
    if (!first) first = *found;
    const std::string dir = root.empty() ? std::string(b.root) : root;
    if (!id.empty() && exists(Cat(dir, "/", id, "/", b.state))) return *found;
  }
  return first;
}

Result<std::optional<std::string>> MergeBundleSpec(std::string_view text, const std::string& path,
                                                   const std::vector<Rlimit>& limits) {
  if (limits.empty()) return std::optional<std::string>();
  auto spec = ParseJsonObjectForRunc(text, Quote(path), RuncDocument::kSpec);
  if (!spec) return spec.error();
  if (auto merged = MergeSpecRlimits(*spec, limits); !merged) {
    return merged.error().Wrap(Quote(path));
  }
  return std::optional<std::string>(spec->dump());
}

Result<Json> ParseProcessFile(std::string_view text, const std::string& path) {
  auto process = ParseJsonObjectForRunc(text, "--process " + Quote(path), RuncDocument::kProcess);
  if (!process) return process.error();
  if (auto rlimits = ProcessRlimits(*process, ProcessWhere(path)); !rlimits) {
    return rlimits.error();
  }
  return process;
}

Status MergeExecProcess(Json& process, const std::string& path, const std::vector<Rlimit>& limits) {
  return MergeProcessRlimits(process, limits, ProcessWhere(path));
}

namespace {

std::string JsonLogLine(std::string_view level, std::string_view rfc3339_time,
                        std::string_view msg) {
  Json line = Json::object();
  line["level"] = std::string(level);
  line["msg"] = std::string(msg);
  line["time"] = std::string(rfc3339_time);
  // A message may quote a path that is not UTF-8; the log line must still be written.
  return line.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

std::string WarningLogLine(std::string_view rfc3339_time, std::string_view msg) {
  return JsonLogLine("warning", rfc3339_time, msg);
}

std::string WarningTextLogLine(std::string_view rfc3339_time, std::string_view msg) {
  // The whole message, escaped as a JSON string (quotes and backslashes
  // too): a value quoted in it cannot end msg="..." and forge a field.
  return "time=\"" + std::string(rfc3339_time) + "\" level=warning msg=" + JsonQuote(msg);
}

std::optional<std::string> LoopGuardError(const std::optional<std::string>& marker) {
  if (!marker) return std::nullopt;
  return "loop: called again under " + std::string(kLoopGuardEnv) + "=" + Quote(*marker) +
         ": oci-rlimit-runtime exec'd " + Quote(*marker) +
         ", which ran oci-rlimit-runtime again; point that runtime at runc (its own "
         "runtimes setting), not at oci-rlimit-runtime";
}

std::string ErrorLogLine(std::string_view rfc3339_time, std::string_view msg) {
  Json line = Json::object();
  line["level"] = "error";
  line["msg"] = std::string(msg);
  line["time"] = std::string(rfc3339_time);
  // A message may quote a path that is not UTF-8; the log line must still be written.
  return line.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace ocirlimit
