// The node's files as the node model reads them: a real root, a fixture
// root under a directory, or a fake in a test. Paths are node paths
// ("/etc/containerd/config.toml").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "formats/error.h"

namespace ocirlimit {

class NodeFiles {
 public:
  virtual ~NodeFiles() = default;
  // Missing files are errors with err == ENOENT.
  virtual Result<std::string> ReadFile(const std::string& path) = 0;
  // Sorted names in a directory; empty when it is missing.
  virtual std::vector<std::string> ListDir(const std::string& path) = 0;
  // The node path a symlink chain ends at, or nullopt.
  virtual std::optional<std::string> Resolve(const std::string& path) = 0;
  // As a runtime's execvp would find `name` with PATH=`path_list`: an
  // absolute name as is, a bare name in each absolute directory; the node
  // path of the first executable regular file, or nullopt.
  virtual std::optional<std::string> WhichIn(const std::string& name,
                                             const std::string& path_list) = 0;
};

}  // namespace ocirlimit
