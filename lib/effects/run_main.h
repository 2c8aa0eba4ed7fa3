// Every program's main(): run its flow, and turn an exception that escaped it
// (nothing should throw, errors are values; but the library can: bad_alloc)
// into the one-line internal error instead of an abort.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ocirlimit {

// Returns fn()'s exit status, or 1 after "NAME: internal error: WHAT" on stderr.
[[nodiscard]] int RunMain(const char* name, const std::function<int()>& fn);

// argv without argv[0], as every program's flow takes it.
[[nodiscard]] std::vector<std::string> ArgsOf(int argc, char** argv);

}  // namespace ocirlimit
