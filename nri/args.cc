#include "nri/args.h"

#include <algorithm>
#include <cctype>

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
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      out.mode = NriMode::kHelp;
      return out;
    }
    if (a == "--version") {
      out.mode = NriMode::kVersion;
      return out;
    }
    std::string flag = a;
    std::optional<std::string> value;
    if (auto eq = a.find('='); a.starts_with("--") && eq != std::string::npos) {
      flag = a.substr(0, eq);
      value = a.substr(eq + 1);
    }
    if (flag != "--config" && flag != "--socket" && flag != "--name" && flag != "--index" &&
        flag != "--status-file") {
      if (a.starts_with("-")) return MakeError("unknown flag " + Quote(a));
      return MakeError("unexpected argument " + Quote(a));
    }
    if (!value) {
      if (i + 1 == args.size()) return MakeError(flag + ": missing value");
      value = args[++i];
    }
    if (value->empty()) return MakeError(flag + ": empty value");
    if (flag == "--config") {
      out.config = *value;
    } else if (flag == "--socket") {
      out.socket = *value;
      socket_flag = true;
    } else if (flag == "--status-file") {
      out.status_file = *value;
    } else if (flag == "--name") {
      out.name = *value;
      name_flag = true;
    } else {
      out.index = *value;
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
