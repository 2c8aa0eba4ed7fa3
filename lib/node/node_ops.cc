#include "node/node_ops.h"

#include <cctype>
#include <sstream>

namespace ocirlimit {

std::string VersionNumber(const std::string& version_output) {
  std::string first = version_output.substr(0, version_output.find('\n'));
  // The first word that starts with a digit and has a dot: "1.1.5", "20.10.24,".
  std::istringstream words(first);
  std::string w;
  while (words >> w) {
    if (!w.empty() && w.front() == 'v') w.erase(0, 1);
    while (!w.empty() && !std::isalnum(static_cast<unsigned char>(w.back()))) w.pop_back();
    if (!w.empty() && std::isdigit(static_cast<unsigned char>(w.front())) &&
        w.find('.') != std::string::npos) {
      return w;
    }
  }
  return "";
}

std::string NodePidNamespace(const std::string& init, const std::string& self, bool own_root) {
  if (!init.empty()) return init;
  return own_root ? self : std::string();
}

bool InNamespace(const std::string& theirs, const std::string& node) {
  return !theirs.empty() && theirs == node;
}

bool NodeMountNamespace(const std::string& theirs, const std::string& init) {
  return init.empty() || InNamespace(theirs, init);
}

bool ServesNode(const RunningProcess& p) {
  return p.root_uid && p.host_pid_namespace && p.node_mount_namespace && p.exe_root_owned &&
         p.exe_dir_root_owned;
}

}  // namespace ocirlimit
