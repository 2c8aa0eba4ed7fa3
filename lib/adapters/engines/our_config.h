// oci-rlimit's own config as the programs on this node read it: the
// drop-ins of config.d in name order, then the file; and which file set
// the keys doctor reports ([runtime] runtimes, [hook] chain).
#pragma once

#include <string>
#include <vector>

#include "adapters/engines/chain.h"
#include "adapters/engines/node_files.h"
#include "adapters/engines/toml_read.h"
#include "core/config.h"

namespace ocirlimit::engines {

enum class OurConfigState { kParsed, kAbsent, kUnreadable, kInvalid };

struct OurConfig {
  OurConfigState state = OurConfigState::kAbsent;
  std::string path;        // the config file
  std::string dropin_dir;  // its config.d
  std::vector<ConfigText> files;
  std::string error;  // with kUnreadable (naming the file) and kInvalid
  std::string error_path;
  Config config;  // with kParsed
  WrapperSettings wrapper;
};

// `path` is the config file ("/etc/oci-rlimit/config.toml" by default).
OurConfig ReadOurConfig(NodeFiles& fs, const std::string& path);

// The last of `files` that sets `key` in `table`, or "".
std::string KeySource(const std::vector<ConfigText>& files, std::string_view table,
                      std::string_view key);

}  // namespace ocirlimit::engines
