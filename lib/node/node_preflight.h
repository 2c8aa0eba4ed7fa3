// What `oci-rlimit node install` checks before it writes anything (issue 30:
// a refused run leaves the node byte for byte), and the leftovers of a run
// killed mid-write that the next run removes.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "formats/error.h"
#include "node/host_fs.h"

namespace ocirlimit::node {

// Each node path in `targets` (files the run may write) on root `host`:
// not a symlink, not something other than a regular file, in a directory
// (or the nearest existing ancestor) this process can write; each program
// in `sources` (real paths) readable. One line naming the first that fails.
// It only looks (`fs`): nothing is written.
[[nodiscard]] Status CheckWritable(HostFs& fs, const std::string& host,
                                   const std::vector<std::string>& targets,
                                   const std::vector<std::string>& sources);

// True for the name of AtomicWriteFile's temp file: ".oci-rlimit." and six
// letters or digits.
bool IsLeftoverTemp(const std::string& name);

// Removes leftover temp files from the directories of `targets` (node
// paths); prints "removed PATH (left by an interrupted run)" for each.
void RemoveLeftoverTemps(HostFs& fs, const std::string& host,
                         const std::vector<std::string>& targets, std::ostream& out);

}  // namespace ocirlimit::node
