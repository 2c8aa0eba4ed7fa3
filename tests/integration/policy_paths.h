// The policy tables' fixture (policy_test.cc, policy_trust_test.cc): one
// container run under real runc through each of oci-rlimit's entry points,
// and what its process reads from /proc/self/limits.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness.h"

namespace ocirlimit::itest {

// How the spec reaches oci-rlimit: the hook at createRuntime; the hook at
// precreate (the spec piped through it as podman does, then `runc run`); the
// wrapper's `run`; the wrapper's `exec` into a sleeping container the wrapper
// started with `run -d` (the exec'd process prints its limits).
enum class Path { kHook, kPrecreate, kWrapper, kWrapperExec };
void PrintTo(Path p, std::ostream* os);
std::string PathTestName(Path p);

inline constexpr Limit kHost{8 << 20, 8 << 20};

class PolicyTest : public ::testing::TestWithParam<Path> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Writes `toml` (LOG replaced by log_path()) with runc as the runtime.
  void UseConfig(std::string toml);
  std::string config_path() const { return dir_ / "config.toml"; }
  std::string log_path() const { return dir_ / "policy.log"; }

  // A fresh bundle whose process prints its limits (`cat /proc/self/limits`,
  // or whatever `edit` makes its args); `edit` changes the spec. `prefix`
  // goes before every runtime call (e.g. prlimit). out is what the process
  // printed, err every program's stderr.
  CmdResult RunContainer(const std::string& name, const std::function<void(Json&)>& edit,
                         const std::vector<std::string>& prefix = {});
  // RunContainer's memlock row; the run must succeed.
  std::optional<Limit> Memlock(const std::string& name, const std::function<void(Json&)>& edit,
                               const std::vector<std::string>& prefix = {});

  TempDir dir_;

 private:
  std::vector<std::string> Runtime(const std::string& program,
                                   const std::vector<std::string>& prefix) const;
  CmdResult Run(const std::vector<std::string>& argv, const std::string& stdin_data = "") const;
  CmdResult Precreate(const std::string& bundle, const Json& spec,
                      const std::vector<std::string>& prefix);
  CmdResult Exec(const std::string& name, const std::string& bundle, const Json& spec,
                 const std::vector<std::string>& prefix);

  std::vector<std::string> sleepers_;
};

inline void SetEnv(Json& spec, const std::string& entry) {
  spec["process"]["env"].push_back(entry);
}
inline void Annotate(Json& spec, const std::string& key, const std::string& value) {
  spec["annotations"][key] = value;
}
inline void Request(Json& spec, const std::string& value) {
  Annotate(spec, "oci-rlimit.io/rlimits", value);
}

}  // namespace ocirlimit::itest
