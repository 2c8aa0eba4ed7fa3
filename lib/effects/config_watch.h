// The config's files watched for a change, so a ConfigMap that kubelet
// updates in place (an atomic swap of its `..data` symlink) reaches the
// plugin without a SIGHUP or a restart (docs/guides/fleet-policy.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace ocirlimit {

// What the config's files are now: the file and each drop-in of its
// DropInDir, each by path, identity, size and times, symlinks followed; ""
// parts for what is missing. Any write, rename or symlink swap changes it.
std::string ConfigFilesSnapshot(const std::string& config_path);

// Says, at most once per `every_ms`, whether the snapshot differs from the
// one seen last (the first one is taken at construction).
class ConfigWatch {
 public:
  ConfigWatch(std::function<std::string()> snapshot, std::function<int64_t()> now_ms,
              int64_t every_ms);
  bool Changed();

 private:
  std::function<std::string()> snapshot_;
  std::function<int64_t()> now_ms_;
  int64_t every_ms_;
  int64_t last_check_ms_;
  std::string last_;
};

}  // namespace ocirlimit
