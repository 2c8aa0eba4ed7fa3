#include "nri/args.h"

#include <algorithm>
#include <cctype>

#include "formats/argv.h"
#include "formats/nri_status.h"
#include "formats/text.h"
#include "nri/metrics/metrics_http.h"

namespace ocirlimit::nri {
namespace {

bool ValidName(const std::string& s) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.';
  });
}

bool ValidIndex(const std::string& s) {
  return s.size() == 2 && std::isdigit(static_cast<unsigned char>(s[0])) != 0 &&
         std::isdigit(static_cast<unsigned char>(s[1])) != 0;
}

// The identity flags given: they win over a pre-registered plugin's
// environment.
struct Given {
  bool name = false;
  bool index = false;
  bool socket = false;
};

// The flags into out; stops at --help or --version (out.mode says which).
Status ReadFlags(const std::vector<std::string>& args, NriArgs& out, Given& given) {
  ArgReader reader(args, kNriFlags);
  for (;;) {
    auto next = reader.Next();
    if (!next) return next.error();
    if (!*next) return Ok{};
    const ArgItem& a = **next;
    if (a.Is("--help") || a.Is("--version")) {
      out.mode = a.Is("--help") ? NriMode::kHelp : NriMode::kVersion;
      return Ok{};
    }
    if (!a.flag) return MakeError("unexpected argument " + Quote(a.value));
    if (a.Is("--config")) {
      out.config = a.value;
    } else if (a.Is("--socket")) {
      out.socket = a.value;
      given.socket = true;
    } else if (a.Is("--metrics-address")) {
      out.metrics_address = a.value;
    } else if (a.Is("--node-name")) {
      out.node_name = a.value;
    } else if (a.Is("--status-file")) {
      out.status_file = a.value;
    } else if (a.Is("--name")) {
      out.name = a.value;
      given.name = true;
    } else {
      out.index = a.value;
      given.index = true;
    }
  }
}

// Pre-registered (containerd exec'd us with NRI_PLUGIN_SOCKET=FD): the
// socket, name and index from the environment, unless given as flags.
Status TakePluginEnv(const EnvLookup& env, const Given& given, NriArgs& out) {
  auto fd = env("NRI_PLUGIN_SOCKET");
  if (!fd || given.socket) return Ok{};
  const std::string& v = *fd;
  if (v.empty() || v.size() > 4 ||
      !std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
    return MakeError("NRI_PLUGIN_SOCKET " + Quote(v) + ": not a file descriptor number");
  }
  out.socket_fd = std::stoi(v);
  if (auto n = env("NRI_PLUGIN_NAME"); n && !given.name) out.name = *n;
  if (auto n = env("NRI_PLUGIN_IDX"); n && !given.index) out.index = *n;
  return Ok{};
}

}  // namespace

Result<NriArgs> ParseNriArgs(const std::vector<std::string>& args, const EnvLookup& env) {
  NriArgs out;
  Given given;
  if (auto read = ReadFlags(args, out, given); !read) return read.error();
  if (out.mode != NriMode::kRun) return out;
  if (auto taken = TakePluginEnv(env, given, out); !taken) return taken.error();
  if (!ValidName(out.name)) {
    return MakeError("--name " + Quote(out.name) + ": use letters, digits, '-', '_' or '.'");
  }
  if (auto node = env("NODE_NAME"); out.node_name.empty() && node) out.node_name = *node;
  if (!out.metrics_address.empty()) {
    if (auto addr = ParseMetricsAddress(out.metrics_address); !addr) return addr.error();
  }
  if (!ValidIndex(out.index)) {
    return MakeError("--index " + Quote(out.index) + ": must be two digits, e.g. 10");
  }
  return out;
}

}  // namespace ocirlimit::nri
