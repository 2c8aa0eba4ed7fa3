#include "nri/args.h"

#include <algorithm>
#include <cctype>

#include "core/argv.h"
#include "core/nri_status.h"
#include "core/text.h"

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

}  // namespace

Result<NriArgs> ParseNriArgs(const std::vector<std::string>& args, const EnvLookup& env) {
  NriArgs out;
  bool name_flag = false;
  bool index_flag = false;
  bool socket_flag = false;
  ArgReader reader(args, kNriFlags);
  for (;;) {
    auto next = reader.Next();
    if (!next) return next.error();
    if (!*next) break;
    const ArgItem& a = **next;
    if (a.Is("--help")) {
      out.mode = NriMode::kHelp;
      return out;
    }
    if (a.Is("--version")) {
      out.mode = NriMode::kVersion;
      return out;
    }
    if (!a.flag) return MakeError("unexpected argument " + Quote(a.value));
    if (a.Is("--config")) {
      out.config = a.value;
    } else if (a.Is("--socket")) {
      out.socket = a.value;
      socket_flag = true;
    } else if (a.Is("--status-file")) {
      out.status_file = a.value;
    } else if (a.Is("--name")) {
      out.name = a.value;
      name_flag = true;
    } else {
      out.index = a.value;
      index_flag = true;
    }
  }
  if (auto fd = env("NRI_PLUGIN_SOCKET"); fd && !socket_flag) {
    const std::string& v = *fd;
    if (v.empty() || v.size() > 4 ||
        !std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
      return MakeError("NRI_PLUGIN_SOCKET " + Quote(v) + ": not a file descriptor number");
    }
    out.socket_fd = std::stoi(v);
    if (auto n = env("NRI_PLUGIN_NAME"); n && !name_flag) out.name = *n;
    if (auto n = env("NRI_PLUGIN_IDX"); n && !index_flag) out.index = *n;
  }
  if (!ValidName(out.name)) {
    return MakeError("--name " + Quote(out.name) + ": use letters, digits, '-', '_' or '.'");
  }
  if (!ValidIndex(out.index)) {
    return MakeError("--index " + Quote(out.index) + ": must be two digits, e.g. 10");
  }
  return out;
}

}  // namespace ocirlimit::nri
