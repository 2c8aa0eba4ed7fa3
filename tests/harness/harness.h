// Shared plumbing for the integration tests: run real programs, build busybox
// bundles, read what a container saw in /proc/self/limits. Tests that need a
// real runtime skip when it is missing, unless OCI_RLIMIT_REQUIRE_RUNTIMES=1
// (set by CI), where a missing runtime is a failure.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tests/testing/temp_dir.h"

namespace ocirlimit::itest {

using Json = nlohmann::ordered_json;

struct RunOptions {
  std::string stdin_data;
  std::vector<std::string> env;  // extra NAME=VALUE entries on top of ours
  std::string cwd;
  int timeout_s = 120;
};

struct CmdResult {
  int status = -1;  // exit code, or 128 + signal
  std::string out;
  std::string err;
};

CmdResult RunCmd(const std::vector<std::string>& argv, const RunOptions& opts = {});
// Runs `sh -c script`.
CmdResult Sh(const std::string& script, const RunOptions& opts = {});

// The unit tests' TempDir (oci-rlimit-test.XXXXXX), which also unmounts
// anything under it before it is removed: dockerd and podman can leave
// mounts under their data dirs.
class TempDir : public testsupport::TempDir {
 public:
  TempDir() : testsupport::TempDir("test") {}
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& content, mode_t mode = 0644);

// The build tree's copy of one of our executables, e.g. "oci-rlimit-hook".
// OCI_RLIMIT_TEST_BIN_DIR, when set, replaces the build's bin dir.
std::string OurBinary(const std::string& name);

// Full path of a program on PATH, or nullopt.
std::optional<std::string> Which(const std::string& program);
// Why a test cannot run here ("runc not installed", "not root"), or nullopt.
std::optional<std::string> MissingPrerequisite(const std::vector<std::string>& programs);
bool RuntimesRequired();

// Skips (or, under CI, fails) the current test when a program is missing.
#define OCI_RLIMIT_REQUIRE(...)                                               \
  do {                                                                        \
    if (auto why_ = ::ocirlimit::itest::MissingPrerequisite({__VA_ARGS__})) { \
      if (::ocirlimit::itest::RuntimesRequired()) FAIL() << *why_;            \
      GTEST_SKIP() << *why_;                                                  \
    }                                                                         \
  } while (0)

// A busybox-static rootfs in dir/rootfs with sh, cat, grep, sleep and friends.
std::string MakeRootfs(const std::string& dir);

// A bundle in `dir`: rootfs plus a config.json from `runc spec`, set up to
// run `args` without a terminal. Returns the spec for further edits; call
// WriteSpec to save it.
Json MakeBundle(const std::string& dir, const std::vector<std::string>& args);
void WriteSpec(const std::string& bundle, const Json& spec);
Json ReadSpec(const std::string& bundle);

// A hook entry for spec.hooks.<stage>.
Json HookEntry(const std::string& path, const std::vector<std::string>& args,
               const std::vector<std::string>& env = {});

// The crun binary wrapped for this sandbox's hybrid cgroup layout (see
// docs/daemons-testing.md): a private mount namespace without the
// cgroup2 mount. On a pure cgroup v1 or v2 host it is plain crun.
std::string CrunCommand(const std::string& dir);

struct Limit {
  uint64_t soft = 0;
  uint64_t hard = 0;
  bool operator==(const Limit&) const = default;
};
// The /proc/PID/limits row every test reads, and the command that prints it.
inline constexpr const char* kMemlock = "Max locked memory";
inline const std::vector<std::string> kCatLimits = {"cat", "/proc/self/limits"};

// Parses one row of /proc/PID/limits text, e.g. "Max locked memory".
std::optional<Limit> LimitRow(const std::string& limits_text, const std::string& row);

// `text` with every \" turned back into ": an error message as a daemon
// (docker, containerd, CRI) shows it, quoted once more inside its own.
std::string Unescaped(std::string text);
std::string FormatLimit(const std::optional<Limit>& l);
// The memlock row of a command's output, failing the test if the command failed.
std::optional<Limit> MemlockOf(const CmdResult& r);
inline std::ostream& operator<<(std::ostream& os, const Limit& l) {
  return os << l.soft << ":" << l.hard;
}

// A container id unique to this test process.
std::string UniqueId(const std::string& prefix);

}  // namespace ocirlimit::itest
