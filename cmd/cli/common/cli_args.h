// What every command family of oci-rlimit shares (the folders below cmd/cli/
// include this, never the table above them): the parsed argv (`CliArgs`,
// read by ../args.h's table) and the one error report.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "formats/error.h"

namespace ocirlimit::cli {

inline constexpr const char* kCliName = "oci-rlimit";

enum class CliMode { kRun, kHelp, kVersion };

struct CliArgs {
  CliMode mode = CliMode::kRun;
  std::string command;  // a name from Commands(); empty for --help and --version
  std::optional<std::string> config;
  std::string bundle;
  std::string root = "/";
  std::vector<std::string> runtime_roots;
  bool json = false;
  bool heal = false;
  bool policy_now = false;  // audit: judge by the policy now, not the recorded decisions
  bool no_default_roots = false;
  bool all = false;             // audit: every container, whatever the install governs
  bool no_trunc = false;        // audit: whole ids in the table
  std::string containerd_root;  // audit: containerd's root; "" for /var/lib/containerd
  // audit: "text", "json" or "prometheus" (--json is "json"); empty for
  // the other commands. --output: where prometheus goes (empty: stdout).
  std::string format;
  std::string output;
  std::string node_name;  // audit --format prometheus: the `node` label; "" for $NODE_NAME

  bool operator==(const CliArgs&) const = default;
};

// "oci-rlimit: ERROR" on stderr (and {"ok": false, "error": ...} on stdout
// with --json); returns 1.
int ReportError(const CliArgs& a, const Error& e);

}  // namespace ocirlimit::cli
