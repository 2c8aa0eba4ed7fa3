// The bad-input catalogue (bad_input.h), oci-rlimit-nri: config errors, which
// end it with exit 2 before it connects.
#include <gtest/gtest.h>

#include "bad_input.h"

namespace ocirlimit::itest::badinput {
namespace {

// Its config: TOML nested past the guard, an unknown key.
std::vector<Case> Config() {
  return {
      {"NriConfigDeepDottedKey",
       Prog::kNri,
       2,
       {"config \"{config}\": line 1, column 200: keys nested deeper than 100 levels"},
       [](World& w) { WriteFile(w.config, DeepToml(60000) + " = 1\n"); }},
      {"NriConfigDeepHeaderInADropIn",
       Prog::kNri,
       2,
       {"config \"{dir}/config.d/50-deep.toml\"", "the limit is 100"},
       [](World& w) { DeepDropIn(w, "[" + DeepToml(80000) + "]\n"); }},
      {"NriConfigUnknownKey",
       Prog::kNri,
       2,
       {"{config}", "unknown key \"rlimit\""},
       [](World& w) { WriteFile(w.config, "rlimit = [\"memlock=1M\"]\n"); }},
  };
}

}  // namespace

std::vector<Case> NriCases() { return Join({Config()}); }

INSTANTIATE_TEST_SUITE_P(Nri, BadInput, ::testing::ValuesIn(NriCases()), CaseName);

}  // namespace ocirlimit::itest::badinput
