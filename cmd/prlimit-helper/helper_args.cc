#include "prlimit-helper/helper_args.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <span>

#include "adapters/oci/state.h"
#include "core/argv.h"
#include "core/text.h"

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

// The test build's flag comes last: the installed helper reads all but it, so
// there it is an unknown flag like any other.
constexpr FlagSpec kFlags[] = {
    {.name = "--help", .short_name = "-h"},
    {.name = "--version"},
    {.name = "--pid", .metavar = "PID"},
    {.name = "--state"},
    {.name = "--get"},
    {.name = "--json"},
    {.name = "--debug-caps"},
    {.name = kTestPauseFlag, .metavar = "FIFO path"},
};

}  // namespace

Result<HelperArgs> ParseHelperArgs(const std::vector<std::string>& args, bool test_flags) {
  HelperArgs out;
  bool get = false;
  std::vector<std::string> entries;
  std::string stage;
  auto set_source = [&](TargetSource s, const std::string& flag) -> Status {
    if (out.source != TargetSource::kNone) {
      return MakeError(flag + ": the target is already given; use one --pid or one --state");
    }
    out.source = s;
    return Ok{};
  };
  std::span<const FlagSpec> flags(kFlags);
  ArgReader reader(args, test_flags ? flags : flags.first(flags.size() - 1));
  for (;;) {
    auto next = reader.Next();
    if (!next) return next.error();
    if (!*next) break;
    const ArgItem& a = **next;
    if (a.Is("--help")) {
      out.mode = HelperMode::kHelp;
      return out;
    }
    if (a.Is("--version")) {
      out.mode = HelperMode::kVersion;
      return out;
    }
    if (a.Is("--pid")) {
      if (auto s = set_source(TargetSource::kPid, "--pid"); !s) return s.error();
      auto pid = ParsePid(a.value);
      if (!pid) return pid.error();
      out.pid = *pid;
    } else if (a.Is("--state")) {
      if (auto s = set_source(TargetSource::kState, "--state"); !s) return s.error();
    } else if (a.Is("--get")) {
      get = true;
    } else if (a.Is("--json")) {
      out.json = true;
    } else if (a.Is("--debug-caps")) {
      out.debug_caps = true;
    } else if (a.Is(kTestPauseFlag)) {
      out.test_pause_fifo = a.value;
    } else if (!stage.empty()) {
      return MakeError("unexpected argument " + Quote(a.value) + " after stage " + Quote(stage));
    } else if (IsApplyStage(a.value) || IsOtherStage(a.value)) {
      stage = a.value;
    } else {
      entries.push_back(a.value);
    }
  }

  if (!stage.empty()) {
    if (!IsApplyStage(stage)) {
      return MakeError("stage " + Quote(stage) +
                       " is not supported: run the helper as a createRuntime or prestart hook");
    }
    if (out.source != TargetSource::kState) {
      return MakeError("stage " + Quote(stage) + " only makes sense with --state");
    }
  }

  auto limits = ParseRlimitList(entries);
  if (!limits) return limits.error();
  out.limits = std::move(*limits);

  if (out.source == TargetSource::kNone) {
    if (out.debug_caps && !get && out.limits.empty()) {
      out.mode = HelperMode::kDebugCaps;
      return out;
    }
    return MakeError("no target: give --pid PID, or --state to read an OCI state on stdin");
  }
  if (get) {
    if (!out.limits.empty()) {
      return MakeError("--get takes no limits, but got " + Quote(entries.front()));
    }
    out.mode = HelperMode::kGet;
    return out;
  }
  if (out.limits.empty()) {
    return MakeError("no limits: give at least one NAME=SOFT[:HARD], e.g. memlock=unlimited");
  }
  return out;
}

}  // namespace ocirlimit
