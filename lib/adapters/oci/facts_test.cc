#include "adapters/oci/facts.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/pod_dispute.h"
#include "tests/testing/case_name.h"

namespace ocirlimit {
namespace {

// --- Facts from a spec ----------------------------------------------------------

TEST(FactsFromSpec, ReadsAnnotationsEnvAndDevices) {
  auto spec = ParseJsonObject(R"({"annotations":{"a":"1"},
    "process":{"env":["PATH=/bin","X=1"]},
    "linux":{"devices":[{"path":"/dev/infiniband/uverbs0","type":"c"}]}})",
                              "spec");
  ASSERT_TRUE(spec.ok());
  auto f = FactsFromSpec(*spec);
  ASSERT_TRUE(f.ok()) << f.error().Text();
  EXPECT_EQ(f->annotations.at("a"), "1");
  EXPECT_EQ(f->env, (std::vector<std::string>{"PATH=/bin", "X=1"}));
  EXPECT_EQ(f->devices, (std::vector<std::string>{"/dev/infiniband/uverbs0"}));
}

struct PodSpec {
  std::string name;
  std::string json;
  std::string ns;     // "-": unset
  std::string doubt;  // a substring of DisputesText(disputes); empty: none
};
class FactsPodFromSpec : public ::testing::TestWithParam<PodSpec> {};

TEST_P(FactsPodFromSpec, OnlyFromTheRuntimesOwnAnnotations) {
  auto spec = ParseJsonObject(GetParam().json, "spec");
  ASSERT_TRUE(spec.ok());
  auto f = FactsFromSpec(*spec);
  ASSERT_TRUE(f.ok()) << f.error().Text();
  EXPECT_EQ(f->pod_namespace.value_or("-"), GetParam().ns);
  const std::string disputes = DisputesText(f->disputes);
  if (GetParam().doubt.empty()) {
    EXPECT_EQ(disputes, "");
  } else {
    EXPECT_NE(disputes.find(GetParam().doubt), std::string::npos) << disputes;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Facts, FactsPodFromSpec,
    ::testing::Values(PodSpec{"NoAnnotations", R"({"process":{"env":["X=1"]}})", "-", ""},
                      PodSpec{"Containerd",
                              R"({"annotations":{"io.kubernetes.cri.sandbox-namespace":"ml",
                    "io.kubernetes.cri.sandbox-name":"p"}})",
                              "ml", ""},
                      PodSpec{"Crio",
                              R"({"annotations":{"io.kubernetes.pod.namespace":"ml",
                    "io.kubernetes.pod.name":"p"}})",
                              "ml", ""},
                      PodSpec{"Disagree",
                              R"({"annotations":{"io.kubernetes.cri.sandbox-namespace":"default",
                    "io.kubernetes.pod.namespace":"gpu"}})",
                              "-", "\"gpu\""},
                      // An env entry of the same name is no annotation.
                      PodSpec{"EnvIsNotTheNamespace",
                              R"({"process":{"env":["io.kubernetes.pod.namespace=gpu"]}})", "-",
                              ""}),
    CaseName{});

struct BadSpec {
  std::string name;
  std::string json;
  std::string error;
};
class FactsFromBadSpec : public ::testing::TestWithParam<BadSpec> {};

TEST_P(FactsFromBadSpec, NamesTheField) {
  auto spec = ParseJsonObject(GetParam().json, "spec");
  ASSERT_TRUE(spec.ok());
  auto f = FactsFromSpec(*spec);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().Text().find(GetParam().error), std::string::npos) << f.error().Text();
}

INSTANTIATE_TEST_SUITE_P(
    Facts, FactsFromBadSpec,
    ::testing::Values(BadSpec{"AnnotationNotString", R"({"annotations":{"a":1}})",
                              "annotations.\"a\": not a string"},
                      BadSpec{"EnvNotArray", R"({"process":{"env":"X=1"}})",
                              "process.env: must be an array"},
                      BadSpec{"DeviceWithoutPath", R"({"linux":{"devices":[{"type":"c"}]}})",
                              "linux.devices[0].path"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ocirlimit
