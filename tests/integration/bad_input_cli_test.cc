// The bad-input catalogue (bad_input.h), the admin CLI oci-rlimit: TOML
// nested past the guard (toml++ recursed once per level and crashed, rc 139)
// in the config `validate` reads and in the containerd config that
// `node containerd install|uninstall` edits, which stays byte-identical.
#include <gtest/gtest.h>

#include "bad_input.h"

namespace ocirlimit::itest::badinput {
namespace {

constexpr const char* kDeepDotted = "line 1, column 200: keys nested deeper than 100 levels";

// `oci-rlimit validate --config C`, C (or its config.d) nested past the guard.
std::vector<Case> Validate() {
  return {
      {"CliValidateConfigDeepDottedKey",
       Prog::kCli,
       1,
       {std::string("config \"{config}\": ") + kDeepDotted},
       [](World& w) { WriteFile(w.config, DeepToml(60000) + " = 1\n"); }},
      {"CliValidateConfigDeepHeader",
       Prog::kCli,
       1,
       {"config \"{config}\": line 2, column 201: keys nested deeper than 100 levels"},
       [](World& w) { WriteFile(w.config, "rlimits = []\n[" + DeepToml(80000) + "]\n"); }},
      {"CliValidateConfigDeepHeaderInADropIn",
       Prog::kCli,
       1,
       {"config \"{dir}/config.d/50-deep.toml\"", "the limit is 100"},
       [](World& w) { DeepDropIn(w, "[" + DeepToml(80000) + "]\n"); }},
  };
}

// `oci-rlimit node containerd ACTION --config F` with F nested past the guard.
void DeepContainerd(World& w, const std::string& action, const std::string& text) {
  const std::string config = w.dir / "containerd.toml";
  WriteFile(config, text);
  w.vars["{containerd}"] = config;
  w.args = {"node", "containerd", action, "--config", config};
  if (action == "install") w.args.insert(w.args.end(), {"--binary", "/usr/bin/oci-rlimit-runtime"});
}

std::vector<Case> NodeContainerd() {
  const std::string dotted = std::string("containerd config \"{containerd}\": ") + kDeepDotted;
  const std::string header =
      "containerd config \"{containerd}\": line 2, column 201: keys nested deeper than 100 levels";
  return {
      {"CliNodeContainerdInstallDeepDottedKey",
       Prog::kCli,
       1,
       {dotted},
       [](World& w) { DeepContainerd(w, "install", DeepToml(60000) + " = 1\n"); }},
      {"CliNodeContainerdInstallDeepHeader",
       Prog::kCli,
       1,
       {header},
       [](World& w) { DeepContainerd(w, "install", "version = 2\n[" + DeepToml(80000) + "]\n"); }},
      {"CliNodeContainerdUninstallDeepDottedKey",
       Prog::kCli,
       1,
       {dotted},
       [](World& w) { DeepContainerd(w, "uninstall", DeepToml(60000) + " = 1\n"); }},
      {"CliNodeContainerdUninstallDeepHeader",
       Prog::kCli,
       1,
       {header},
       [](World& w) {
         DeepContainerd(w, "uninstall", "version = 2\n[" + DeepToml(80000) + "]\n");
       }},
  };
}

}  // namespace

std::vector<Case> CliCases() { return Join({Validate(), NodeContainerd()}); }

INSTANTIATE_TEST_SUITE_P(Cli, BadInput, ::testing::ValuesIn(CliCases()), CaseName);

}  // namespace ocirlimit::itest::badinput
