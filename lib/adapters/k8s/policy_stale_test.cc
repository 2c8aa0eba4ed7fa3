#include "adapters/k8s/policy_stale.h"

#include <gtest/gtest.h>

#include <string>

namespace ocirlimit::k8s {
namespace {

const std::string kA(64, 'a');
const std::string kB = std::string(63, '0') + "b";

// What `kubectl get validatingadmissionpolicy -o yaml` prints after `kubectl apply`: the
// annotation, and again inside last-applied-configuration's JSON.
TEST(PolicyDigestsIn, ReadsKubectlsYamlAndTheLastAppliedJson) {
  const std::string yaml =
      "apiVersion: v1\nitems:\n- apiVersion: admissionregistration.k8s.io/v1\n"
      "  kind: ValidatingAdmissionPolicy\n  metadata:\n    annotations:\n"
      "      kubectl.kubernetes.io/last-applied-configuration: |\n"
      "        {\"metadata\":{\"annotations\":{\"oci-rlimit.io/policy-digest\":\"" +
      kB + "\"}}}\n      oci-rlimit.io/policy-digest: " + kA + "\n";
  EXPECT_EQ(PolicyDigestsIn(yaml), (std::vector<std::string>{kB, kA}));
  EXPECT_EQ(PolicyDigestsIn("    oci-rlimit.io/policy-digest: \"" + kA + "\"\n"),
            std::vector<std::string>{kA});
}

TEST(PolicyDigestsIn, LeavesOutWhatIsNotADigest) {
  for (const std::string& v :
       {kA.substr(1), kA + "a", kA + "x", std::string(64, 'A'), std::string(64, 'g')}) {
    EXPECT_TRUE(PolicyDigestsIn("oci-rlimit.io/policy-digest: " + v + "\n").empty()) << v;
  }
  EXPECT_TRUE(PolicyDigestsIn("oci-rlimit.io/policy-digest-old: " + kA + "\n").empty());
}

TEST(JudgeStaleness, CurrentOnlyWhenEveryDigestIsTheFiles) {
  EXPECT_EQ(JudgeStaleness({kA}, kA), Staleness::kCurrent);
  EXPECT_EQ(JudgeStaleness({kA, kB}, kA), Staleness::kStale);
  EXPECT_EQ(JudgeStaleness({kB}, kA), Staleness::kStale);
  EXPECT_EQ(JudgeStaleness({}, kA), Staleness::kNoPolicy);
}

}  // namespace
}  // namespace ocirlimit::k8s
