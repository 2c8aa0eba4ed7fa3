#include "cli/admission/admission_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>
#include <string>

#include "adapters/k8s/admission_policy.h"
#include "core/policy_digest.h"

namespace ocirlimit::cli {
namespace {

Config Parse(const std::string& text) {
  auto c = ParseConfig(text, "fleet.toml");
  EXPECT_TRUE(c.ok()) << c.error().Text();
  return c.ok() ? *c : Config{};
}

const Config kOld =
    Parse("[requests]\nenabled = true\nceilings = [\"memlock=64M\"]\nover-ceiling = \"reject\"\n");
const Config kNew =
    Parse("[requests]\nenabled = true\nceilings = [\"memlock=8M\"]\nover-ceiling = \"reject\"\n");

struct Ran {
  int rc;
  std::string out, err;
};

// The check with `input` on its stdin (a pipe, as `kubectl get ... |` gives it).
Ran Check(const Config& cfg, const std::string& input) {
  int p[2];
  EXPECT_EQ(pipe(p), 0);
  EXPECT_EQ(write(p[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
  close(p[1]);
  std::ostringstream out, err;
  const int rc = CheckAdmissionPolicy(cfg, "fleet.toml", p[0], out, err);
  close(p[0]);
  return {rc, out.str(), err.str()};
}

std::string Policy(const Config& cfg) {
  auto y = k8s::AdmissionPolicyYaml(cfg, k8s::PolicyOptions{});
  EXPECT_TRUE(y.ok()) << y.error().Text();
  return y.ok() ? *y : "";
}

// The policy made from the file is current; made from the old file it is stale, and the line
// names the old digest and the new one.
TEST(AdmissionCheck, CurrentForThePolicyMadeFromTheFileStaleForAnOlderOne) {
  Ran same = Check(kNew, Policy(kNew));
  EXPECT_EQ(same.rc, 0) << same.err;
  EXPECT_NE(same.out.find("current: "), std::string::npos) << same.out;
  Ran old = Check(kNew, Policy(kOld));
  EXPECT_EQ(old.rc, 1);
  EXPECT_NE(old.err.find("stale: "), std::string::npos) << old.err;
  EXPECT_NE(old.err.find(PolicyDigest(kOld)), std::string::npos) << old.err;
  EXPECT_NE(old.err.find(PolicyDigest(kNew)), std::string::npos) << old.err;
  EXPECT_EQ(old.err.find('\n'), old.err.size() - 1) << "one line";
}

TEST(AdmissionCheck, NoPolicyOnStdinIsSaid) {
  Ran none = Check(kNew, "apiVersion: v1\nitems: []\nkind: List\n");
  EXPECT_EQ(none.rc, 1);
  EXPECT_NE(none.err.find("stdin holds no oci-rlimit.io/policy-digest annotation"),
            std::string::npos)
      << none.err;
}

}  // namespace
}  // namespace ocirlimit::cli
