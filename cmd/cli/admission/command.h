// `oci-rlimit admission-policy`: the handler the command table (../args.cc)
// runs, given the argv after its name.
#pragma once

#include <string>
#include <vector>

#include "formats/argv.h"

namespace ocirlimit::cli {

// 0 written, 1 an error (one line), 2 usage (admission_cmd.cc).
[[nodiscard]] int AdmissionPolicyCommand(const std::vector<std::string>& args);
// Its flags (--help aside): the table's (../args.cc), read by admission_args.cc.
inline constexpr FlagSpec kAdmissionFlags[] = {
    {.name = "--config", .metavar = "PATH"},
    {.name = "--actions", .metavar = "LIST"},
    {.name = "--namespace-selector", .metavar = "SEL"},
    {.name = "--object-selector", .metavar = "SEL"},
    {.name = "--ulimits-field"},
    {.name = "--name", .metavar = "NAME"},
    {.name = "--output", .metavar = "FILE"},
    {.name = "--check"},
};

}  // namespace ocirlimit::cli
