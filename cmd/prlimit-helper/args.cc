#include "prlimit-helper/args.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <span>

#include "adapters/oci/state.h"
#include "formats/argv.h"
#include "formats/text.h"

namespace ocirlimit {
namespace {

Result<pid_t> ParsePid(const std::string& text) {
  auto bad = [&] { return MakeError("--pid: " + Quote(text) + " is not a process id"); };
  if (text.empty() ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return bad();
  }
  long long n = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || ptr != text.data() + text.size() || n > INT_MAX) return bad();
  return static_cast<pid_t>(n);
}

// No runtime appends a stage word to a hook's args, but a hooks.d file
// written in the style of other hooks may end with one. The two stages
// that run on the host with the init pid in the state (IsApplyStage) are
// harmless to accept; any other stage is a mistake worth refusing.
bool IsOtherStage(const std::string& s) {
  return s == "createContainer" || s == "startContainer" || s == "poststart" || s == "poststop" ||
         s == "precreate";
}

// What the items say, before the checks that need all of them.
struct Gathered {
  HelperArgs out;
  bool get = false;
  std::vector<std::string> entries;  // NAME=SOFT[:HARD], as given
  std::string stage;
  bool done = false;  // --help or --version: nothing else is read
};

Status SetSource(HelperArgs& out, TargetSource source, const std::string& flag) {
  if (out.source != TargetSource::kNone) {
    return MakeError(flag + ": the target is already given; use one --pid or one --state");
  }
  out.source = source;
  return Ok{};
}

// One item of the argv into g.
Status Take(const ArgItem& a, Gathered& g) {
  HelperArgs& out = g.out;
  if (a.Is("--help") || a.Is("--version")) {
    out.mode = a.Is("--help") ? HelperMode::kHelp : HelperMode::kVersion;
    g.done = true;
  } else if (a.Is("--pid")) {
    if (auto s = SetSource(out, TargetSource::kPid, "--pid"); !s) return s;
    auto pid = ParsePid(a.value);
    if (!pid) return pid.error();
    out.pid = *pid;
  } else if (a.Is("--state")) {
    return SetSource(out, TargetSource::kState, "--state");
  } else if (a.Is("--get")) {
    g.get = true;
  } else if (a.Is("--json")) {
    out.json = true;
  } else if (a.Is("--debug-caps")) {
    out.debug_caps = true;
  } else if (a.Is(kTestPauseFlag)) {
    out.test_pause_fifo = a.value;
  } else if (!g.stage.empty()) {
    return MakeError("unexpected argument " + Quote(a.value) + " after stage " + Quote(g.stage));
  } else if (IsApplyStage(a.value) || IsOtherStage(a.value)) {
    g.stage = a.value;
  } else {
    g.entries.push_back(a.value);
  }
  return Ok{};
}

Result<Gathered> Gather(const std::vector<std::string>& args, bool test_flags) {
  Gathered g;
  std::span<const FlagSpec> flags(kHelperFlags);
  ArgReader reader(args, test_flags ? flags : flags.first(flags.size() - 1));
  while (!g.done) {
    auto next = reader.Next();
    if (!next) return next.error();
    if (!*next) break;
    if (auto taken = Take(**next, g); !taken) return taken.error();
  }
  return g;
}

// A stage word only as a hook's last argument, with the state on stdin.
Status CheckStage(const Gathered& g) {
  if (g.stage.empty()) return Ok{};
  if (!IsApplyStage(g.stage)) {
    return MakeError("stage " + Quote(g.stage) +
                     " is not supported: run the helper as a createRuntime or prestart hook");
  }
  if (g.out.source != TargetSource::kState) {
    return MakeError("stage " + Quote(g.stage) + " only makes sense with --state");
  }
  return Ok{};
}

// The mode, from the target, the limits and --get.
Result<HelperArgs> Finish(Gathered g) {
  HelperArgs& out = g.out;
  auto limits = ParseRlimitList(g.entries);
  if (!limits) return limits.error();
  out.limits = std::move(*limits);
  if (out.source == TargetSource::kNone) {
    if (out.debug_caps && !g.get && out.limits.empty()) {
      out.mode = HelperMode::kDebugCaps;
      return out;
    }
    return MakeError("no target: give --pid PID, or --state to read an OCI state on stdin");
  }
  if (g.get) {
    if (!out.limits.empty()) {
      return MakeError("--get takes no limits, but got " + Quote(g.entries.front()));
    }
    out.mode = HelperMode::kGet;
    return out;
  }
  if (out.limits.empty()) {
    return MakeError("no limits: give at least one NAME=SOFT[:HARD], e.g. memlock=unlimited");
  }
  return out;
}

}  // namespace

Result<HelperArgs> ParseHelperArgs(const std::vector<std::string>& args, bool test_flags) {
  auto gathered = Gather(args, test_flags);
  if (!gathered) return gathered.error();
  if (gathered->done) return gathered->out;
  if (auto stage = CheckStage(*gathered); !stage) return stage.error();
  return Finish(std::move(*gathered));
}

}  // namespace ocirlimit
