// The wrapper's loop guard with a stand-in for NVIDIA's runtime and real
// runc: oci-rlimit-runtime -> stand-in -> runc works and sets the limit;
// oci-rlimit-runtime -> stand-in -> oci-rlimit-runtime is refused at once with
// one line, instead of exec'ing around the circle forever.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "harness.h"

namespace ocirlimit::itest {
namespace {
namespace fs = std::filesystem;

class LoopGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OCI_RLIMIT_REQUIRE("runc");
    bundle_ = dir_ / "bundle";
    MakeBundle(bundle_, kCatLimits);
    // The stand-in logs its argv, then execs whatever NEXT names.
    standin_ = dir_ / "nvidia-container-runtime";
    WriteFile(standin_,
              "#!/bin/sh\necho \"$@\" >>" + (dir_ / "standin.log") + "\nexec \"$NEXT\" \"$@\"\n",
              0755);
    WriteFile(
        dir_ / "config.toml",
        "rlimits = [\"memlock=65536:65536\"]\n[runtime]\nruntimes = [\"" + standin_ + "\"]\n");
  }

  CmdResult Run(const std::string& next) {
    RunOptions opts;
    opts.env = {"OCI_RLIMIT_CONFIG=" + (dir_ / "config.toml"), "NEXT=" + next};
    opts.timeout_s = 20;
    return RunCmd({OurBinary("oci-rlimit-runtime"), "--root", dir_ / "state", "run", "--bundle",
                   bundle_, UniqueId("loop")},
                  opts);
  }

  TempDir dir_;
  std::string bundle_;
  std::string standin_;
};

TEST_F(LoopGuardTest, ChainThroughAnotherRuntimeWorks) {
  CmdResult r = Run(*Which("runc"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(MemlockOf(r), (Limit{65536, 65536}));
  EXPECT_NE(ReadFile(dir_ / "standin.log").find("run --bundle"), std::string::npos);
}

TEST_F(LoopGuardTest, ALoopBackToTheWrapperIsRefusedWithOneLine) {
  auto start = std::chrono::steady_clock::now();
  CmdResult r = Run(OurBinary("oci-rlimit-runtime"));
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_EQ(r.err,
            "oci-rlimit-runtime: loop: called again under OCI_RLIMIT_RUNTIME_EXECED=\"" + standin_ +
                "\": oci-rlimit-runtime exec'd \"" + standin_ +
                "\", which ran oci-rlimit-runtime again; point that runtime at runc (its own "
                "runtimes setting), not at oci-rlimit-runtime\n");
  // Around the circle once: the stand-in ran one time.
  EXPECT_EQ(ReadFile(dir_ / "standin.log").size(), ReadFile(dir_ / "standin.log").find('\n') + 1);
  EXPECT_FALSE(fs::exists(dir_ / "state")) << "runc never ran";
}

}  // namespace
}  // namespace ocirlimit::itest
