// ReadTrusted's last step (fs_ops.h), apart so that its own test can swap
// the file between the check and the read, as a racing writer would.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <string>

#include "formats/error.h"

namespace ocirlimit {

// The regular file `name` in the directory `dir`, checked through its
// O_PATH descriptor as `checked` already: opened to read (O_NONBLOCK) only
// now, and read only if it is still that file (device and inode), so a file
// renamed over it in between is never read. `path` names it in errors.
[[nodiscard]] Result<std::string> ReadIfStillChecked(int dir, const std::string& name,
                                                     const std::string& path,
                                                     const struct stat& checked, size_t max_bytes);

}  // namespace ocirlimit
