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

}  // namespace ocirlimit
