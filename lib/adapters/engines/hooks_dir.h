// The hooks directories CRI-O and podman read, and the config files they
// read them from. CRI-O: `[crio.runtime] hooks_dir` in /etc/crio/crio.conf,
// then every file in /etc/crio/crio.conf.d in name order (whatever its
// suffix). podman: `[engine] hooks_dir` in /usr/share/containers/
// containers.conf, /etc/containers/containers.conf, then
// /etc/containers/containers.conf.d/*.conf. The last file that sets it
// wins; with none, both read kStockHooksDir only (checked against podman
// 4.3.1 and CRI-O 1.31's `crio config`; /etc/containers/oci/hooks.d is not
// read).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "adapters/engines/constants.h"
#include "adapters/engines/node_files.h"
#include "adapters/engines/toml_read.h"
#include "formats/error.h"

namespace ocirlimit::engines {

struct HooksDirSetting {
  std::vector<std::string> dirs = {std::string(kStockHooksDir)};
  std::string source;  // the file that set hooks_dir, or "" for the default
};

// `table` is where hooks_dir lives: {"crio", "runtime"} or {"engine"}.
[[nodiscard]] Result<HooksDirSetting> HooksDirFromConfigs(const std::vector<ConfigText>& files,
                                                          const std::vector<std::string>& table);

// `paths`, then every file in each of `dirs` (name order) whose name ends
// with `suffix` ("" for any): an engine's config files, as it reads them.
// Missing files are skipped.
std::vector<ConfigText> ReadConfigFiles(NodeFiles& fs, const std::vector<std::string>& paths,
                                        const std::vector<std::string>& dirs,
                                        std::string_view suffix);

// podman's containers.conf files, in the order it reads them.
std::vector<ConfigText> PodmanConfigFiles(NodeFiles& fs);

}  // namespace ocirlimit::engines
