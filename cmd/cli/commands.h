// oci-rlimit's flow: RunCli reads argv (args.h) and runs the command's
// handler from the table; one file per command (cmd_validate.cc,
// cmd_explain.cc, cmd_doctor.cc, cmd_audit.cc, node_cmd.cc). Each prints a
// table, or JSON with --json, and returns the exit status: 0 fine, 1
// something is wrong, 2 usage.
#pragma once

#include <string>
#include <vector>

#include "cli/args.h"
#include "formats/error.h"

namespace ocirlimit::cli {

inline constexpr const char* kCliName = "oci-rlimit";

// argv without argv[0].
[[nodiscard]] int RunCli(const std::vector<std::string>& args);

// The handlers of the command table.
[[nodiscard]] int ValidateCommand(const CliArgs& a);
[[nodiscard]] int ExplainCommand(const CliArgs& a);
[[nodiscard]] int DoctorCommand(const CliArgs& a);
[[nodiscard]] int AuditCommand(const CliArgs& a);
[[nodiscard]] int NodeCommand(const std::vector<std::string>& args);  // node_cmd.cc

// "oci-rlimit: ERROR" on stderr (and {"ok": false, "error": ...} on stdout
// with --json); returns 1.
int ReportError(const CliArgs& a, const Error& e);

}  // namespace ocirlimit::cli
